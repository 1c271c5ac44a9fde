// Elementwise f32 over a rank-2 tensor: a * b + a, one dispatch (results print with [..] rows).
func.func @mul_add(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = arith.mulf %a, %b : tensor<3x4xf32>
  %1 = arith.addf %0, %a : tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}
