// A rank-2 tensor computed from constants alone is hoisted out of the function into a global
// (__hoisted_tensor_2x3xf32__offset in the VM IR) whose buffer the inline models never create: the
// call fails at run time. The corpus's pattern kernels subtract an offset that comes out of a
// never-inlined function.
func.func @iota_2d() -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x3xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = affine.apply affine_map<(i, j) -> (i * 3 + j)>(%i, %j)
    %ki = arith.index_cast %k : index to i32
    %f = arith.sitofp %ki : i32 to f32
    linalg.yield %f : f32
  } -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
