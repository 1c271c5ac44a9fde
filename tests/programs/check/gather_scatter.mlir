// Check-style corpus: gather and scatter.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @gather_rows_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @gather_rows_f32_idx() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %c1 = arith.constant 0 : i32
  %c2 = arith.constant 3 : i32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %idx = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#0 : tensor<4xi32>
  util.return %idx : tensor<4xi32>
}

util.func private @gather_rows_f32_e() -> (tensor<4x3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.0 : f32
  %c1 = arith.constant 0.0 : f32
  %c2 = arith.constant -4.0 : f32
  %c3 = arith.constant -5.0 : f32
  %c4 = arith.constant 2.0 : f32
  %c5 = arith.constant -2.0 : f32
  %c6 = arith.constant 3.0 : f32
  %c7 = arith.constant -1.0 : f32
  %bar:8 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7 : f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#3, %bar#0, %bar#1, %bar#2 : tensor<12xf32>
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

// Rows of a 4x3 pattern picked by an i32 index vector (repeats allowed): tensor.extract in a kernel.
func.func @gather_rows_f32() {
  %src_off = util.call @gather_rows_f32_scalars() : () -> (f32)
  %idx = util.call @gather_rows_f32_idx() : () -> (tensor<4xi32>)
  %e = util.call @gather_rows_f32_e() : () -> (tensor<4x3xf32>)
  %src_e = tensor.empty() : tensor<4x3xf32>
  %src = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%src_e : tensor<4x3xf32>) {
  ^bb0(%src_o: f32):
    %src_i0 = linalg.index 0 : index
    %src_i1 = linalg.index 1 : index
    %src_n = affine.apply affine_map<(d0, d1) -> (((d0 * 3 + d1) * 7) mod 11)>(%src_i0, %src_i1)
    %src_ni = arith.index_cast %src_n : index to i64
    %src_nf = arith.sitofp %src_ni : i64 to f32
    %src_x = arith.subf %src_nf, %src_off : f32
    linalg.yield %src_x : f32
  } -> tensor<4x3xf32>
  %g_e = tensor.empty() : tensor<4x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<4xi32>) outs(%g_e : tensor<4x3xf32>) {
  ^bb0(%row: i32, %o: f32):
    %r = arith.index_cast %row : i32 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %src[%r, %j] : tensor<4x3xf32>
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  %g_v = hal.tensor.export %g : tensor<4x3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4x3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%g_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @gather_linalg_ext_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @gather_linalg_ext_f32_idx() -> (tensor<2x1xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %c1 = arith.constant 1 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  %idx_flat = tensor.from_elements %bar#0, %bar#1 : tensor<2xi32>
  %idx_e = tensor.empty() : tensor<2x1xi32>
  %idx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%idx_e : tensor<2x1xi32>) {
  ^bb0(%idx_o: i32):
    %idx_i0 = linalg.index 0 : index
    %idx_i1 = linalg.index 1 : index
    %idx_k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%idx_i0, %idx_i1)
    %idx_x = tensor.extract %idx_flat[%idx_k] : tensor<2xi32>
    linalg.yield %idx_x : i32
  } -> tensor<2x1xi32>
  util.return %idx : tensor<2x1xi32>
}

util.func private @gather_linalg_ext_f32_e() -> (tensor<2x3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -1.0 : f32
  %c2 = arith.constant -5.0 : f32
  %c3 = arith.constant 5.0 : f32
  %c4 = arith.constant 1.0 : f32
  %c5 = arith.constant -3.0 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  %e_e = tensor.empty() : tensor<2x3xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<2x3xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 3 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<6xf32>
    linalg.yield %e_x : f32
  } -> tensor<2x3xf32>
  util.return %e : tensor<2x3xf32>
}

