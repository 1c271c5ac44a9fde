// Check-style corpus: elementwise f32 and i32 math.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @abs_f32_x() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant -3.5 : f32
  %c3 = arith.constant 0.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

util.func private @abs_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.5 : f32
  %c3 = arith.constant 0.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// math.absf, within IREE's default tolerances (atol 1e-4, rtol 0).
func.func @abs_f32() {
  %x = util.call @abs_f32_x() : () -> (tensor<4xf32>)
  %e = util.call @abs_f32_e() : () -> (tensor<4xf32>)
  %r = math.absf %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @exp_f32_x() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant 2.5 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

util.func private @exp_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.718282 : f32
  %c2 = arith.constant 0.36787942 : f32
  %c3 = arith.constant 12.182493 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// math.exp.
func.func @exp_f32() {
  %x = util.call @exp_f32_x() : () -> (tensor<4xf32>)
  %e = util.call @exp_f32_e() : () -> (tensor<4xf32>)
  %r = math.exp %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @tanh_f32_x() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -3.0 : f32
  %c1 = arith.constant -0.5 : f32
  %c2 = arith.constant 0.0 : f32
  %c3 = arith.constant 0.5 : f32
  %c4 = arith.constant 3.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %x : tensor<5xf32>
}

util.func private @tanh_f32_e() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -0.9950548 : f32
  %c1 = arith.constant -0.4621172 : f32
  %c2 = arith.constant 0.0 : f32
  %c3 = arith.constant 0.4621172 : f32
  %c4 = arith.constant 0.9950548 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %e : tensor<5xf32>
}

// math.tanh, odd around 0.
func.func @tanh_f32() {
  %x = util.call @tanh_f32_x() : () -> (tensor<5xf32>)
  %e = util.call @tanh_f32_e() : () -> (tensor<5xf32>)
  %r = math.tanh %x : tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @sqrt_f32_x() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 9.0 : f32
  %c4 = arith.constant 1000000.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %x : tensor<5xf32>
}

util.func private @sqrt_f32_e() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 1.4142135 : f32
  %c2 = arith.constant 0.5 : f32
  %c3 = arith.constant 3.0 : f32
  %c4 = arith.constant 1000.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %e : tensor<5xf32>
}

// math.sqrt with a relative tolerance only (atol 0, rtol 1e-6).
func.func @sqrt_f32() {
  %x = util.call @sqrt_f32_x() : () -> (tensor<5xf32>)
  %e = util.call @sqrt_f32_e() : () -> (tensor<5xf32>)
  %r = math.sqrt %x : tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  %r_atol = arith.constant 0.0 : f32
  %r_rtol = arith.constant 1.0e-06 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @add_mul_f32_a() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant -0.5 : f32
  %c5 = arith.constant 3.0 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %a : tensor<6xf32>
}

util.func private @add_mul_f32_b() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.5 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant -4.0 : f32
  %c4 = arith.constant 1.5 : f32
  %c5 = arith.constant 0.25 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %b : tensor<6xf32>
}

util.func private @add_mul_f32_e_bits() -> (tensor<6xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1077936128 : i32
  %c1 = arith.constant -2147483648 : i32
  %c2 = arith.constant -1103101952 : i32
  %c3 = arith.constant 0 : i32
  %c4 = arith.constant -1090519040 : i32
  %c5 = arith.constant 1092354048 : i32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i32, i32, i32, i32, i32, i32
  %e_bits = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi32>
  util.return %e_bits : tensor<6xi32>
}

// (a + b) * a, exactly; (-2 + 2) * -2 is -0, which expect_eq tells from +0 by its bytes.
func.func @add_mul_f32() {
  %a = util.call @add_mul_f32_a() : () -> (tensor<6xf32>)
  %b = util.call @add_mul_f32_b() : () -> (tensor<6xf32>)
  %e_bits = util.call @add_mul_f32_e_bits() : () -> (tensor<6xi32>)
  %s = arith.addf %a, %b : tensor<6xf32>
  %r = arith.mulf %s, %a : tensor<6xf32>
  %r_v = hal.tensor.export %r : tensor<6xf32> -> !hal.buffer_view
  %e = arith.bitcast %e_bits : tensor<6xi32> to tensor<6xf32>
  %e_v = hal.tensor.export %e : tensor<6xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @minmax_nan_f32_a() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 0x7FC00000 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %a : tensor<4xf32>
}

util.func private @minmax_nan_f32_b() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.5 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 1.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %b : tensor<4xf32>
}

util.func private @minmax_nan_f32_emx() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 0x7FC00000 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %emx = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %emx : tensor<4xf32>
}

util.func private @minmax_nan_f32_emn() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 0x7FC00000 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %emn = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %emn : tensor<4xf32>
}

