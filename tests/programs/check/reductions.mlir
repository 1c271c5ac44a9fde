// Check-style corpus: reductions.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @sum_iota_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @sum_iota_f32_e() -> (tensor<f32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4950.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %e = tensor.from_elements %bar : tensor<f32>
  util.return %e : tensor<f32>
}

// The sum of 0..99 into a rank-0 tensor: 4950, exact in f32 whatever the summation order.
func.func @sum_iota_f32() {
  %x_off = util.call @sum_iota_f32_scalars() : () -> (f32)
  %e = util.call @sum_iota_f32_e() : () -> (tensor<f32>)
  %x_e = tensor.empty() : tensor<100xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%x_e : tensor<100xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_n = affine.apply affine_map<(d0) -> (d0)>(%x_i0)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<100xf32>
  %zero = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<100xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %r_v = hal.tensor.export %r : tensor<f32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<f32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @row_max_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @row_max_f32_e() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 3.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %e : tensor<3xf32>
}

// Row maxima of a 3x4 pattern ((n * 7) mod 11) - 5, from -inf.
func.func @row_max_f32() {
  %x_off = util.call @row_max_f32_scalars() : () -> (f32)
  %e = util.call @row_max_f32_e() : () -> (tensor<3xf32>)
  %x_e = tensor.empty() : tensor<3x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%x_e : tensor<3x4xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_n = affine.apply affine_map<(d0, d1) -> (((d0 * 4 + d1) * 7) mod 11)>(%x_i0, %x_i1)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<3x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %acc_e = tensor.empty() : tensor<3xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%acc_e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x4xf32>) outs(%acc : tensor<3xf32>) {
  ^bb0(%a: f32, %m: f32):
    %t = arith.maximumf %a, %m : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  %r_v = hal.tensor.export %r : tensor<3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @col_sum_i32_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

util.func private @col_sum_i32_e() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -8 : i32
  %c1 = arith.constant 2 : i32
  %c2 = arith.constant 1 : i32
  %c3 = arith.constant 0 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %e : tensor<4xi32>
}

// Column sums of the same pattern in i32: a reduction over the outer dimension.
func.func @col_sum_i32() {
  %x_off = util.call @col_sum_i32_scalars() : () -> (i32)
  %e = util.call @col_sum_i32_e() : () -> (tensor<4xi32>)
  %x_e = tensor.empty() : tensor<3x4xi32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%x_e : tensor<3x4xi32>) {
  ^bb0(%x_o: i32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_n = affine.apply affine_map<(d0, d1) -> (((d0 * 4 + d1) * 7) mod 11)>(%x_i0, %x_i1)
    %x_ni = arith.index_cast %x_n : index to i32
    %x_x = arith.subi %x_ni, %x_off : i32
    linalg.yield %x_x : i32
  } -> tensor<3x4xi32>
  %zero = arith.constant 0 : i32
  %acc_e = tensor.empty() : tensor<4xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc_e : tensor<4xi32>) -> tensor<4xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<3x4xi32>) outs(%acc : tensor<4xi32>) {
  ^bb0(%a: i32, %s: i32):
    %t = arith.addi %a, %s : i32
    linalg.yield %t : i32
  } -> tensor<4xi32>
  %r_v = hal.tensor.export %r : tensor<4xi32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @mean_f32_x() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant 10.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %x : tensor<5xf32>
}

util.func private @mean_f32_e() -> (tensor<f32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %e = tensor.from_elements %bar : tensor<f32>
  util.return %e : tensor<f32>
}

// A sum, then a division by the count on the rank-0 result.
func.func @mean_f32() {
  %x = util.call @mean_f32_x() : () -> (tensor<5xf32>)
  %e = util.call @mean_f32_e() : () -> (tensor<f32>)
  %zero = arith.constant 0.0 : f32
  %five = arith.constant 5.0 : f32
  %acc_e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<5xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%acc_e : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.divf %a, %five : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %r_v = hal.tensor.export %r : tensor<f32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<f32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-04 : f32
  %r_rtol = arith.constant 0.0 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @argmax_f32_x() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -1.0 : f32
  %c2 = arith.constant 7.0 : f32
  %c3 = arith.constant 2.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#2, %bar#3 : tensor<5xf32>
  util.return %x : tensor<5xf32>
}

util.func private @argmax_f32_emx() -> (tensor<f32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 7.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %emx = tensor.from_elements %bar : tensor<f32>
  util.return %emx : tensor<f32>
}

util.func private @argmax_f32_eix() -> (tensor<i32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %bar = util.optimization_barrier %c0 : i32
  %eix = tensor.from_elements %bar : tensor<i32>
  util.return %eix : tensor<i32>
}

