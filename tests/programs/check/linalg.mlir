// Check-style corpus: matmul and convolution.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @matmul_f32_scalars() -> (f32, f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 3.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  util.return %bar#0, %bar#1 : f32, f32
}

util.func private @matmul_f32_e() -> (tensor<4x3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 20.0 : f32
  %c1 = arith.constant -5.0 : f32
  %c2 = arith.constant 12.0 : f32
  %c3 = arith.constant 17.0 : f32
  %c4 = arith.constant 19.0 : f32
  %c5 = arith.constant -21.0 : f32
  %c6 = arith.constant -19.0 : f32
  %c7 = arith.constant 10.0 : f32
  %c8 = arith.constant -10.0 : f32
  %c9 = arith.constant -22.0 : f32
  %bar:10 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#2, %bar#8 : tensor<12xf32>
  %e_e = tensor.empty() : tensor<4x3xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<4x3xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 3 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<12xf32>
    linalg.yield %e_x : f32
  } -> tensor<4x3xf32>
  util.return %e : tensor<4x3xf32>
}

// linalg.matmul 4x8 * 8x3 on small integers: exact in f32 whatever the accumulation order.
func.func @matmul_f32() {
  %a_off, %b_off = util.call @matmul_f32_scalars() : () -> (f32, f32)
  %e = util.call @matmul_f32_e() : () -> (tensor<4x3xf32>)
  %a_e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%a_e : tensor<4x8xf32>) {
  ^bb0(%a_o: f32):
    %a_i0 = linalg.index 0 : index
    %a_i1 = linalg.index 1 : index
    %a_n = affine.apply affine_map<(d0, d1) -> (((d0 * 8 + d1) * 7) mod 11)>(%a_i0, %a_i1)
    %a_ni = arith.index_cast %a_n : index to i64
    %a_nf = arith.sitofp %a_ni : i64 to f32
    %a_x = arith.subf %a_nf, %a_off : f32
    linalg.yield %a_x : f32
  } -> tensor<4x8xf32>
  %b_e = tensor.empty() : tensor<8x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%b_e : tensor<8x3xf32>) {
  ^bb0(%b_o: f32):
    %b_i0 = linalg.index 0 : index
    %b_i1 = linalg.index 1 : index
    %b_n = affine.apply affine_map<(d0, d1) -> (((d0 * 3 + d1) * 5) mod 7)>(%b_i0, %b_i1)
    %b_ni = arith.index_cast %b_n : index to i64
    %b_nf = arith.sitofp %b_ni : i64 to f32
    %b_x = arith.subf %b_nf, %b_off : f32
    linalg.yield %b_x : f32
  } -> tensor<8x3xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r_v = hal.tensor.export %r : tensor<4x3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4x3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @matmul_i32_scalars() -> (i32, i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5 : i32
  %c1 = arith.constant 3 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  util.return %bar#0, %bar#1 : i32, i32
}

util.func private @matmul_i32_e() -> (tensor<4x3xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 20 : i32
  %c1 = arith.constant -5 : i32
  %c2 = arith.constant 12 : i32
  %c3 = arith.constant 17 : i32
  %c4 = arith.constant 19 : i32
  %c5 = arith.constant -21 : i32
  %c6 = arith.constant -19 : i32
  %c7 = arith.constant 10 : i32
  %c8 = arith.constant -10 : i32
  %c9 = arith.constant -22 : i32
  %bar:10 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#2, %bar#8 : tensor<12xi32>
  %e_e = tensor.empty() : tensor<4x3xi32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<4x3xi32>) {
  ^bb0(%e_o: i32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 3 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<12xi32>
    linalg.yield %e_x : i32
  } -> tensor<4x3xi32>
  util.return %e : tensor<4x3xi32>
}

