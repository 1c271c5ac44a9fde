// Check-style corpus: elementwise f32 and i32 math.
// Conventions: tests/check_corpus.py. Expected values: tests/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

// math.absf, within IREE's default tolerances (atol 1e-4, rtol 0).
func.func @abs_f32() {
  %c0 = arith.constant -1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant -3.5 : f32
  %c3 = arith.constant 0.0 : f32
  %c4 = arith.constant 1.0 : f32
  %c5 = arith.constant 3.5 : f32
  %k:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xf32>
  %r = math.absf %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#4, %k#1, %k#5, %k#3 : tensor<4xf32>
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// math.exp.
func.func @exp_f32() {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant 2.5 : f32
  %c4 = arith.constant 2.718282 : f32
  %c5 = arith.constant 0.36787942 : f32
  %c6 = arith.constant 12.182493 : f32
  %k:7 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6 : f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xf32>
  %r = math.exp %x : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#1, %k#4, %k#5, %k#6 : tensor<4xf32>
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// math.tanh, odd around 0.
func.func @tanh_f32() {
  %c0 = arith.constant -3.0 : f32
  %c1 = arith.constant -0.5 : f32
  %c2 = arith.constant 0.0 : f32
  %c3 = arith.constant 0.5 : f32
  %c4 = arith.constant 3.0 : f32
  %c5 = arith.constant -0.9950548 : f32
  %c6 = arith.constant -0.4621172 : f32
  %c7 = arith.constant 0.4621172 : f32
  %c8 = arith.constant 0.9950548 : f32
  %k:9 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8 : f32, f32, f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %k#0, %k#1, %k#2, %k#3, %k#4 : tensor<5xf32>
  %r = math.tanh %x : tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#5, %k#6, %k#2, %k#7, %k#8 : tensor<5xf32>
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// math.sqrt with a relative tolerance only (atol 0, rtol 1e-6).
func.func @sqrt_f32() {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 9.0 : f32
  %c4 = arith.constant 1000000.0 : f32
  %c5 = arith.constant 1.4142135 : f32
  %c6 = arith.constant 0.5 : f32
  %c7 = arith.constant 3.0 : f32
  %c8 = arith.constant 1000.0 : f32
  %k:9 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8 : f32, f32, f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %k#0, %k#1, %k#2, %k#3, %k#4 : tensor<5xf32>
  %r = math.sqrt %x : tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#1, %k#5, %k#6, %k#7, %k#8 : tensor<5xf32>
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  %r_atol = arith.constant 0.0 : f32
  %r_rtol = arith.constant 1.0e-06 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// (a + b) * a, exactly; (-2 + 2) * -2 is -0, which expect_eq tells from +0 by its bytes.
func.func @add_mul_f32() {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant -0.5 : f32
  %c5 = arith.constant 3.0 : f32
  %c6 = arith.constant 0.5 : f32
  %c7 = arith.constant 2.0 : f32
  %c8 = arith.constant -1.0 : f32
  %c9 = arith.constant -4.0 : f32
  %c10 = arith.constant 1077936128 : i32
  %c11 = arith.constant -2147483648 : i32
  %c12 = arith.constant -1103101952 : i32
  %c13 = arith.constant 0 : i32
  %c14 = arith.constant -1090519040 : i32
  %c15 = arith.constant 1092354048 : i32
  %k:16 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, i32, i32
  %a = tensor.from_elements %k#0, %k#1, %k#2, %k#3, %k#4, %k#5 : tensor<6xf32>
  %b = tensor.from_elements %k#6, %k#7, %k#8, %k#9, %k#0, %k#2 : tensor<6xf32>
  %s = arith.addf %a, %b : tensor<6xf32>
  %r = arith.mulf %s, %a : tensor<6xf32>
  %r_v = hal.tensor.export %r : tensor<6xf32> -> !hal.buffer_view
  %e_bits = tensor.from_elements %k#10, %k#11, %k#12, %k#13, %k#14, %k#15 : tensor<6xi32>
  %e = arith.bitcast %e_bits : tensor<6xi32> to tensor<6xf32>
  %e_v = hal.tensor.export %e : tensor<6xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// arith.maximumf / minimumf propagate NaN; expect_almost_eq takes NaN as equal to NaN.
func.func @minmax_nan_f32() {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 0x7FC00000 : f32
  %c4 = arith.constant 0.5 : f32
  %c5 = arith.constant 4.0 : f32
  %k:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %a = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xf32>
  %b = tensor.from_elements %k#4, %k#5, %k#2, %k#0 : tensor<4xf32>
  %mx = arith.maximumf %a, %b : tensor<4xf32>
  %mn = arith.minimumf %a, %b : tensor<4xf32>
  %mx_v = hal.tensor.export %mx : tensor<4xf32> -> !hal.buffer_view
  %mn_v = hal.tensor.export %mn : tensor<4xf32> -> !hal.buffer_view
  %emx = tensor.from_elements %k#0, %k#5, %k#2, %k#3 : tensor<4xf32>
  %emx_v = hal.tensor.export %emx : tensor<4xf32> -> !hal.buffer_view
  %emn = tensor.from_elements %k#4, %k#1, %k#2, %k#3 : tensor<4xf32>
  %emn_v = hal.tensor.export %emn : tensor<4xf32> -> !hal.buffer_view
  %mx_atol = arith.constant 1.0e-04 : f32
  %mx_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%mx_v, %emx_v, %mx_atol, %mx_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  %mn_atol = arith.constant 1.0e-04 : f32
  %mn_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%mn_v, %emn_v, %mn_atol, %mn_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

// select(a > b, a - b, 2 * b): a cmpf mask chooses per element.
func.func @cmp_select_f32() {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant 5.0 : f32
  %c4 = arith.constant 0.0 : f32
  %c5 = arith.constant 2.0 : f32
  %c6 = arith.constant -2.0 : f32
  %c7 = arith.constant -0.5 : f32
  %c8 = arith.constant 4.0 : f32
  %c9 = arith.constant 10.0 : f32
  %c10 = arith.constant 0.5 : f32
  %k:11 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %a = tensor.from_elements %k#0, %k#1, %k#2, %k#3, %k#4 : tensor<5xf32>
  %b = tensor.from_elements %k#1, %k#5, %k#6, %k#3, %k#7 : tensor<5xf32>
  %gt = arith.cmpf ogt, %a, %b : tensor<5xf32>
  %d = arith.subf %a, %b : tensor<5xf32>
  %m = arith.addf %b, %b : tensor<5xf32>
  %r = arith.select %gt, %d, %m : tensor<5xi1>, tensor<5xf32>
  %r_v = hal.tensor.export %r : tensor<5xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#5, %k#8, %k#1, %k#9, %k#10 : tensor<5xf32>
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// a * b + (a >> 1) with an arithmetic shift, and remsi (the remainder takes the dividend's sign).
func.func @int_arith_i32() {
  %c0 = arith.constant 7 : i32
  %c1 = arith.constant -8 : i32
  %c2 = arith.constant 100 : i32
  %c3 = arith.constant -1 : i32
  %c4 = arith.constant 2 : i32
  %c5 = arith.constant 3 : i32
  %c6 = arith.constant 31 : i32
  %c7 = arith.constant 1 : i32
  %c8 = arith.constant 17 : i32
  %c9 = arith.constant -28 : i32
  %c10 = arith.constant 750 : i32
  %c11 = arith.constant -32 : i32
  %c12 = arith.constant -2 : i32
  %k:13 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
  %a = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xi32>
  %b = tensor.from_elements %k#4, %k#5, %k#0, %k#6 : tensor<4xi32>
  %one = tensor.from_elements %k#7, %k#7, %k#7, %k#7 : tensor<4xi32>
  %p = arith.muli %a, %b : tensor<4xi32>
  %h = arith.shrsi %a, %one : tensor<4xi32>
  %r = arith.addi %p, %h : tensor<4xi32>
  %m = arith.remsi %a, %b : tensor<4xi32>
  %r_v = hal.tensor.export %r : tensor<4xi32> -> !hal.buffer_view
  %m_v = hal.tensor.export %m : tensor<4xi32> -> !hal.buffer_view
  %er = tensor.from_elements %k#8, %k#9, %k#10, %k#11 : tensor<4xi32>
  %er_v = hal.tensor.export %er : tensor<4xi32> -> !hal.buffer_view
  %em = tensor.from_elements %k#7, %k#12, %k#4, %k#3 : tensor<4xi32>
  %em_v = hal.tensor.export %em : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %er_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%m_v, %em_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// sitofp rounds 16777217 to the nearest f32 (16777216); fptosi truncates toward zero (inputs whose truncation is also their rounding: see the README on inline-static).
func.func @casts_i32_f32() {
  %c0 = arith.constant -3 : i32
  %c1 = arith.constant 0 : i32
  %c2 = arith.constant 16777217 : i32
  %c3 = arith.constant 5 : i32
  %c4 = arith.constant 2.25 : f32
  %c5 = arith.constant -2.25 : f32
  %c6 = arith.constant 0.25 : f32
  %c7 = arith.constant 1000.0 : f32
  %c8 = arith.constant -3.0 : f32
  %c9 = arith.constant 0.0 : f32
  %c10 = arith.constant 1.6777216e+7 : f32
  %c11 = arith.constant 5.0 : f32
  %c12 = arith.constant 2 : i32
  %c13 = arith.constant -2 : i32
  %c14 = arith.constant 1000 : i32
  %k:15 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14 : i32, i32, i32, i32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32
  %i = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xi32>
  %f = tensor.from_elements %k#4, %k#5, %k#6, %k#7 : tensor<4xf32>
  %if = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
  %fi = arith.fptosi %f : tensor<4xf32> to tensor<4xi32>
  %if_v = hal.tensor.export %if : tensor<4xf32> -> !hal.buffer_view
  %fi_v = hal.tensor.export %fi : tensor<4xi32> -> !hal.buffer_view
  %eif = tensor.from_elements %k#8, %k#9, %k#10, %k#11 : tensor<4xf32>
  %eif_v = hal.tensor.export %eif : tensor<4xf32> -> !hal.buffer_view
  %efi = tensor.from_elements %k#12, %k#13, %k#1, %k#14 : tensor<4xi32>
  %efi_v = hal.tensor.export %efi : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%if_v, %eif_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%fi_v, %efi_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// r[i][j] = col[i] + row[j]: a linalg.generic broadcasting both operands into a 3x4 result.
func.func @broadcast_add_f32() {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant 10.0 : f32
  %c5 = arith.constant 20.0 : f32
  %c6 = arith.constant 30.0 : f32
  %c7 = arith.constant 11.0 : f32
  %c8 = arith.constant 12.0 : f32
  %c9 = arith.constant 13.0 : f32
  %c10 = arith.constant 14.0 : f32
  %c11 = arith.constant 21.0 : f32
  %c12 = arith.constant 22.0 : f32
  %c13 = arith.constant 23.0 : f32
  %c14 = arith.constant 24.0 : f32
  %c15 = arith.constant 31.0 : f32
  %c16 = arith.constant 32.0 : f32
  %c17 = arith.constant 33.0 : f32
  %c18 = arith.constant 34.0 : f32
  %k:19 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16, %c17, %c18 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %row = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xf32>
  %col = tensor.from_elements %k#4, %k#5, %k#6 : tensor<3xf32>
  %init = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%row, %col : tensor<4xf32>, tensor<3xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %r_v = hal.tensor.export %r : tensor<3x4xf32> -> !hal.buffer_view
  %e_flat = tensor.from_elements %k#7, %k#8, %k#9, %k#10, %k#11, %k#12, %k#13, %k#14, %k#15, %k#16, %k#17, %k#18 : tensor<12xf32>
  %e_e = tensor.empty() : tensor<3x4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<3x4xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 4 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<12xf32>
    linalg.yield %e_x : f32
  } -> tensor<3x4xf32>
  %e_v = hal.tensor.export %e : tensor<3x4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

// math.powf with integral, fractional and negative exponents.
func.func @powf_f32() {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 9.0 : f32
  %c2 = arith.constant 0.5 : f32
  %c3 = arith.constant 10.0 : f32
  %c4 = arith.constant 3.0 : f32
  %c5 = arith.constant -2.0 : f32
  %c6 = arith.constant -1.0 : f32
  %c7 = arith.constant 8.0 : f32
  %c8 = arith.constant 4.0 : f32
  %c9 = arith.constant 0.1 : f32
  %k:10 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %k#0, %k#1, %k#2, %k#3 : tensor<4xf32>
  %y = tensor.from_elements %k#4, %k#2, %k#5, %k#6 : tensor<4xf32>
  %r = math.powf %x, %y : tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e = tensor.from_elements %k#7, %k#4, %k#8, %k#9 : tensor<4xf32>
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}
