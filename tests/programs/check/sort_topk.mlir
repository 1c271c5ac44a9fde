// Check-style corpus: sort and top-k.
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @sort_f32_x() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -1.0 : f32
  %c2 = arith.constant 2.5 : f32
  %c3 = arith.constant 0.0 : f32
  %c4 = arith.constant 7.0 : f32
  %c5 = arith.constant -4.5 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %x = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %x : tensor<6xf32>
}

util.func private @sort_f32_e() -> (tensor<6xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -4.5 : f32
  %c1 = arith.constant -1.0 : f32
  %c2 = arith.constant 0.0 : f32
  %c3 = arith.constant 2.5 : f32
  %c4 = arith.constant 3.0 : f32
  %c5 = arith.constant 7.0 : f32
  %bar:6 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5 : f32, f32, f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5 : tensor<6xf32>
  util.return %e : tensor<6xf32>
}

// iree_linalg_ext.sort, ascending, in place on a 1-D f32 tensor.
func.func @sort_f32() {
  %x = util.call @sort_f32_x() : () -> (tensor<6xf32>)
  %e = util.call @sort_f32_e() : () -> (tensor<6xf32>)
  %s = iree_linalg_ext.sort dimension(0) outs(%x : tensor<6xf32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<6xf32>
  %s_v = hal.tensor.export %s : tensor<6xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<6xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @sort_pairs_desc_i32_keys() -> (tensor<5xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %c1 = arith.constant -1 : i32
  %c2 = arith.constant 9 : i32
  %c3 = arith.constant 0 : i32
  %c4 = arith.constant 5 : i32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : i32, i32, i32, i32, i32
  %keys = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xi32>
  util.return %keys : tensor<5xi32>
}

util.func private @sort_pairs_desc_i32_ids() -> (tensor<5xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : i32, i32, i32, i32, i32
  %ids = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xi32>
  util.return %ids : tensor<5xi32>
}

util.func private @sort_pairs_desc_i32_ek() -> (tensor<5xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 9 : i32
  %c1 = arith.constant 5 : i32
  %c2 = arith.constant 3 : i32
  %c3 = arith.constant 0 : i32
  %c4 = arith.constant -1 : i32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : i32, i32, i32, i32, i32
  %ek = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xi32>
  util.return %ek : tensor<5xi32>
}

util.func private @sort_pairs_desc_i32_ei() -> (tensor<5xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2 : i32
  %c1 = arith.constant 4 : i32
  %c2 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 1 : i32
  %bar:5 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4 : i32, i32, i32, i32, i32
  %ei = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4 : tensor<5xi32>
  util.return %ei : tensor<5xi32>
}

// A descending key sort carrying an index tensor along (an argsort); the keys are distinct.
func.func @sort_pairs_desc_i32() {
  %keys = util.call @sort_pairs_desc_i32_keys() : () -> (tensor<5xi32>)
  %ids = util.call @sort_pairs_desc_i32_ids() : () -> (tensor<5xi32>)
  %ek = util.call @sort_pairs_desc_i32_ek() : () -> (tensor<5xi32>)
  %ei = util.call @sort_pairs_desc_i32_ei() : () -> (tensor<5xi32>)
  %s:2 = iree_linalg_ext.sort dimension(0) outs(%keys, %ids : tensor<5xi32>, tensor<5xi32>) {
  ^bb0(%a: i32, %b: i32, %ia: i32, %ib: i32):
    %gt = arith.cmpi sgt, %a, %b : i32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<5xi32>, tensor<5xi32>
  %sk_v = hal.tensor.export %s#0 : tensor<5xi32> -> !hal.buffer_view
  %si_v = hal.tensor.export %s#1 : tensor<5xi32> -> !hal.buffer_view
  %ek_v = hal.tensor.export %ek : tensor<5xi32> -> !hal.buffer_view
  %ei_v = hal.tensor.export %ei : tensor<5xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%sk_v, %ek_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%si_v, %ei_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @sort_rows_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @sort_rows_f32_e() -> (tensor<3x5xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant -5.0 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 1.0 : f32
  %c3 = arith.constant 2.0 : f32
  %c4 = arith.constant 5.0 : f32
  %c5 = arith.constant -4.0 : f32
  %c6 = arith.constant -3.0 : f32
  %c7 = arith.constant 0.0 : f32
  %c8 = arith.constant 3.0 : f32
  %c9 = arith.constant 4.0 : f32
  %c10 = arith.constant -1.0 : f32
  %bar:11 = util.optimization_barrier %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  %e_flat = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3, %bar#4, %bar#5, %bar#6, %bar#7, %bar#8, %bar#9, %bar#0, %bar#1, %bar#10, %bar#3, %bar#4 : tensor<15xf32>
  %e_e = tensor.empty() : tensor<3x5xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e_e : tensor<3x5xf32>) {
  ^bb0(%e_o: f32):
    %e_i0 = linalg.index 0 : index
    %e_i1 = linalg.index 1 : index
    %e_k = affine.apply affine_map<(d0, d1) -> (d0 * 5 + d1)>(%e_i0, %e_i1)
    %e_x = tensor.extract %e_flat[%e_k] : tensor<15xf32>
    linalg.yield %e_x : f32
  } -> tensor<3x5xf32>
  util.return %e : tensor<3x5xf32>
}

// Each row of a 3x5 pattern sorted along dimension 1 (repeated values included).
func.func @sort_rows_f32() {
  %x_off = util.call @sort_rows_f32_scalars() : () -> (f32)
  %e = util.call @sort_rows_f32_e() : () -> (tensor<3x5xf32>)
  %x_e = tensor.empty() : tensor<3x5xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%x_e : tensor<3x5xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_i1 = linalg.index 1 : index
    %x_n = affine.apply affine_map<(d0, d1) -> (((d0 * 5 + d1) * 7) mod 11)>(%x_i0, %x_i1)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<3x5xf32>
  %s = iree_linalg_ext.sort dimension(1) outs(%x : tensor<3x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<3x5xf32>
  %s_v = hal.tensor.export %s : tensor<3x5xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<3x5xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%s_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @topk_f32_scalars() -> (f32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %bar = util.optimization_barrier %c0 : f32
  util.return %bar : f32
}

util.func private @topk_f32_ev() -> (tensor<3xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 5.0 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 3.0 : f32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : f32, f32, f32
  %ev = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xf32>
  util.return %ev : tensor<3xf32>
}

util.func private @topk_f32_ei() -> (tensor<3xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %c1 = arith.constant 6 : i32
  %c2 = arith.constant 9 : i32
  %bar:3 = util.optimization_barrier %c0, %c1, %c2 : i32, i32, i32
  %ei = tensor.from_elements %bar#0, %bar#1, %bar#2 : tensor<3xi32>
  util.return %ei : tensor<3xi32>
}

// iree_linalg_ext.topk, k = 3 of 10 distinct values: the values, largest first, and their indices.
func.func @topk_f32() {
  %x_off = util.call @topk_f32_scalars() : () -> (f32)
  %ev = util.call @topk_f32_ev() : () -> (tensor<3xf32>)
  %ei = util.call @topk_f32_ei() : () -> (tensor<3xi32>)
  %x_e = tensor.empty() : tensor<10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%x_e : tensor<10xf32>) {
  ^bb0(%x_o: f32):
    %x_i0 = linalg.index 0 : index
    %x_n = affine.apply affine_map<(d0) -> (((d0) * 7) mod 11)>(%x_i0)
    %x_ni = arith.index_cast %x_n : index to i64
    %x_nf = arith.sitofp %x_ni : i64 to f32
    %x_x = arith.subf %x_nf, %x_off : f32
    linalg.yield %x_x : f32
  } -> tensor<10xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i32
  %tv_e = tensor.empty() : tensor<3xf32>
  %tv0 = linalg.fill ins(%ninf : f32) outs(%tv_e : tensor<3xf32>) -> tensor<3xf32>
  %ti_e = tensor.empty() : tensor<3xi32>
  %ti0 = linalg.fill ins(%zero : i32) outs(%ti_e : tensor<3xi32>) -> tensor<3xi32>
  %t:2 = iree_linalg_ext.topk dimension(0) ins(%x : tensor<10xf32>) outs(%tv0, %ti0 : tensor<3xf32>, tensor<3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>, tensor<3xi32>
  %tv_v = hal.tensor.export %t#0 : tensor<3xf32> -> !hal.buffer_view
  %ti_v = hal.tensor.export %t#1 : tensor<3xi32> -> !hal.buffer_view
  %ev_v = hal.tensor.export %ev : tensor<3xf32> -> !hal.buffer_view
  %ei_v = hal.tensor.export %ei : tensor<3xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%tv_v, %ev_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_eq(%ti_v, %ei_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}