// A reduction with two results, the maximum and its first index (ties keep the earlier index).
func.func @argmax_f32() {
  %x = util.call @argmax_f32_x() : () -> (tensor<5xf32>)
  %emx = util.call @argmax_f32_emx() : () -> (tensor<f32>)
  %eix = util.call @argmax_f32_eix() : () -> (tensor<i32>)
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i32
  %m_e = tensor.empty() : tensor<f32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%m_e : tensor<f32>) -> tensor<f32>
  %i_e = tensor.empty() : tensor<i32>
  %i0 = linalg.fill ins(%zero : i32) outs(%i_e : tensor<i32>) -> tensor<i32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<5xf32>) outs(%m0, %i0 : tensor<f32>, tensor<i32>) {
  ^bb0(%a: f32, %m: f32, %ki: i32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %gt = arith.cmpf ogt, %a, %m : f32
    %nm = arith.select %gt, %a, %m : f32
    %nk = arith.select %gt, %ii, %ki : i32
    linalg.yield %nm, %nk : f32, i32
  } -> (tensor<f32>, tensor<i32>)
  %mx_v = hal.tensor.export %r#0 : tensor<f32> -> !hal.buffer_view
  %ix_v = hal.tensor.export %r#1 : tensor<i32> -> !hal.buffer_view
  %emx_v = hal.tensor.export %emx : tensor<f32> -> !hal.buffer_view
  %eix_v = hal.tensor.export %eix : tensor<i32> -> !hal.buffer_view
  util.call @check.expect_eq(%mx_v, %emx_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%ix_v, %eix_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @all_true_i32_f32_x() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant 5 : i32
  %c2 = arith.constant 9 : i32
  %c3 = arith.constant 2 : i32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : i32, i32, i32, i32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xi32>
  util.return %x : tensor<4xi32>
}

util.func private @all_true_i32_f32_zero() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i32
  %bar = util.optimization_barrier %c0 : i32
  %zero = tensor.from_elements %bar, %bar, %bar, %bar : tensor<4xi32>
  util.return %zero : tensor<4xi32>
}

util.func private @all_true_i32_f32_three() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %three = tensor.from_elements %bar, %bar, %bar, %bar : tensor<4xf32>
  util.return %three : tensor<4xf32>
}

util.func private @all_true_i32_f32_onef() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  %onef = tensor.from_elements %bar, %bar, %bar, %bar : tensor<4xf32>
  util.return %onef : tensor<4xf32>
}

// expect_all_true on an i32 mask (x > 0) and on an f32 tensor (x - 3)^2 + 1, never 0.
func.func @all_true_i32_f32() {
  %x = util.call @all_true_i32_f32_x() : () -> (tensor<4xi32>)
  %zero = util.call @all_true_i32_f32_zero() : () -> (tensor<4xi32>)
  %three = util.call @all_true_i32_f32_three() : () -> (tensor<4xf32>)
  %onef = util.call @all_true_i32_f32_onef() : () -> (tensor<4xf32>)
  %gt = arith.cmpi sgt, %x, %zero : tensor<4xi32>
  %mask = arith.extui %gt : tensor<4xi1> to tensor<4xi32>
  %xf = arith.sitofp %x : tensor<4xi32> to tensor<4xf32>
  %d = arith.subf %xf, %three : tensor<4xf32>
  %sq = arith.mulf %d, %d : tensor<4xf32>
  %pos = arith.addf %sq, %onef : tensor<4xf32>
  %mask_v = hal.tensor.export %mask : tensor<4xi32> -> !hal.buffer_view
  %pos_v = hal.tensor.export %pos : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_all_true(%mask_v) : (!hal.buffer_view) -> ()
  util.call @check.expect_all_true(%pos_v) : (!hal.buffer_view) -> ()
  return
}

util.func private @softmax_f32_x() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 0.5 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %x : tensor<4xf32>
}

util.func private @softmax_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.085368894 : f32
  %c1 = arith.constant 0.23205669 : f32
  %c2 = arith.constant 0.63079554 : f32
  %c3 = arith.constant 0.051778857 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// Softmax in three dispatches: max, exp(x - max) with its sum, division.
func.func @softmax_f32() {
  %x = util.call @softmax_f32_x() : () -> (tensor<4xf32>)
  %e = util.call @softmax_f32_e() : () -> (tensor<4xf32>)
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %s_e = tensor.empty() : tensor<f32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%s_e : tensor<f32>) -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%m0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %ex_e = tensor.empty() : tensor<4xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x, %m : tensor<4xf32>, tensor<f32>) outs(%ex_e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%s_e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%ex : tensor<4xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%ex, %s : tensor<4xf32>, tensor<f32>) outs(%ex_e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.divf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  %r_atol = arith.constant 1.0e-06 : f32
  %r_rtol = arith.constant 1.0e-05 : f32
  util.call @check.expect_almost_eq(%r_v, %e_v, %r_atol, %r_rtol) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  return
}

util.func private @sum_host_compare_i32_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

// A sum read back on the host (tensor.extract) and compared there: expect_true / expect_false on i32.
func.func @sum_host_compare_i32() {
  %x_off = util.call @sum_host_compare_i32_scalars() : () -> (i32)
  %x_e = tensor.empty() : tensor<100xi32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%x_e : tensor<100xi32>) {
  ^bb0(%x_o: i32):
    %x_i0 = linalg.index 0 : index
    %x_n = affine.apply affine_map<(d0) -> (d0)>(%x_i0)
    %x_ni = arith.index_cast %x_n : index to i32
    %x_x = arith.subi %x_ni, %x_off : i32
    linalg.yield %x_x : i32
  } -> tensor<100xi32>
  %zero = arith.constant 0 : i32
  %want = arith.constant 4950 : i32
  %acc_e = tensor.empty() : tensor<i32>
  %acc = linalg.fill ins(%zero : i32) outs(%acc_e : tensor<i32>) -> tensor<i32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<100xi32>) outs(%acc : tensor<i32>) {
  ^bb0(%a: i32, %s: i32):
    %t = arith.addi %a, %s : i32
    linalg.yield %t : i32
  } -> tensor<i32>
  %sum = tensor.extract %r[] : tensor<i32>
  %is = arith.cmpi eq, %sum, %want : i32
  %isnt = arith.cmpi ne, %sum, %want : i32
  %yes = arith.extui %is : i1 to i32
  %no = arith.extui %isnt : i1 to i32
  util.call @check.expect_true(%yes) : (i32) -> ()
  util.call @check.expect_false(%no) : (i32) -> ()
  return
}