// arith.maximumf / minimumf propagate NaN; expect_almost_eq takes NaN as equal to NaN.
func.func @minmax_nan_f32() {
  %a = util.call @minmax_nan_f32_a() : () -> (tensor<4xf32>)
  %b = util.call @minmax_nan_f32_b() : () -> (tensor<4xf32>)
  %emx = util.call @minmax_nan_f32_emx() : () -> (tensor<4xf32>)
  %emn = util.call @minmax_nan_f32_emn() : () -> (tensor<4xf32>)
  %mx = arith.maximumf %a, %b : tensor<4xf32>
  %mn = arith.minimumf %a, %b : tensor<4xf32>
  %mx_v = hal.tensor.export %mx : tensor<4xf32> -> !hal.buffer_view
  %mn_v = hal.tensor.export %mn : tensor<4xf32> -> !hal.buffer_view
  %emx_v = hal.tensor.export %emx : tensor<4xf32> -> !hal.buffer_view
  %emn_v = hal.tensor.export %emn : tensor<4xf32> -> !hal.buffer_view
  %mx_atol = arith.constant 1.0e-04 : f32
  %mx_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%mx_v, %emx_v, %mx_atol, %mx_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  %mn_atol = arith.constant 1.0e-04 : f32
  %mn_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%mn_v, %emn_v, %mn_atol, %mn_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @cmp_select_f32_a() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant 5.0 : f32
  %c4 = arith.constant 0.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %a : tensor<5xf32>
}

util.func private @cmp_select_f32_b() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant -2.0 : f32
  %c3 = arith.constant 5.0 : f32
  %c4 = arith.constant -0.5 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %b : tensor<5xf32>
}

util.func private @cmp_select_f32_e() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 1.0 : f32
  %c3 = arith.constant 10.0 : f32
  %c4 = arith.constant 0.5 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %e : tensor<5xf32>
}

// select(a > b, a - b, 2 * b): a cmpf mask chooses per element.
func.func @cmp_select_f32() {
  %a = util.call @cmp_select_f32_a() : () -> (tensor<5xf32>)
  %b = util.call @cmp_select_f32_b() : () -> (tensor<5xf32>)
  %e = util.call @cmp_select_f32_e() : () -> (tensor<5xf32>)
  %gt = arith.cmpf ogt, %a, %b : tensor<5xf32>
  %d = arith.subf %a, %b : tensor<5xf32>
  %m = arith.addf %b, %b : tensor<5xf32>
  %r = arith.select %gt, %d, %m : tensor<5xi1>, tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @int_arith_i32_a() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 7 : i32
  %c1 = arith.constant -8 : i32
  %c2 = arith.constant 100 : i32
  %c3 = arith.constant -1 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %a = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %a : tensor<4xi32>
}

util.func private @int_arith_i32_b() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %c1 = arith.constant 3 : i32
  %c2 = arith.constant 7 : i32
  %c3 = arith.constant 31 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %b = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %b : tensor<4xi32>
}

util.func private @int_arith_i32_one() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %bar = util.optimization_barrier %c0 : i32
  %one = tensor.from_elements %bar, %bar, %bar, %bar : tensor<4xi32>
  util.return %one : tensor<4xi32>
}

util.func private @int_arith_i32_er() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 17 : i32
  %c1 = arith.constant -28 : i32
  %c2 = arith.constant 750 : i32
  %c3 = arith.constant -32 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %er = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %er : tensor<4xi32>
}

util.func private @int_arith_i32_em() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant -2 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant -1 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %em = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %em : tensor<4xi32>
}

// a * b + (a >> 1) with an arithmetic shift, and remsi (the remainder takes the dividend's sign).
func.func @int_arith_i32() {
  %a = util.call @int_arith_i32_a() : () -> (tensor<4xi32>)
  %b = util.call @int_arith_i32_b() : () -> (tensor<4xi32>)
  %one = util.call @int_arith_i32_one() : () -> (tensor<4xi32>)
  %er = util.call @int_arith_i32_er() : () -> (tensor<4xi32>)
  %em = util.call @int_arith_i32_em() : () -> (tensor<4xi32>)
  %p = arith.muli %a, %b : tensor<4xi32>
  %h = arith.shrsi %a, %one : tensor<4xi32>
  %r = arith.addi %p, %h : tensor<4xi32>
  %m = arith.remsi %a, %b : tensor<4xi32>
  %r_v = hal.tensor.export %r : tensor<4xi32> -> !hal.buffer_view
  %m_v = hal.tensor.export %m : tensor<4xi32> -> !hal.buffer_view
  %er_v = hal.tensor.export %er : tensor<4xi32> -> !hal.buffer_view
  %em_v = hal.tensor.export %em : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %er_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%m_v, %em_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @casts_i32_f32_i() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -3 : i32
  %c1 = arith.constant 0 : i32
  %c2 = arith.constant 16777217 : i32
  %c3 = arith.constant 5 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %i = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %i : tensor<4xi32>
}

