// Row argmax of a 512x1024 f32 tensor (the first index of the maximum).
func.func @argmax(%x: tensor<512x1024xf32>) -> tensor<512xi32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<512xf32>
  %e1 = tensor.empty() : tensor<512xi32>
  %m = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<512xf32>) -> tensor<512xf32>
  %i = linalg.fill ins(%c0 : i32) outs(%e1 : tensor<512xi32>) -> tensor<512xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x1024xf32>) outs(%m, %i : tensor<512xf32>, tensor<512xi32>) {
  ^bb0(%v: f32, %best: f32, %at: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %v, %best : f32
    %nb = arith.select %gt, %v, %best : f32
    %na = arith.select %gt, %ji, %at : i32
    linalg.yield %nb, %na : f32, i32
  } -> (tensor<512xf32>, tensor<512xi32>)
  return %r#1 : tensor<512xi32>
}