// linalg.matmul on i32.
func.func @matmul_i32() {
  %a_off, %b_off = util.call @matmul_i32_scalars() : () -> (i32, i32)
  %e = util.call @matmul_i32_e() : () -> (tensor<4x3xi32>)
  %a_e = tensor.empty() : tensor<4x8xi32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%a_e : tensor<4x8xi32>) {
  ^bb0(%a_o: i32):
    %a_i0 = linalg.index 0 : index
    %a_i1 = linalg.index 1 : index
    %a_n = affine.apply affine_map<(d0, d1) -> (((d0 * 8 + d1) * 7) mod 11)>(%a_i0, %a_i1)
    %a_ni = arith.index_cast %a_n : index to i32
    %a_x = arith.subi %a_ni, %a_off : i32
    linalg.yield %a_x : i32
  } -> tensor<4x8xi32>
  %b_e = tensor.empty() : tensor<8x3xi32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%b_e : tensor<8x3xi32>) {
  ^bb0(%b_o: i32):
    %b_i0 = linalg.index 0 : index
    %b_i1 = linalg.index 1 : index
    %b_n = affine.apply affine_map<(d0, d1) -> (((d0 * 3 + d1) * 5) mod 7)>(%b_i0, %b_i1)
    %b_ni = arith.index_cast %b_n : index to i32
    %b_x = arith.subi %b_ni, %b_off : i32
    linalg.yield %b_x : i32
  } -> tensor<8x3xi32>
  %acc_c = arith.constant 0 : i32
  %acc_e = tensor.empty() : tensor<4x3xi32>
  %acc = linalg.fill ins(%acc_c : i32) outs(%acc_e : tensor<4x3xi32>) -> tensor<4x3xi32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xi32>, tensor<8x3xi32>) outs(%acc : tensor<4x3xi32>) -> tensor<4x3xi32>
  %r_v = hal.tensor.export %r : tensor<4x3xi32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4x3xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @batch_matmul_f32_scalars() -> (f32, f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 3.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  util.return %bar#0, %bar#1 : f32, f32
}

util.func private @batch_matmul_f32_e() -> (tensor<2x3x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant -31.0 : f32
  %c2 = arith.constant 9.0 : f32
  %c3 = arith.constant 12.0 : f32
  %c4 = arith.constant 14.0 : f32
  %c5 = arith.constant 0.0 : f32
  %c6 = arith.constant 10.0 : f32
  %c7 = arith.constant -9.0 : f32
  %c8 = arith.constant -2.0 : f32
  %c9 = arith.constant -3.0 : f32
  %c10 = arith.constant 6.0 : f32
  %bar:11 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#0, %bar#9, %bar#10 : tensor<12xf32>
  %e_e = tensor.empty() : tensor<2x3x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e_e : tensor<2x3x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_i2 = linalg.index 2 : index
    %e_k = affine.apply affine_map<(d0, d1, d2) -> (d0 * 6 + d1 * 2 + d2)>(%e_i0, %e_i1, %e_i2)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<12xf32>
    linalg.yield %e_x : f32
  } -> tensor<2x3x2xf32>
  util.return %e : tensor<2x3x2xf32>
}