// iree_linalg_ext.gather of rows 3 and 1 (index vectors of length 1 on dimension 0).
func.func @gather_linalg_ext_f32() {
  %src_off = util.call @gather_linalg_ext_f32_scalars() : () -> (f32)
  %idx = util.call @gather_linalg_ext_f32_idx() : () -> (tensor<2x1xi32>)
  %e = util.call @gather_linalg_ext_f32_e() : () -> (tensor<2x3xf32>)
  %src_e = tensor.empty() : tensor<4x3xf32>
  %src = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%src_e : tensor<4x3xf32>) {
  ^bb0(%src_o: f32):
    %src_i0 = linalg.index 0 : index
    %src_i1 = linalg.index 1 : index
    %src_n = affine.apply affine_map<(d0, d1) -> (((d0 * 3 + d1) * 7) mod 11)>(%src_i0, %src_i1)
    %src_ni = arith.index_cast %src_n : index to i64
    %src_nf = arith.sitofp %src_ni : i64 to f32
    %src_x = arith.subf %src_nf, %src_off : f32
    linalg.yield %src_x : f32
  } -> tensor<4x3xf32>
  %g_e = tensor.empty() : tensor<2x3xf32>
  %g = iree_linalg_ext.gather dimension_map = [0] ins(%src, %idx : tensor<4x3xf32>, tensor<2x1xi32>) outs(%g_e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %g_v = hal.tensor.export %g : tensor<2x3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<2x3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%g_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @take_i32_x() -> (tensor<5xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 10 : i32
  %c1 = arith.constant 20 : i32
  %c2 = arith.constant 30 : i32
  %c3 = arith.constant 40 : i32
  %c4 = arith.constant 50 : i32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : i32, i32, i32, i32, i32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xi32>
  util.return %x : tensor<5xi32>
}

util.func private @take_i32_idx() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4 : i32
  %c1 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %idx = tensor.from_elements %bar#0, %bar#0, %bar#1, %bar#2 : tensor<4xi32>
  util.return %idx : tensor<4xi32>
}

util.func private @take_i32_e() -> (tensor<4xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 50 : i32
  %c1 = arith.constant 10 : i32
  %c2 = arith.constant 30 : i32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %e = tensor.from_elements %bar#0, %bar#0, %bar#1, %bar#2 : tensor<4xi32>
  util.return %e : tensor<4xi32>
}

// A 1-D take: out[i] = x[idx[i]].
func.func @take_i32() {
  %x = util.call @take_i32_x() : () -> (tensor<5xi32>)
  %idx = util.call @take_i32_idx() : () -> (tensor<4xi32>)
  %e = util.call @take_i32_e() : () -> (tensor<4xi32>)
  %g_e = tensor.empty() : tensor<4xi32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%idx : tensor<4xi32>) outs(%g_e : tensor<4xi32>) {
  ^bb0(%at: i32, %o: i32):
    %r = arith.index_cast %at : i32 to index
    %v = tensor.extract %x[%r] : tensor<5xi32>
    linalg.yield %v : i32
  } -> tensor<4xi32>
  %g_v = hal.tensor.export %g : tensor<4xi32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%g_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @scatter_add_f32_upd() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 10.0 : f32
  %c1 = arith.constant 20.0 : f32
  %c2 = arith.constant 30.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %upd = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %upd : tensor<3xf32>
}

util.func private @scatter_add_f32_idx() -> (tensor<3x1xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4 : i32
  %c1 = arith.constant 0 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  %idx_flat = tensor.from_elements %bar#0, %bar#1, %bar#0 : tensor<3xi32>
  %idx_e = tensor.empty() : tensor<3x1xi32>
  %idx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%idx_e : tensor<3x1xi32>) {
  ^bb0(%idx_o: i32):
    %idx_i0 = linalg.index 0 : index
    %idx_i1 = linalg.index 1 : index
    %idx_k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%idx_i0, %idx_i1)
    %idx_x = tensor.extract %idx_flat[%idx_k] : tensor<3xi32>
    linalg.yield %idx_x : i32
  } -> tensor<3x1xi32>
  util.return %idx : tensor<3x1xi32>
}

util.func private @scatter_add_f32_e() -> (tensor<5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 21.0 : f32
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 41.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#1, %bar#1, %bar#2 : tensor<5xf32>
  util.return %e : tensor<5xf32>
}

