// Check-style corpus: element types i1, i8, i16, i64, f16, bf16, f64.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @i1_logic_a() -> (tensor<4xi1>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant true
  %c1 = arith.constant false
  %bar:2 = util.optimization_barrier %c0, %c1 : i1, i1
  %a = tensor.from_elements %bar#0, %bar#1, %bar#0, %bar#1 : tensor<4xi1>
  util.return %a : tensor<4xi1>
}

util.func private @i1_logic_b() -> (tensor<4xi1>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant true
  %c1 = arith.constant false
  %bar:2 = util.optimization_barrier %c0, %c1 : i1, i1
  %b = tensor.from_elements %bar#0, %bar#0, %bar#1, %bar#1 : tensor<4xi1>
  util.return %b : tensor<4xi1>
}

util.func private @i1_logic_e0() -> (tensor<4xi1>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant true
  %c1 = arith.constant false
  %bar:2 = util.optimization_barrier %c0, %c1 : i1, i1
  %e0 = tensor.from_elements %bar#0, %bar#1, %bar#1, %bar#1 : tensor<4xi1>
  util.return %e0 : tensor<4xi1>
}

util.func private @i1_logic_e1() -> (tensor<4xi1>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant false
  %c1 = arith.constant true
  %bar:2 = util.optimization_barrier %c0, %c1 : i1, i1
  %e1 = tensor.from_elements %bar#0, %bar#1, %bar#1, %bar#0 : tensor<4xi1>
  util.return %e1 : tensor<4xi1>
}

// andi / xori on i1 tensors (one byte per element in the buffer view).
func.func @i1_logic() {
  %a = util.call @i1_logic_a() : () -> (tensor<4xi1>)
  %b = util.call @i1_logic_b() : () -> (tensor<4xi1>)
  %e0 = util.call @i1_logic_e0() : () -> (tensor<4xi1>)
  %e1 = util.call @i1_logic_e1() : () -> (tensor<4xi1>)
  %r0 = arith.andi %a, %b : tensor<4xi1>
  %r0_v = hal.tensor.export %r0 : tensor<4xi1> -> !hal.buffer_view
  %r1 = arith.xori %a, %b : tensor<4xi1>
  %r1_v = hal.tensor.export %r1 : tensor<4xi1> -> !hal.buffer_view
  %e0_v = hal.tensor.export %e0 : tensor<4xi1> -> !hal.buffer_view
  %e1_v = hal.tensor.export %e1 : tensor<4xi1> -> !hal.buffer_view
  util.call @check.expect_eq(%r0_v, %e0_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%r1_v, %e1_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @i8_wrap_a() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 100 : i8
  %c1 = arith.constant -128 : i8
  %c2 = arith.constant 127 : i8
  %c3 = arith.constant 5 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %a : tensor<4xi8>
}

util.func private @i8_wrap_b() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 100 : i8
  %c1 = arith.constant -1 : i8
  %c2 = arith.constant 1 : i8
  %c3 = arith.constant -10 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %b : tensor<4xi8>
}

util.func private @i8_wrap_e0() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -56 : i8
  %c1 = arith.constant 127 : i8
  %c2 = arith.constant -128 : i8
  %c3 = arith.constant -5 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %e0 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %e0 : tensor<4xi8>
}

util.func private @i8_wrap_e1() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 16 : i8
  %c1 = arith.constant -128 : i8
  %c2 = arith.constant 127 : i8
  %c3 = arith.constant -50 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %e1 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %e1 : tensor<4xi8>
}

