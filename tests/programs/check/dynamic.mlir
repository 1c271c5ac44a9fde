// Check-style corpus: dynamic shapes.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @dyn_iota_f32_scalars() -> (index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 7 : index
  %bar = util.optimization_barrier %c0 : index
  util.return %bar : index
}

util.func private @dyn_iota_f32_e() -> (tensor<7xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 0.5 : f32
  %c2 = arith.constant 1.0 : f32
  %c3 = arith.constant 1.5 : f32
  %c4 = arith.constant 2.0 : f32
  %c5 = arith.constant 2.5 : f32
  %c6 = arith.constant 3.0 : f32
  %bar:7 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6 : f32, f32, f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6 : tensor<7xf32>
  util.return %e : tensor<7xf32>
}

// A tensor<?xf32> whose length (7) comes from the host at run time; the buffer view carries it.
func.func @dyn_iota_f32() {
  %n = util.call @dyn_iota_f32_scalars() : () -> (index)
  %e = util.call @dyn_iota_f32_e() : () -> (tensor<7xf32>)
  %half = arith.constant 0.5 : f32
  %x_e = tensor.empty(%n) : tensor<?xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%x_e : tensor<?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %v = arith.mulf %fi, %half : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %x_v = hal.tensor.export %x : tensor<?xf32>{%n} -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<7xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%x_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dyn_slice_f32_x() -> (tensor<8xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant 5.0 : f32
  %c5 = arith.constant 6.0 : f32
  %c6 = arith.constant 7.0 : f32
  %c7 = arith.constant 8.0 : f32
  %bar:8 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7 : f32, f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7 : tensor<8xf32>
  util.return %x : tensor<8xf32>
}

util.func private @dyn_slice_f32_scalars() -> (index, index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : index
  %c1 = arith.constant 4 : index
  %bar:2 = util.optimization_barrier %c0, %c1 : index, index
  util.return %bar#0, %bar#1 : index, index
}

util.func private @dyn_slice_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 5.0 : f32
  %c3 = arith.constant 6.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// tensor.extract_slice at a run-time offset (2) and length (4).
func.func @dyn_slice_f32() {
  %x = util.call @dyn_slice_f32_x() : () -> (tensor<8xf32>)
  %off, %len = util.call @dyn_slice_f32_scalars() : () -> (index, index)
  %e = util.call @dyn_slice_f32_e() : () -> (tensor<4xf32>)
  %s = tensor.extract_slice %x[%off] [%len] [1] : tensor<8xf32> to tensor<?xf32>
  %s_v = hal.tensor.export %s : tensor<?xf32>{%len} -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dyn_transpose_i32_scalars() -> (index, index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : index
  %c1 = arith.constant 3 : index
  %bar:2 = util.optimization_barrier %c0, %c1 : index, index
  util.return %bar#0, %bar#1 : index, index
}

util.func private @dyn_transpose_i32_e() -> (tensor<3x2xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 3 : i32
  %c2 = arith.constant 1 : i32
  %c3 = arith.constant 4 : i32
  %c4 = arith.constant 2 : i32
  %c5 = arith.constant 5 : i32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : i32, i32, i32, i32, i32, i32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xi32>
  %e_e = tensor.empty() : tensor<3x2xi32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<3x2xi32>) {
  ^bb0(%e_o: i32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<6xi32>
    linalg.yield %e_x : i32
  } -> tensor<3x2xi32>
  util.return %e : tensor<3x2xi32>
}

// linalg.transpose of a ?x? i32 tensor (2x3 at run time) holding i * 3 + j.
func.func @dyn_transpose_i32() {
  %m, %n = util.call @dyn_transpose_i32_scalars() : () -> (index, index)
  %e = util.call @dyn_transpose_i32_e() : () -> (tensor<3x2xi32>)
  %x_e = tensor.empty(%m, %n) : tensor<?x?xi32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%x_e : tensor<?x?xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %r = arith.muli %i, %n : index
    %k = arith.addi %r, %j : index
    %v = arith.index_cast %k : index to i32
    linalg.yield %v : i32
  } -> tensor<?x?xi32>
  %t_e = tensor.empty(%n, %m) : tensor<?x?xi32>
  %t = linalg.transpose ins(%x : tensor<?x?xi32>) outs(%t_e : tensor<?x?xi32>) permutation = [1, 0]
  %t_v = hal.tensor.export %t : tensor<?x?xi32>{%n, %m} -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3x2xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%t_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dyn_concat_f32_x() -> (tensor<8xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %c4 = arith.constant 5.0 : f32
  %c5 = arith.constant 6.0 : f32
  %c6 = arith.constant 7.0 : f32
  %c7 = arith.constant 8.0 : f32
  %bar:8 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7 : f32, f32, f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7 : tensor<8xf32>
  util.return %x : tensor<8xf32>
}

util.func private @dyn_concat_f32_scalars() -> (index, index, index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5 : index
  %c1 = arith.constant 3 : index
  %c2 = arith.constant 2 : index
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : index, index, index
  util.return %bar#0, %bar#1, %bar#2 : index, index, index
}

util.func private @dyn_concat_f32_e() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 6.0 : f32
  %c1 = arith.constant 7.0 : f32
  %c2 = arith.constant 8.0 : f32
  %c3 = arith.constant 1.0 : f32
  %c4 = arith.constant 2.0 : f32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xf32>
  util.return %e : tensor<5xf32>
}

// tensor.concat of two run-time slices, x[5:8] and x[0:2].
func.func @dyn_concat_f32() {
  %x = util.call @dyn_concat_f32_x() : () -> (tensor<8xf32>)
  %o1, %l1, %l2 = util.call @dyn_concat_f32_scalars() : () -> (index, index, index)
  %e = util.call @dyn_concat_f32_e() : () -> (tensor<5xf32>)
  %a = tensor.extract_slice %x[%o1] [%l1] [1] : tensor<8xf32> to tensor<?xf32>
  %b = tensor.extract_slice %x[0] [%l2] [1] : tensor<8xf32> to tensor<?xf32>
  %c = tensor.concat dim(0) %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %len = arith.addi %l1, %l2 : index
  %c_v = hal.tensor.export %c : tensor<?xf32>{%len} -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%c_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dyn_matmul_f32_scalars() -> (index, index, index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : index
  %c1 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : index, index, index
  util.return %bar#0, %bar#1, %bar#2 : index, index, index
}

util.func private @dyn_matmul_f32_e() -> (tensor<3x2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant -31.0 : f32
  %c2 = arith.constant 9.0 : f32
  %c3 = arith.constant 12.0 : f32
  %c4 = arith.constant 14.0 : f32
  %c5 = arith.constant 0.0 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  %e_e = tensor.empty() : tensor<3x2xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<3x2xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<6xf32>
    linalg.yield %e_x : f32
  } -> tensor<3x2xf32>
  util.return %e : tensor<3x2xf32>
}

// linalg.matmul on ?x? operands (3x4 * 4x2 at run time) filled with the corpus pattern.
func.func @dyn_matmul_f32() {
  %m, %k, %n = util.call @dyn_matmul_f32_scalars() : () -> (index, index, index)
  %e = util.call @dyn_matmul_f32_e() : () -> (tensor<3x2xf32>)
  %mul7 = arith.constant 7 : index
  %mul5 = arith.constant 5 : index
  %mod11 = arith.constant 11 : index
  %mod7 = arith.constant 7 : index
  %off5 = arith.constant 5.0 : f32
  %off3 = arith.constant 3.0 : f32
  %a_e = tensor.empty(%m, %k) : tensor<?x?xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%a_e : tensor<?x?xf32>) {
  ^bb0(%a_o: f32):
    %a_i = linalg.index 0 : index
    %a_j = linalg.index 1 : index
    %a_r = arith.muli %a_i, %k : index
    %a_n = arith.addi %a_r, %a_j : index
    %a_m = arith.muli %a_n, %mul7 : index
    %a_p = arith.remui %a_m, %mod11 : index
    %a_pi = arith.index_cast %a_p : index to i32
    %a_pf = arith.sitofp %a_pi : i32 to f32
    %a_x = arith.subf %a_pf, %off5 : f32
    linalg.yield %a_x : f32
  } -> tensor<?x?xf32>
  %b_e = tensor.empty(%k, %n) : tensor<?x?xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%b_e : tensor<?x?xf32>) {
  ^bb0(%b_o: f32):
    %b_i = linalg.index 0 : index
    %b_j = linalg.index 1 : index
    %b_r = arith.muli %b_i, %n : index
    %b_n = arith.addi %b_r, %b_j : index
    %b_m = arith.muli %b_n, %mul5 : index
    %b_p = arith.remui %b_m, %mod7 : index
    %b_pi = arith.index_cast %b_p : index to i32
    %b_pf = arith.sitofp %b_pi : i32 to f32
    %b_x = arith.subf %b_pf, %off3 : f32
    linalg.yield %b_x : f32
  } -> tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %acc_e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r_v = hal.tensor.export %r : tensor<?x?xf32>{%m, %n} -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3x2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @dyn_sum_f32_scalars() -> (index) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 37 : index
  %bar = util.optimization_barrier %c0 : index
  util.return %bar : index
}

util.func private @dyn_sum_f32_e() -> (tensor<f32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 166.5 : f32
  %bar = util.optimization_barrier %c0 : f32
  %e = tensor.from_elements %bar : tensor<f32>
  util.return %e : tensor<f32>
}

// The sum of a run-time-length (37) tensor of i / 4 into a rank-0 tensor: 166.5, exact in any order.
func.func @dyn_sum_f32() {
  %n = util.call @dyn_sum_f32_scalars() : () -> (index)
  %e = util.call @dyn_sum_f32_e() : () -> (tensor<f32>)
  %quarter = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %x_e = tensor.empty(%n) : tensor<?xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%x_e : tensor<?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %v = arith.mulf %fi, %quarter : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %acc_e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<?xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %s_v = hal.tensor.export %s : tensor<f32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<f32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
