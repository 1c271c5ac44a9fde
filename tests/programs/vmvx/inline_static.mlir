// For inline-static (vmvx-inline) with microkernels. iree-compile 3.13 cannot lower a microkernel
// call on a dispatch's input binding there ("failed to legalize operation 'util.buffer.subspan'"),
// so each function's one dispatch makes its operands from the dispatch index and scalar inputs,
// and the decomposed ops between them become vmvx.* calls on the dispatch's own buffers.
func.func @exp_index(%x: f32) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x6xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %j : index
    %ii = arith.index_cast %k : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %v = arith.mulf %fi, %x : f32
    %w = math.exp %v : f32
    %a = arith.addf %w, %v : f32
    %f = math.floor %a : f32
    linalg.yield %f : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}
func.func @int_index(%x: i32) -> tensor<3x5xi32> {
  %e = tensor.empty() : tensor<3x5xi32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<3x5xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %p = arith.muli %ii, %x : i32
    %q = arith.xori %p, %jj : i32
    %r = arith.shli %q, %jj : i32
    %s = arith.subi %r, %x : i32
    linalg.yield %s : i32
  } -> tensor<3x5xi32>
  return %g : tensor<3x5xi32>
}
