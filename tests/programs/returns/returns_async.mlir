// Zero, one and two results on the async-external model (its exports take a wait and a signal
// fence after their arguments; iree-compile 3.13 cannot return a scalar next to tensors there).
func.func @nothing() {
  return
}
func.func @one(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @two(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  %1 = arith.subf %a, %b : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
