// a * b + c over three inputs: one kernel with four bindings (three in, one out).
func.func @muladd(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  %init = tensor.empty() : tensor<64xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                       affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%a, %b, %c : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      outs(%init : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %m, %z : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