// i8 addition and multiplication wrap modulo 2^8.
func.func @i8_wrap() {
  %a = util.call @i8_wrap_a() : () -> (tensor<4xi8>)
  %b = util.call @i8_wrap_b() : () -> (tensor<4xi8>)
  %e0 = util.call @i8_wrap_e0() : () -> (tensor<4xi8>)
  %e1 = util.call @i8_wrap_e1() : () -> (tensor<4xi8>)
  %r0 = arith.addi %a, %b : tensor<4xi8>
  %r0_v = hal.tensor.export %r0 : tensor<4xi8> -> !hal.buffer_view
  %r1 = arith.muli %a, %b : tensor<4xi8>
  %r1_v = hal.tensor.export %r1 : tensor<4xi8> -> !hal.buffer_view
  %e0_v = hal.tensor.export %e0 : tensor<4xi8> -> !hal.buffer_view
  %e1_v = hal.tensor.export %e1 : tensor<4xi8> -> !hal.buffer_view
  util.call @check.expect_eq(%r0_v, %e0_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%r1_v, %e1_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @i16_ops_a() -> (tensor<4xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 300 : i16
  %c1 = arith.constant -32768 : i16
  %c2 = arith.constant 1000 : i16
  %c3 = arith.constant 7 : i16
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i16, i16, i16, i16
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi16>
  util.return %a : tensor<4xi16>
}

util.func private @i16_ops_b() -> (tensor<4xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 300 : i16
  %c1 = arith.constant 1 : i16
  %c2 = arith.constant -1000 : i16
  %c3 = arith.constant 3 : i16
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i16, i16, i16, i16
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi16>
  util.return %b : tensor<4xi16>
}

util.func private @i16_ops_e0() -> (tensor<4xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 24464 : i16
  %c1 = arith.constant -32768 : i16
  %c2 = arith.constant -16960 : i16
  %c3 = arith.constant 21 : i16
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i16, i16, i16, i16
  %e0 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi16>
  util.return %e0 : tensor<4xi16>
}

util.func private @i16_ops_e1() -> (tensor<4xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i16
  %c1 = arith.constant 32767 : i16
  %c2 = arith.constant 2000 : i16
  %c3 = arith.constant 4 : i16
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i16, i16, i16, i16
  %e1 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi16>
  util.return %e1 : tensor<4xi16>
}

// i16 multiplication and subtraction wrap modulo 2^16.
func.func @i16_ops() {
  %a = util.call @i16_ops_a() : () -> (tensor<4xi16>)
  %b = util.call @i16_ops_b() : () -> (tensor<4xi16>)
  %e0 = util.call @i16_ops_e0() : () -> (tensor<4xi16>)
  %e1 = util.call @i16_ops_e1() : () -> (tensor<4xi16>)
  %r0 = arith.muli %a, %b : tensor<4xi16>
  %r0_v = hal.tensor.export %r0 : tensor<4xi16> -> !hal.buffer_view
  %r1 = arith.subi %a, %b : tensor<4xi16>
  %r1_v = hal.tensor.export %r1 : tensor<4xi16> -> !hal.buffer_view
  %e0_v = hal.tensor.export %e0 : tensor<4xi16> -> !hal.buffer_view
  %e1_v = hal.tensor.export %e1 : tensor<4xi16> -> !hal.buffer_view
  util.call @check.expect_eq(%r0_v, %e0_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%r1_v, %e1_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @i64_wrap_a() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1099511627776 : i64
  %c1 = arith.constant -3 : i64
  %c2 = arith.constant 4611686018427387904 : i64
  %c3 = arith.constant 5 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %a : tensor<4xi64>
}

util.func private @i64_wrap_b() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i64
  %c1 = arith.constant 8589934592 : i64
  %c2 = arith.constant 4 : i64
  %c3 = arith.constant -7 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %b : tensor<4xi64>
}

util.func private @i64_wrap_e0() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3298534883328 : i64
  %c1 = arith.constant -25769803776 : i64
  %c2 = arith.constant 0 : i64
  %c3 = arith.constant -35 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %e0 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %e0 : tensor<4xi64>
}

util.func private @i64_wrap_e1() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1099511627779 : i64
  %c1 = arith.constant 8589934589 : i64
  %c2 = arith.constant 4611686018427387908 : i64
  %c3 = arith.constant -2 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %e1 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %e1 : tensor<4xi64>
}

