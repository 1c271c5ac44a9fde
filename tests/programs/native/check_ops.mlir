// ireeabi's own check-module test program (tests/modules/test_check_module.py): a few functions per check
// function, declared on buffer views without the device argument (the inline models have none).
// Functions named *_fails hold one deliberately wrong expectation each.
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)

func.func @true_passes() {
  %c = arith.constant 3 : i32
  %b = util.optimization_barrier %c : i32
  util.call @check.expect_true(%b) : (i32) -> ()
  return
}

func.func @true_fails() {
  %c = arith.constant 0 : i32
  %b = util.optimization_barrier %c : i32
  util.call @check.expect_true(%b) : (i32) -> ()
  return
}

func.func @false_passes() {
  %c = arith.constant 0 : i32
  %b = util.optimization_barrier %c : i32
  util.call @check.expect_false(%b) : (i32) -> ()
  return
}

func.func @false_fails() {
  %c = arith.constant -7 : i32
  %b = util.optimization_barrier %c : i32
  util.call @check.expect_false(%b) : (i32) -> ()
  return
}

func.func @all_true_passes() {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant -2 : i32
  %c2 = arith.constant 3 : i32
  %cb:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %b = tensor.from_elements %cb#0, %cb#1, %cb#2 : tensor<3xi32>
  %v = hal.tensor.export %b : tensor<3xi32> -> !hal.buffer_view
  util.call @check.expect_all_true(%v) : (!hal.buffer_view) -> ()
  return
}

func.func @all_true_fails() {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant 0 : i32
  %c2 = arith.constant 3 : i32
  %c3 = arith.constant 0 : i32
  %cb:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %b = tensor.from_elements %cb#0, %cb#1, %cb#2, %cb#3 : tensor<4xi32>
  %v = hal.tensor.export %b : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_all_true(%v) : (!hal.buffer_view) -> ()
  return
}

func.func @eq_passes() {
  %a0 = arith.constant 1 : i32
  %a1 = arith.constant 2 : i32
  %a2 = arith.constant -3 : i32
  %ab:3 = util.optimization_barrier %a0, %a1, %a2 : i32, i32, i32
  %b = tensor.from_elements %ab#0, %ab#1, %ab#2 : tensor<3xi32>
  %s = arith.addi %b, %b : tensor<3xi32>
  %e0 = arith.constant 2 : i32
  %e1 = arith.constant 4 : i32
  %e2 = arith.constant -6 : i32
  %eb:3 = util.optimization_barrier %e0, %e1, %e2 : i32, i32, i32
  %e = tensor.from_elements %eb#0, %eb#1, %eb#2 : tensor<3xi32>
  %sv = hal.tensor.export %s : tensor<3xi32> -> !hal.buffer_view
  %ev = hal.tensor.export %e : tensor<3xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%sv, %ev) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

func.func @eq_fails() {
  %a0 = arith.constant 1.0 : f32
  %a1 = arith.constant 2.0 : f32
  %a2 = arith.constant 2.5 : f32
  %ab:3 = util.optimization_barrier %a0, %a1, %a2 : f32, f32, f32
  %b = tensor.from_elements %ab#0, %ab#1, %ab#1 : tensor<3xf32>
  %e = tensor.from_elements %ab#0, %ab#2, %ab#1 : tensor<3xf32>
  %bv = hal.tensor.export %b : tensor<3xf32> -> !hal.buffer_view
  %ev = hal.tensor.export %e : tensor<3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%bv, %ev) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

func.func @eq_shape_fails() {
  %a0 = arith.constant 5 : i32
  %a1 = arith.constant 6 : i32
  %ab:2 = util.optimization_barrier %a0, %a1 : i32, i32
  %b = tensor.from_elements %ab#0, %ab#1 : tensor<2xi32>
  %e = tensor.from_elements %ab#0, %ab#1, %ab#1 : tensor<3xi32>
  %bv = hal.tensor.export %b : tensor<2xi32> -> !hal.buffer_view
  %ev = hal.tensor.export %e : tensor<3xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%bv, %ev) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

func.func @almost_eq_passes() {
  %a0 = arith.constant 0.5 : f32
  %a1 = arith.constant 2.0 : f32
  %a2 = arith.constant -1.0 : f32
  %ab:3 = util.optimization_barrier %a0, %a1, %a2 : f32, f32, f32
  %b = tensor.from_elements %ab#0, %ab#1, %ab#2 : tensor<3xf32>
  %r = math.exp %b : tensor<3xf32>
  %e0 = arith.constant 1.6487213 : f32
  %e1 = arith.constant 7.389056 : f32
  %e2 = arith.constant 0.36787945 : f32
  %eb:3 = util.optimization_barrier %e0, %e1, %e2 : f32, f32, f32
  %e = tensor.from_elements %eb#0, %eb#1, %eb#2 : tensor<3xf32>
  %rv = hal.tensor.export %r : tensor<3xf32> -> !hal.buffer_view
  %ev = hal.tensor.export %e : tensor<3xf32> -> !hal.buffer_view
  %atol = arith.constant 1.0e-04 : f32
  %rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%rv, %ev, %atol, %rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

func.func @almost_eq_fails() {
  %a0 = arith.constant 1.0 : f32
  %a1 = arith.constant 2.0 : f32
  %a2 = arith.constant 3.0 : f32
  %a3 = arith.constant 4.0 : f32
  %a4 = arith.constant 3.01 : f32
  %ab:5 = util.optimization_barrier %a0, %a1, %a2, %a3, %a4 : f32, f32, f32, f32, f32
  %b = tensor.from_elements %ab#0, %ab#1, %ab#2, %ab#3 : tensor<4xf32>
  %e = tensor.from_elements %ab#0, %ab#1, %ab#4, %ab#3 : tensor<4xf32>
  %bv = hal.tensor.export %b : tensor<4xf32> -> !hal.buffer_view
  %ev = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %atol = arith.constant 1.0e-04 : f32
  %rtol = arith.constant 1.0e-03 : f32
  util.call @check.expect_almost_eq(%bv, %ev, %atol, %rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// expect_eq_const as the compiler lowers it: expect_eq against a constant operand.
func.func @eq_const_passes() {
  %a0 = arith.constant 7 : i8
  %a1 = arith.constant 8 : i8
  %ab:2 = util.optimization_barrier %a0, %a1 : i8, i8
  %b = tensor.from_elements %ab#0, %ab#1 : tensor<2xi8>
  %bv = hal.tensor.export %b : tensor<2xi8> -> !hal.buffer_view
  %k0 = arith.constant 7 : i8
  %k1 = arith.constant 8 : i8
  %kb:2 = util.optimization_barrier %k0, %k1 : i8, i8
  %k = tensor.from_elements %kb#0, %kb#1 : tensor<2xi8>
  %kv = hal.tensor.export %k : tensor<2xi8> -> !hal.buffer_view
  util.call @check.expect_eq(%bv, %kv) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// Several expectations in one function: every failure is recorded, the function runs on.
func.func @two_failures() {
  %z = arith.constant 0 : i32
  %o = arith.constant 1 : i32
  %bz = util.optimization_barrier %z : i32
  %bo = util.optimization_barrier %o : i32
  util.call @check.expect_true(%bz) : (i32) -> ()
  util.call @check.expect_true(%bo) : (i32) -> ()
  util.call @check.expect_false(%bo) : (i32) -> ()
  return
}