// linalg.batch_matmul 2x3x4 * 2x4x2.
func.func @batch_matmul_f32() {
  %a_off, %b_off = util.call @batch_matmul_f32_scalars() : () -> (f32, f32)
  %e = util.call @batch_matmul_f32_e() : () -> (tensor<2x3x2xf32>)
  %a_e = tensor.empty() : tensor<2x3x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%a_e : tensor<2x3x4xf32>) {
  ^bb0(%a_o: f32):
    %a_i0 = linalg.index 0 : index
    %a_i1 = linalg.index 1 : index
    %a_i2 = linalg.index 2 : index
    %a_n = affine.apply affine_map<(d0, d1, d2) -> ((((d0 * 3 + d1) * 4 + d2) * 7) mod 11)>(%a_i0, %a_i1, %a_i2)
    %a_ni = arith.index_cast %a_n : index to i64
    %a_nf = arith.sitofp %a_ni : i64 to f32
    %a_x = arith.subf %a_nf, %a_off : f32
    linalg.yield %a_x : f32
  } -> tensor<2x3x4xf32>
  %b_e = tensor.empty() : tensor<2x4x2xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%b_e : tensor<2x4x2xf32>) {
  ^bb0(%b_o: f32):
    %b_i0 = linalg.index 0 : index
    %b_i1 = linalg.index 1 : index
    %b_i2 = linalg.index 2 : index
    %b_n = affine.apply affine_map<(d0, d1, d2) -> ((((d0 * 4 + d1) * 2 + d2) * 5) mod 7)>(%b_i0, %b_i1, %b_i2)
    %b_ni = arith.index_cast %b_n : index to i64
    %b_nf = arith.sitofp %b_ni : i64 to f32
    %b_x = arith.subf %b_nf, %b_off : f32
    linalg.yield %b_x : f32
  } -> tensor<2x4x2xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<2x3x2xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x2xf32>) outs(%acc : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %r_v = hal.tensor.export %r : tensor<2x3x2xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<2x3x2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @matvec_f32_scalars() -> (f32, f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 3.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  util.return %bar#0, %bar#1 : f32, f32
}

util.func private @matvec_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 24.0 : f32
  %c2 = arith.constant 32.0 : f32
  %c3 = arith.constant 29.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// linalg.matvec 4x8 * 8.
func.func @matvec_f32() {
  %a_off, %x_off = util.call @matvec_f32_scalars() : () -> (f32, f32)
  %e = util.call @matvec_f32_e() : () -> (tensor<4xf32>)
  %a_e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%a_e : tensor<4x8xf32>) {
  ^bb0(%a_o: f32):
    %a_i0 = linalg.index 0 : index
    %a_i1 = linalg.index 1 : index
    %a_n = affine.apply affine_map<(d0, d1) -> (((d0 * 8 + d1) * 7) mod 11)>(%a_i0, %a_i1)
    %a_ni = arith.index_cast %a_n : index to i64
    %a_nf = arith.sitofp %a_ni : i64 to f32
    %a_x = arith.subf %a_nf, %a_off : f32
    linalg.yield %a_x : f32
  } -> tensor<4x8xf32>
  %x_e = tensor.empty() : tensor<8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%x_e : tensor<8xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_n = affine.apply affine_map<(d0) -> (((d0) * 5) mod 7)>(%x_i0)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<8xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.matvec ins(%a, %x : tensor<4x8xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dot_f32_scalars() -> (f32, f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 3.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  util.return %bar#0, %bar#1 : f32, f32
}

util.func private @dot_f32_e() -> (tensor<f32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %e = tensor.from_elements %bar : tensor<f32>
  util.return %e : tensor<f32>
}

// linalg.dot of two 8-vectors into a rank-0 tensor.
func.func @dot_f32() {
  %a_off, %b_off = util.call @dot_f32_scalars() : () -> (f32, f32)
  %e = util.call @dot_f32_e() : () -> (tensor<f32>)
  %a_e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%a_e : tensor<8xf32>) {
  ^bb0(%a_o: f32):
    %a_i0 = linalg.index 0 : index
    %a_n = affine.apply affine_map<(d0) -> (((d0) * 7) mod 11)>(%a_i0)
    %a_ni = arith.index_cast %a_n : index to i64
    %a_nf = arith.sitofp %a_ni : i64 to f32
    %a_x = arith.subf %a_nf, %a_off : f32
    linalg.yield %a_x : f32
  } -> tensor<8xf32>
  %b_e = tensor.empty() : tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%b_e : tensor<8xf32>) {
  ^bb0(%b_o: f32):
    %b_i0 = linalg.index 0 : index
    %b_n = affine.apply affine_map<(d0) -> (((d0) * 5) mod 7)>(%b_i0)
    %b_ni = arith.index_cast %b_n : index to i64
    %b_nf = arith.sitofp %b_ni : i64 to f32
    %b_x = arith.subf %b_nf, %b_off : f32
    linalg.yield %b_x : f32
  } -> tensor<8xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<f32>) -> tensor<f32>
  %r = linalg.dot ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%acc : tensor<f32>) -> tensor<f32>
  %r_v = hal.tensor.export %r : tensor<f32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<f32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @conv2d_nhwc_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @conv2d_nhwc_f32_k() -> (tensor<3x3x1x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 0.0 : f32
  %c2 = arith.constant -1.0 : f32
  %c3 = arith.constant 0.5 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %k_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#0, %bar#1, %bar#1, %bar#2, %bar#0, %bar#3, %bar#3, %bar#3, %bar#0, %bar#2, %bar#0, %bar#1, %bar#1, %bar#0 : tensor<18xf32>
  %k_e = tensor.empty() : tensor<3x3x1x2xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%k_e : tensor<3x3x1x2xf32>) {
  ^bb0(%k_o: f32):
    %k_i0 = linalg.index 0 : index
    %k_i1 = linalg.index 1 : index
    %k_i2 = linalg.index 2 : index
    %k_i3 = linalg.index 3 : index
    %k_k = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 * 6 + d1 * 2 + d2 * 2 + d3)>(%k_i0, %k_i1, %k_i2, %k_i3)
    %k_x = tensor.extract %k_flat[%k_k] : tensor<18xf32>
    linalg.yield %k_x : f32
  } -> tensor<3x3x1x2xf32>
  util.return %k : tensor<3x3x1x2xf32>
}