// i64 beyond 32 bits; 2^62 * 4 wraps to 0.
func.func @i64_wrap() {
  %a = util.call @i64_wrap_a() : () -> (tensor<4xi64>)
  %b = util.call @i64_wrap_b() : () -> (tensor<4xi64>)
  %e0 = util.call @i64_wrap_e0() : () -> (tensor<4xi64>)
  %e1 = util.call @i64_wrap_e1() : () -> (tensor<4xi64>)
  %r0 = arith.muli %a, %b : tensor<4xi64>
  %r0_v = hal.tensor.export %r0 : tensor<4xi64> -> !hal.buffer_view
  %r1 = arith.addi %a, %b : tensor<4xi64>
  %r1_v = hal.tensor.export %r1 : tensor<4xi64> -> !hal.buffer_view
  %e0_v = hal.tensor.export %e0 : tensor<4xi64> -> !hal.buffer_view
  %e1_v = hal.tensor.export %e1 : tensor<4xi64> -> !hal.buffer_view
  util.call @check.expect_eq(%r0_v, %e0_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%r1_v, %e1_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @f64_math_x() -> (tensor<4xf64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.1 : f64
  %c1 = arith.constant 1.0e+300 : f64
  %c2 = arith.constant -2.5 : f64
  %c3 = arith.constant 0.3333333333333333 : f64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f64, f64, f64, f64
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf64>
  util.return %x : tensor<4xf64>
}

util.func private @f64_math_ey() -> (tensor<4xf64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.3 : f64
  %c1 = arith.constant 3.0e+300 : f64
  %c2 = arith.constant -6.5 : f64
  %c3 = arith.constant 2.0 : f64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f64, f64, f64, f64
  %ey = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf64>
  util.return %ey : tensor<4xf64>
}

util.func private @f64_math_ez() -> (tensor<4xf64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.2 : f64
  %c1 = arith.constant 2.0e+300 : f64
  %c2 = arith.constant -5.0 : f64
  %c3 = arith.constant 0.6666666666666666 : f64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f64, f64, f64, f64
  %ez = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf64>
  util.return %ez : tensor<4xf64>
}

// f64 stays f64 (--iree-input-demote-f64-to-f32=false): x * 3 + 1 within rtol 1e-12 (a fused multiply-add may round once), and x + x exactly.
func.func @f64_math() {
  %x = util.call @f64_math_x() : () -> (tensor<4xf64>)
  %ey = util.call @f64_math_ey() : () -> (tensor<4xf64>)
  %ez = util.call @f64_math_ez() : () -> (tensor<4xf64>)
  %three_c = arith.constant 3.0 : f64
  %three_e = tensor.empty() : tensor<4xf64>
  %three = linalg.fill ins(%three_c : f64) outs(%three_e : tensor<4xf64>) -> tensor<4xf64>
  %one_c = arith.constant 1.0 : f64
  %one_e = tensor.empty() : tensor<4xf64>
  %one = linalg.fill ins(%one_c : f64) outs(%one_e : tensor<4xf64>) -> tensor<4xf64>
  %m = arith.mulf %x, %three : tensor<4xf64>
  %y = arith.addf %m, %one : tensor<4xf64>
  %z = arith.addf %x, %x : tensor<4xf64>
  %y_v = hal.tensor.export %y : tensor<4xf64> -> !hal.buffer_view
  %z_v = hal.tensor.export %z : tensor<4xf64> -> !hal.buffer_view
  %ey_v = hal.tensor.export %ey : tensor<4xf64> -> !hal.buffer_view
  %ez_v = hal.tensor.export %ez : tensor<4xf64> -> !hal.buffer_view
  %y_atol = arith.constant 0.0 : f32
  %y_rtol = arith.constant 1.0e-12 : f32
  util.call @check.expect_almost_eq(%y_v, %ey_v, %y_atol, %y_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  util.call @check.expect_eq(%z_v, %ez_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @f64_sum_x() -> (tensor<10xf64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.1 : f64
  %bar = util.optimization_barrier %c0 : f64
  %x = tensor.from_elements %bar, %bar, %bar, %bar, %bar, %bar, %bar, %bar, %bar, %bar : tensor<10xf64>
  util.return %x : tensor<10xf64>
}

util.func private @f64_sum_e() -> (tensor<f64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f64
  %bar = util.optimization_barrier %c0 : f64
  %e = tensor.from_elements %bar : tensor<f64>
  util.return %e : tensor<f64>
}

// An f64 sum of ten 0.1s: 1 - 2^-53 or 1 depending on the order, within rtol 1e-12.
func.func @f64_sum() {
  %x = util.call @f64_sum_x() : () -> (tensor<10xf64>)
  %e = util.call @f64_sum_e() : () -> (tensor<f64>)
  %acc_c = arith.constant 0.0 : f64
  %acc_e = tensor.empty() : tensor<f64>
  %acc = linalg.fill ins(%acc_c : f64) outs(%acc_e : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<10xf64>) outs(%acc : tensor<f64>) {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    linalg.yield %t : f64
  } -> tensor<f64>
  %s_v = hal.tensor.export %s : tensor<f64> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<f64> -> !hal.buffer_view
  %s_atol = arith.constant 0.0 : f32
  %s_rtol = arith.constant 1.0e-12 : f32
  util.call @check.expect_almost_eq(%s_v, %e_v, %s_atol, %s_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @bf16_round_trip_x() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.3 : f32
  %c2 = arith.constant 0.001 : f32
  %c3 = arith.constant 65504.0 : f32
  %c4 = arith.constant 3.14159 : f32
  %c5 = arith.constant 1.0e+38 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %x : tensor<6xf32>
}

util.func private @bf16_round_trip_eb_bits() -> (tensor<6xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 16320 : i16
  %c1 = arith.constant -16365 : i16
  %c2 = arith.constant 14979 : i16
  %c3 = arith.constant 18304 : i16
  %c4 = arith.constant 16457 : i16
  %c5 = arith.constant 32406 : i16
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i16, i16, i16, i16, i16, i16
  %eb_bits = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi16>
  util.return %eb_bits : tensor<6xi16>
}

util.func private @bf16_round_trip_eback() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.296875 : f32
  %c2 = arith.constant 0.0009994507 : f32
  %c3 = arith.constant 65536.0 : f32
  %c4 = arith.constant 3.140625 : f32
  %c5 = arith.constant 9.96921e+37 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %eback = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %eback : tensor<6xf32>
}

// arith.truncf f32 -> bf16 rounds to nearest even (65504 becomes 65536); extf back is exact. The expected bf16 values are spelled as i16 bits: the VM has no bf16 constants.
func.func @bf16_round_trip() {
  %x = util.call @bf16_round_trip_x() : () -> (tensor<6xf32>)
  %eb_bits = util.call @bf16_round_trip_eb_bits() : () -> (tensor<6xi16>)
  %eback = util.call @bf16_round_trip_eback() : () -> (tensor<6xf32>)
  %b = arith.truncf %x : tensor<6xf32> to tensor<6xbf16>
  %back = arith.extf %b : tensor<6xbf16> to tensor<6xf32>
  %eb = arith.bitcast %eb_bits : tensor<6xi16> to tensor<6xbf16>
  %b_v = hal.tensor.export %b : tensor<6xbf16> -> !hal.buffer_view
  %eb_v = hal.tensor.export %eb : tensor<6xbf16> -> !hal.buffer_view
  %back_v = hal.tensor.export %back : tensor<6xf32> -> !hal.buffer_view
  %eback_v = hal.tensor.export %eback : tensor<6xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%b_v, %eb_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%back_v, %eback_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @f16_reverse_hb() -> (tensor<6xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 15360 : i16
  %c1 = arith.constant -16384 : i16
  %c2 = arith.constant 31743 : i16
  %c3 = arith.constant 1 : i16
  %c4 = arith.constant 13653 : i16
  %c5 = arith.constant -32768 : i16
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i16, i16, i16, i16, i16, i16
  %hb = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi16>
  util.return %hb : tensor<6xi16>
}

util.func private @f16_reverse_eb() -> (tensor<6xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -32768 : i16
  %c1 = arith.constant 13653 : i16
  %c2 = arith.constant 1 : i16
  %c3 = arith.constant 31743 : i16
  %c4 = arith.constant -16384 : i16
  %c5 = arith.constant 15360 : i16
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i16, i16, i16, i16, i16, i16
  %eb = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi16>
  util.return %eb : tensor<6xi16>
}

util.func private @f16_reverse_nb() -> (tensor<6xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -32768 : i16
  %c1 = arith.constant 13653 : i16
  %c2 = arith.constant 1 : i16
  %c3 = arith.constant 31743 : i16
  %c4 = arith.constant -16384 : i16
  %c5 = arith.constant 15361 : i16
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i16, i16, i16, i16, i16, i16
  %nb = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi16>
  util.return %nb : tensor<6xi16>
}

// f16 by its bits (i16 bitcast) and moved only (a reversal): inline-static cannot compute in f16. expect_eq on the exact bits, expect_almost_eq (atol 1e-3) against a copy one f16 ulp off at 1.0.
func.func @f16_reverse() {
  %hb = util.call @f16_reverse_hb() : () -> (tensor<6xi16>)
  %eb = util.call @f16_reverse_eb() : () -> (tensor<6xi16>)
  %nb = util.call @f16_reverse_nb() : () -> (tensor<6xi16>)
  %h = arith.bitcast %hb : tensor<6xi16> to tensor<6xf16>
  %rv_e = tensor.empty() : tensor<6xf16>
  %rv = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%rv_e : tensor<6xf16>) {
  ^bb0(%o: f16):
    %i = linalg.index 0 : index
    %j = affine.apply affine_map<(i) -> (5 - i)>(%i)
    %v = tensor.extract %h[%j] : tensor<6xf16>
    linalg.yield %v : f16
  } -> tensor<6xf16>
  %e = arith.bitcast %eb : tensor<6xi16> to tensor<6xf16>
  %n = arith.bitcast %nb : tensor<6xi16> to tensor<6xf16>
  %rv_v = hal.tensor.export %rv : tensor<6xf16> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<6xf16> -> !hal.buffer_view
  %n_v = hal.tensor.export %n : tensor<6xf16> -> !hal.buffer_view
  util.call @check.expect_eq(%rv_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  %rv_atol = arith.constant 1.0e-03 : f32
  %rv_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%rv_v, %n_v, %rv_atol, %rv_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @all_true_i8_i64_f64_x8() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i8
  %c1 = arith.constant -1 : i8
  %c2 = arith.constant 127 : i8
  %c3 = arith.constant -128 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %x8 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %x8 : tensor<4xi8>
}

util.func private @all_true_i8_i64_f64_x64() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1099511627776 : i64
  %c1 = arith.constant -1 : i64
  %c2 = arith.constant 1 : i64
  %c3 = arith.constant 7 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %x64 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %x64 : tensor<4xi64>
}

util.func private @all_true_i8_i64_f64_xf() -> (tensor<4xf64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0e-300 : f64
  %c1 = arith.constant -0.5 : f64
  %c2 = arith.constant 0x7FF0000000000000 : f64
  %c3 = arith.constant 2.0 : f64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f64, f64, f64, f64
  %xf = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf64>
  util.return %xf : tensor<4xf64>
}

// expect_all_true on i8 (x | 1), i64 (x + x, beyond 32 bits) and f64 (-x, with an infinity and a subnormal-free tiny value).
func.func @all_true_i8_i64_f64() {
  %x8 = util.call @all_true_i8_i64_f64_x8() : () -> (tensor<4xi8>)
  %x64 = util.call @all_true_i8_i64_f64_x64() : () -> (tensor<4xi64>)
  %xf = util.call @all_true_i8_i64_f64_xf() : () -> (tensor<4xf64>)
  %one8_c = arith.constant 1 : i8
  %one8_e = tensor.empty() : tensor<4xi8>
  %one8 = linalg.fill ins(%one8_c : i8) outs(%one8_e : tensor<4xi8>) -> tensor<4xi8>
  %y8 = arith.ori %x8, %one8 : tensor<4xi8>
  %y64 = arith.addi %x64, %x64 : tensor<4xi64>
  %yf = arith.negf %xf : tensor<4xf64>
  %y8_v = hal.tensor.export %y8 : tensor<4xi8> -> !hal.buffer_view
  %y64_v = hal.tensor.export %y64 : tensor<4xi64> -> !hal.buffer_view
  %yf_v = hal.tensor.export %yf : tensor<4xf64> -> !hal.buffer_view
  util.call @check.expect_all_true(%y8_v) : (!hal.buffer_view) -> ()
  util.call @check.expect_all_true(%y64_v) : (!hal.buffer_view) -> ()
  util.call @check.expect_all_true(%yf_v) : (!hal.buffer_view) -> ()
  return
}

util.func private @int_ext_trunc_x8() -> (tensor<4xi8>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -1 : i8
  %c1 = arith.constant 127 : i8
  %c2 = arith.constant -128 : i8
  %c3 = arith.constant 5 : i8
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i8, i8, i8, i8
  %x8 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi8>
  util.return %x8 : tensor<4xi8>
}

util.func private @int_ext_trunc_x64() -> (tensor<4xi64>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 65537 : i64
  %c1 = arith.constant -1 : i64
  %c2 = arith.constant 1099511627781 : i64
  %c3 = arith.constant -65536 : i64
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i64, i64, i64, i64
  %x64 = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi64>
  util.return %x64 : tensor<4xi64>
}

util.func private @int_ext_trunc_es() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -1 : i32
  %c1 = arith.constant 127 : i32
  %c2 = arith.constant -128 : i32
  %c3 = arith.constant 5 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %es = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %es : tensor<4xi32>
}

util.func private @int_ext_trunc_eu() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 255 : i32
  %c1 = arith.constant 127 : i32
  %c2 = arith.constant 128 : i32
  %c3 = arith.constant 5 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %eu = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %eu : tensor<4xi32>
}

util.func private @int_ext_trunc_et() -> (tensor<4xi16>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i16
  %c1 = arith.constant -1 : i16
  %c2 = arith.constant 5 : i16
  %c3 = arith.constant 0 : i16
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i16, i16, i16, i16
  %et = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi16>
  util.return %et : tensor<4xi16>
}

// extsi / extui i8 -> i32 and trunci i64 -> i16 (the low 16 bits).
func.func @int_ext_trunc() {
  %x8 = util.call @int_ext_trunc_x8() : () -> (tensor<4xi8>)
  %x64 = util.call @int_ext_trunc_x64() : () -> (tensor<4xi64>)
  %es = util.call @int_ext_trunc_es() : () -> (tensor<4xi32>)
  %eu = util.call @int_ext_trunc_eu() : () -> (tensor<4xi32>)
  %et = util.call @int_ext_trunc_et() : () -> (tensor<4xi16>)
  %s = arith.extsi %x8 : tensor<4xi8> to tensor<4xi32>
  %u = arith.extui %x8 : tensor<4xi8> to tensor<4xi32>
  %t = arith.trunci %x64 : tensor<4xi64> to tensor<4xi16>
  %s_v = hal.tensor.export %s : tensor<4xi32> -> !hal.buffer_view
  %u_v = hal.tensor.export %u : tensor<4xi32> -> !hal.buffer_view
  %t_v = hal.tensor.export %t : tensor<4xi16> -> !hal.buffer_view
  %es_v = hal.tensor.export %es : tensor<4xi32> -> !hal.buffer_view
  %eu_v = hal.tensor.export %eu : tensor<4xi32> -> !hal.buffer_view
  %et_v = hal.tensor.export %et : tensor<4xi16> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %es_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%u_v, %eu_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%t_v, %et_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
