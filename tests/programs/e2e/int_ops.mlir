// Integer kernels: i32 multiply-and-shift and an i64 elementwise sum (signless element types).
func.func @mix(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {
  %c3 = arith.constant dense<3> : tensor<8xi32>
  %0 = arith.muli %a, %b : tensor<8xi32>
  %1 = arith.shrsi %0, %c3 : tensor<8xi32>
  return %1 : tensor<8xi32>
}

func.func @add64(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  %0 = arith.addi %a, %b : tensor<3xi64>
  return %0 : tensor<3xi64>
}