util.func private @casts_i32_f32_f() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.25 : f32
  %c1 = arith.constant -2.25 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 1000.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %f = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %f : tensor<4xf32>
}

util.func private @casts_i32_f32_eif() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -3.0 : f32
  %c1 = arith.constant 0.0 : f32
  %c2 = arith.constant 1.6777216e+7 : f32
  %c3 = arith.constant 5.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %eif = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %eif : tensor<4xf32>
}

util.func private @casts_i32_f32_efi() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %c1 = arith.constant -2 : i32
  %c2 = arith.constant 0 : i32
  %c3 = arith.constant 1000 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %efi = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %efi : tensor<4xi32>
}

// sitofp rounds 16777217 to the nearest f32 (16777216); fptosi truncates toward zero (inputs whose truncation is also their rounding: see the README on inline-static).
func.func @casts_i32_f32() {
  %i = util.call @casts_i32_f32_i() : () -> (tensor<4xi32>)
  %f = util.call @casts_i32_f32_f() : () -> (tensor<4xf32>)
  %eif = util.call @casts_i32_f32_eif() : () -> (tensor<4xf32>)
  %efi = util.call @casts_i32_f32_efi() : () -> (tensor<4xi32>)
  %if = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
  %fi = arith.fptosi %f : tensor<4xf32> to tensor<4xi32>
  %if_v = hal.tensor.export %if : tensor<4xf32> -> !hal.buffer_view
  %fi_v = hal.tensor.export %fi : tensor<4xi32> -> !hal.buffer_view
  %eif_v = hal.tensor.export %eif : tensor<4xf32> -> !hal.buffer_view
  %efi_v = hal.tensor.export %efi : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%if_v, %eif_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%fi_v, %efi_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @broadcast_add_f32_row() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %row = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %row : tensor<4xf32>
}

util.func private @broadcast_add_f32_col() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 10.0 : f32
  %c1 = arith.constant 20.0 : f32
  %c2 = arith.constant 30.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %col = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %col : tensor<3xf32>
}

util.func private @broadcast_add_f32_e() -> (tensor<3x4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 11.0 : f32
  %c1 = arith.constant 12.0 : f32
  %c2 = arith.constant 13.0 : f32
  %c3 = arith.constant 14.0 : f32
  %c4 = arith.constant 21.0 : f32
  %c5 = arith.constant 22.0 : f32
  %c6 = arith.constant 23.0 : f32
  %c7 = arith.constant 24.0 : f32
  %c8 = arith.constant 31.0 : f32
  %c9 = arith.constant 32.0 : f32
  %c10 = arith.constant 33.0 : f32
  %c11 = arith.constant 34.0 : f32
  %bar:12 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#10, %bar#11 : tensor<12xf32>
  %e_e = tensor.empty() : tensor<3x4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<3x4xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 4 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<12xf32>
    linalg.yield %e_x : f32
  } -> tensor<3x4xf32>
  util.return %e : tensor<3x4xf32>
}

// r[i][j] = col[i] + row[j]: a linalg.generic broadcasting both operands into a 3x4 result.
func.func @broadcast_add_f32() {
  %row = util.call @broadcast_add_f32_row() : () -> (tensor<4xf32>)
  %col = util.call @broadcast_add_f32_col() : () -> (tensor<3xf32>)
  %e = util.call @broadcast_add_f32_e() : () -> (tensor<3x4xf32>)
  %init = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%row, %col : tensor<4xf32>, tensor<3xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %r_v = hal.tensor.export %r : tensor<3x4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3x4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @powf_f32_x() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 9.0 : f32
  %c2 = arith.constant 0.5 : f32
  %c3 = arith.constant 10.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

util.func private @powf_f32_y() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant 0.5 : f32
  %c2 = arith.constant -2.0 : f32
  %c3 = arith.constant -1.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %y = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %y : tensor<4xf32>
}

util.func private @powf_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 8.0 : f32
  %c1 = arith.constant 3.0 : f32
  %c2 = arith.constant 4.0 : f32
  %c3 = arith.constant 0.1 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// math.powf with integral, fractional and negative exponents.
func.func @powf_f32() {
  %x = util.call @powf_f32_x() : () -> (tensor<4xf32>)
  %y = util.call @powf_f32_y() : () -> (tensor<4xf32>)
  %e = util.call @powf_f32_e() : () -> (tensor<4xf32>)
  %r = math.powf %x, %y : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}