util.func private @conv2d_nhwc_f32_e() -> (tensor<1x3x3x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -11.0 : f32
  %c1 = arith.constant 9.0 : f32
  %c2 = arith.constant 4.0 : f32
  %c3 = arith.constant -4.0 : f32
  %c4 = arith.constant -8.5 : f32
  %c5 = arith.constant 5.0 : f32
  %c6 = arith.constant -13.0 : f32
  %c7 = arith.constant 4.5 : f32
  %c8 = arith.constant 2.0 : f32
  %c9 = arith.constant 8.0 : f32
  %c10 = arith.constant 11.5 : f32
  %c11 = arith.constant -10.5 : f32
  %c12 = arith.constant 7.0 : f32
  %bar:13 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#10, %bar#11, %bar#12, %bar#0, %bar#0, %bar#1, %bar#2, %bar#3 : tensor<18xf32>
  %e_e = tensor.empty() : tensor<1x3x3x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e_e : tensor<1x3x3x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_i2 = linalg.index 2 : index
    %e_i3 = linalg.index 3 : index
    %e_k = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 * 18 + d1 * 6 + d2 * 2 + d3)>(%e_i0, %e_i1, %e_i2, %e_i3)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<18xf32>
    linalg.yield %e_x : f32
  } -> tensor<1x3x3x2xf32>
  util.return %e : tensor<1x3x3x2xf32>
}

// linalg.conv_2d_nhwc_hwcf, 1x5x5x1 input, 3x3x1x2 filter, stride 1: 1x3x3x2.
func.func @conv2d_nhwc_f32() {
  %x_off = util.call @conv2d_nhwc_f32_scalars() : () -> (f32)
  %k = util.call @conv2d_nhwc_f32_k() : () -> (tensor<3x3x1x2xf32>)
  %e = util.call @conv2d_nhwc_f32_e() : () -> (tensor<1x3x3x2xf32>)
  %x_e = tensor.empty() : tensor<1x5x5x1xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%x_e : tensor<1x5x5x1xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_i2 = linalg.index 2 : index
    %x_i3 = linalg.index 3 : index
    %x_n = affine.apply affine_map<(d0, d1, d2, d3) -> (((((d0 * 5 + d1) * 5 + d2) * 1 + d3) * 7) mod 11)>(%x_i0, %x_i1, %x_i2, %x_i3)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<1x5x5x1xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<1x3x3x2xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x5x5x1xf32>, tensor<3x3x1x2xf32>) outs(%acc : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %r_v = hal.tensor.export %r : tensor<1x3x3x2xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<1x3x3x2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @depthwise_conv_f32_scalars() -> (f32, f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 3.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  util.return %bar#0, %bar#1 : f32, f32
}

util.func private @depthwise_conv_f32_e() -> (tensor<1x3x3x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant 12.0 : f32
  %c2 = arith.constant 1.0 : f32
  %c3 = arith.constant 17.0 : f32
  %c4 = arith.constant -2.0 : f32
  %c5 = arith.constant -11.0 : f32
  %c6 = arith.constant 3.0 : f32
  %c7 = arith.constant 32.0 : f32
  %c8 = arith.constant 0.0 : f32
  %c9 = arith.constant -7.0 : f32
  %c10 = arith.constant 8.0 : f32
  %c11 = arith.constant -13.0 : f32
  %c12 = arith.constant 2.0 : f32
  %c13 = arith.constant 30.0 : f32
  %c14 = arith.constant -1.0 : f32
  %c15 = arith.constant -9.0 : f32
  %c16 = arith.constant 7.0 : f32
  %c17 = arith.constant -15.0 : f32
  %bar:18 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16, %c17 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#10, %bar#11, %bar#12, %bar#13, %bar#14, %bar#15, %bar#16, %bar#17 : tensor<18xf32>
  %e_e = tensor.empty() : tensor<1x3x3x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e_e : tensor<1x3x3x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_i2 = linalg.index 2 : index
    %e_i3 = linalg.index 3 : index
    %e_k = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 * 18 + d1 * 6 + d2 * 2 + d3)>(%e_i0, %e_i1, %e_i2, %e_i3)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<18xf32>
    linalg.yield %e_x : f32
  } -> tensor<1x3x3x2xf32>
  util.return %e : tensor<1x3x3x2xf32>
}