// iree_linalg_ext.scatter with an add region and a repeated index (unique_indices(false)): updates accumulate.
func.func @scatter_add_f32() {
  %upd = util.call @scatter_add_f32_upd() : () -> (tensor<3xf32>)
  %idx = util.call @scatter_add_f32_idx() : () -> (tensor<3x1xi32>)
  %e = util.call @scatter_add_f32_e() : () -> (tensor<5xf32>)
  %dst_c = arith.constant 1.0 : f32
  %dst_e = tensor.empty() : tensor<5xf32>
  %dst = linalg.fill ins(%dst_c : f32) outs(%dst_e : tensor<5xf32>) -> tensor<5xf32>
  %s = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%upd, %idx : tensor<3xf32>, tensor<3x1xi32>) outs(%dst : tensor<5xf32>) {
  ^bb0(%u: f32, %d: f32):
    %t = arith.addf %u, %d : f32
    iree_linalg_ext.yield %t : f32
  } -> tensor<5xf32>
  %s_v = hal.tensor.export %s : tensor<5xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<5xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @scatter_rows_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @scatter_rows_f32_idx() -> (tensor<2x1xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %c1 = arith.constant 1 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  %idx_flat = tensor.from_elements %bar#0, %bar#1 : tensor<2xi32>
  %idx_e = tensor.empty() : tensor<2x1xi32>
  %idx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%idx_e : tensor<2x1xi32>) {
  ^bb0(%idx_o: i32):
    %idx_i0 = linalg.index 0 : index
    %idx_i1 = linalg.index 1 : index
    %idx_k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%idx_i0, %idx_i1)
    %idx_x = tensor.extract %idx_flat[%idx_k] : tensor<2xi32>
    linalg.yield %idx_x : i32
  } -> tensor<2x1xi32>
  util.return %idx : tensor<2x1xi32>
}

util.func private @scatter_rows_f32_e() -> (tensor<4x3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 1.0 : f32
  %c4 = arith.constant -3.0 : f32
  %c5 = arith.constant 2.0 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#0, %bar#0, %bar#1, %bar#2, %bar#3, %bar#0, %bar#0, %bar#0, %bar#4, %bar#5, %bar#0 : tensor<12xf32>
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

// iree_linalg_ext.scatter replacing rows 3 and 1 of a 4x3 zero tensor (unique_indices(true)).
func.func @scatter_rows_f32() {
  %upd_off = util.call @scatter_rows_f32_scalars() : () -> (f32)
  %idx = util.call @scatter_rows_f32_idx() : () -> (tensor<2x1xi32>)
  %e = util.call @scatter_rows_f32_e() : () -> (tensor<4x3xf32>)
  %dst_c = arith.constant 0.0 : f32
  %dst_e = tensor.empty() : tensor<4x3xf32>
  %dst = linalg.fill ins(%dst_c : f32) outs(%dst_e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %upd_e = tensor.empty() : tensor<2x3xf32>
  %upd = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%upd_e : tensor<2x3xf32>) {
  ^bb0(%upd_o: f32):
    %upd_i0 = linalg.index 0 : index
    %upd_i1 = linalg.index 1 : index
    %upd_n = affine.apply affine_map<(d0, d1) -> (((d0 * 3 + d1) * 5) mod 7)>(%upd_i0, %upd_i1)
    %upd_ni = arith.index_cast %upd_n : index to i64
    %upd_nf = arith.sitofp %upd_ni : i64 to f32
    %upd_x = arith.subf %upd_nf, %upd_off : f32
    linalg.yield %upd_x : f32
  } -> tensor<2x3xf32>
  %s = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%upd, %idx : tensor<2x3xf32>, tensor<2x1xi32>) outs(%dst : tensor<4x3xf32>) {
  ^bb0(%u: f32, %d: f32):
    iree_linalg_ext.yield %u : f32
  } -> tensor<4x3xf32>
  %s_v = hal.tensor.export %s : tensor<4x3xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4x3xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
