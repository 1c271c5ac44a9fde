// Row argmax of a 6x37 f32 tensor (the first index of the maximum): bench_kernels.py's argmax, small
// enough for the reference path (tests/vm/bytecode/test_compiled_blocks.py).
func.func @argmax(%x: tensor<6x37xf32>) -> tensor<6xi32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %e0 = tensor.empty() : tensor<6xf32>
  %e1 = tensor.empty() : tensor<6xi32>
  %m = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<6xf32>) -> tensor<6xf32>
  %i = linalg.fill ins(%c0 : i32) outs(%e1 : tensor<6xi32>) -> tensor<6xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x37xf32>) outs(%m, %i : tensor<6xf32>, tensor<6xi32>) {
  ^bb0(%v: f32, %best: f32, %at: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %v, %best : f32
    %nb = arith.select %gt, %v, %best : f32
    %na = arith.select %gt, %ji, %at : i32
    linalg.yield %nb, %na : f32, i32
  } -> (tensor<6xf32>, tensor<6xi32>)
  return %r#1 : tensor<6xi32>
}