// linalg.depthwise_conv_2d_nhwc_hwc, 1x4x4x2 input, 2x2x2 filter: 1x3x3x2.
func.func @depthwise_conv_f32() {
  %x_off, %k_off = util.call @depthwise_conv_f32_scalars() : () -> (f32, f32)
  %e = util.call @depthwise_conv_f32_e() : () -> (tensor<1x3x3x2xf32>)
  %x_e = tensor.empty() : tensor<1x4x4x2xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%x_e : tensor<1x4x4x2xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_i2 = linalg.index 2 : index
    %x_i3 = linalg.index 3 : index
    %x_n = affine.apply affine_map<(d0, d1, d2, d3) -> (((((d0 * 4 + d1) * 4 + d2) * 2 + d3) * 7) mod 11)>(%x_i0, %x_i1, %x_i2, %x_i3)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<1x4x4x2xf32>
  %k_e = tensor.empty() : tensor<2x2x2xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%k_e : tensor<2x2x2xf32>) {
  ^bb0(%k_o: f32):
    %k_i0 = linalg.index 0 : index
    %k_i1 = linalg.index 1 : index
    %k_i2 = linalg.index 2 : index
    %k_n = affine.apply affine_map<(d0, d1, d2) -> ((((d0 * 2 + d1) * 2 + d2) * 5) mod 7)>(%k_i0, %k_i1, %k_i2)
    %k_ni = arith.index_cast %k_n : index to i64
    %k_nf = arith.sitofp %k_ni : i64 to f32
    %k_x = arith.subf %k_nf, %k_off : f32
    linalg.yield %k_x : f32
  } -> tensor<2x2x2xf32>
  %acc_c = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<1x3x3x2xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x4x4x2xf32>, tensor<2x2x2xf32>) outs(%acc : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %r_v = hal.tensor.export %r : tensor<1x3x3x2xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<1x3x3x2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @max_pool_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @max_pool_f32_e() -> (tensor<1x2x2x1xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.0 : f32
  %c1 = arith.constant 5.0 : f32
  %c2 = arith.constant 3.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#1 : tensor<4xf32>
  %e_e = tensor.empty() : tensor<1x2x2x1xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e_e : tensor<1x2x2x1xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_i2 = linalg.index 2 : index
    %e_i3 = linalg.index 3 : index
    %e_k = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 * 4 + d1 * 2 + d2 + d3)>(%e_i0, %e_i1, %e_i2, %e_i3)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<4xf32>
    linalg.yield %e_x : f32
  } -> tensor<1x2x2x1xf32>
  util.return %e : tensor<1x2x2x1xf32>
}

// linalg.pooling_nhwc_max, 2x2 window, stride 2, from -inf.
func.func @max_pool_f32() {
  %x_off = util.call @max_pool_f32_scalars() : () -> (f32)
  %e = util.call @max_pool_f32_e() : () -> (tensor<1x2x2x1xf32>)
  %x_e = tensor.empty() : tensor<1x4x4x1xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%x_e : tensor<1x4x4x1xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_i2 = linalg.index 2 : index
    %x_i3 = linalg.index 3 : index
    %x_n = affine.apply affine_map<(d0, d1, d2, d3) -> (((((d0 * 4 + d1) * 4 + d2) * 1 + d3) * 7) mod 11)>(%x_i0, %x_i1, %x_i2, %x_i3)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<1x4x4x1xf32>
  %acc_c = arith.constant 0xFF800000 : f32
  %acc_e = tensor.empty() : tensor<1x2x2x1xf32>
  %acc = linalg.fill ins(%acc_c : f32) outs(%acc_e : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x1xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %r_v = hal.tensor.export %r : tensor<1x2x2x1xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<1x2x2x1xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
