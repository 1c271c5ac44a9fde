// Several dispatches in one function: an elementwise op, a reduction of its result, and an
// elementwise op using the reduction (the compiler cannot fuse the three into one kernel).
func.func @normalize(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %sum = arith.addf %a, %b : tensor<16xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %total = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
      iterator_types = ["reduction"]}
      ins(%sum : tensor<16xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %empty = tensor.empty() : tensor<16xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>,
                       affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%sum, %total : tensor<16xf32>, tensor<f32>) outs(%empty : tensor<16xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %d = arith.divf %x, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
