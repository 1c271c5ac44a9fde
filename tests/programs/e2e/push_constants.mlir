// Push constants: a dynamic length and a scalar argument reach the kernel as constants:
// y = x * s + t over a tensor<?xf32>.
func.func @affine(%x: tensor<?xf32>, %s: f32, %t: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    %a = arith.addf %m, %t : f32
    linalg.yield %a : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
