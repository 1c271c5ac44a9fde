// A row reduction and a whole sum next to elementwise microkernels.
func.func @row_sums(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %x0 = math.exp %a : tensor<4x8xf32>
  %x = util.optimization_barrier %x0 : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @sum_i32(%a: tensor<64xi32>) -> tensor<i32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<i32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<i32>) -> tensor<i32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a : tensor<64xi32>) outs(%f : tensor<i32>) {
  ^bb0(%v: i32, %acc: i32):
    %s = arith.addi %v, %acc : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  return %r : tensor<i32>
}
