// Deliberately failing expectations: one or more per check function, for `ireeabi test`'s failure
// output (tests/modules/test_check_corpus.py). Not part of the passing corpus. Conventions: tests/support/check_corpus.py.
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @fail_expect_true_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

// expect_true on 0.
func.func @fail_expect_true() {
  %x = util.call @fail_expect_true_scalars() : () -> (i32)
  util.call @check.expect_true(%x) : (i32) -> ()
  return
}

util.func private @fail_expect_false_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

// expect_false on 3.
func.func @fail_expect_false() {
  %x = util.call @fail_expect_false_scalars() : () -> (i32)
  util.call @check.expect_false(%x) : (i32) -> ()
  return
}

util.func private @fail_expect_all_true_x() -> (tensor<3xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 3 : i32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xi32>
  util.return %x : tensor<3xi32>
}

// expect_all_true on x - 1 = [1, 0, 2]: element 1 is zero.
func.func @fail_expect_all_true() {
  %x = util.call @fail_expect_all_true_x() : () -> (tensor<3xi32>)
  %one_c = arith.constant 1 : i32
  %one_e = tensor.empty() : tensor<3xi32>
  %one = linalg.fill ins(%one_c : i32) outs(%one_e : tensor<3xi32>) -> tensor<3xi32>
  %y = arith.subi %x, %one : tensor<3xi32>
  %y_v = hal.tensor.export %y : tensor<3xi32> -> !hal.buffer_view
  util.call @check.expect_all_true(%y_v) : (!hal.buffer_view) -> ()
  return
}

util.func private @fail_expect_eq_x() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %x : tensor<3xf32>
}

util.func private @fail_expect_eq_e() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 7.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %e : tensor<3xf32>
}

// expect_eq of x + x = [2, 4, 6] against [2, 4, 7]: the contents differ.
func.func @fail_expect_eq() {
  %x = util.call @fail_expect_eq_x() : () -> (tensor<3xf32>)
  %e = util.call @fail_expect_eq_e() : () -> (tensor<3xf32>)
  %r = arith.addf %x, %x : tensor<3xf32>
  %r_v = hal.tensor.export %r : tensor<3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @fail_expect_eq_type_shape_x() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant 2 : i32
  %c2 = arith.constant 3 : i32
  %c3 = arith.constant 4 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %x : tensor<4xi32>
}

util.func private @fail_expect_eq_type_shape_e() -> (tensor<2x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 6.0 : f32
  %c3 = arith.constant 8.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  %e_e = tensor.empty() : tensor<2x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<2x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<4xf32>
    linalg.yield %e_x : f32
  } -> tensor<2x2xf32>
  util.return %e : tensor<2x2xf32>
}

// expect_eq of a 4xi32 against a 2x2xf32 holding other bytes: element types, shapes and contents differ.
func.func @fail_expect_eq_type_shape() {
  %x = util.call @fail_expect_eq_type_shape_x() : () -> (tensor<4xi32>)
  %e = util.call @fail_expect_eq_type_shape_e() : () -> (tensor<2x2xf32>)
  %r = arith.addi %x, %x : tensor<4xi32>
  %r_v = hal.tensor.export %r : tensor<4xi32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<2x2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @fail_expect_almost_eq_x() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %x : tensor<3xf32>
}

util.func private @fail_expect_almost_eq_e() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 9.01 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %e : tensor<3xf32>
}

// expect_almost_eq of x * x = [1, 4, 9] against [1, 4, 9.01] with IREE's default tolerances: index 2 is off by 0.01.
func.func @fail_expect_almost_eq() {
  %x = util.call @fail_expect_almost_eq_x() : () -> (tensor<3xf32>)
  %e = util.call @fail_expect_almost_eq_e() : () -> (tensor<3xf32>)
  %r = arith.mulf %x, %x : tensor<3xf32>
  %r_v = hal.tensor.export %r : tensor<3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @fail_expect_almost_eq_shape_x() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

util.func private @fail_expect_almost_eq_shape_e() -> (tensor<2x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 6.0 : f32
  %c3 = arith.constant 8.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  %e_e = tensor.empty() : tensor<2x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<2x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<4xf32>
    linalg.yield %e_x : f32
  } -> tensor<2x2xf32>
  util.return %e : tensor<2x2xf32>
}

// expect_almost_eq of a 4xf32 against a 2x2xf32 of the same values: the shapes differ, contents are not compared.
func.func @fail_expect_almost_eq_shape() {
  %x = util.call @fail_expect_almost_eq_shape_x() : () -> (tensor<4xf32>)
  %e = util.call @fail_expect_almost_eq_shape_e() : () -> (tensor<2x2xf32>)
  %r = arith.addf %x, %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<2x2xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}
