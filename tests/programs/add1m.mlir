// Elementwise add of two 1048576-element (4 MiB) f32 tensors.
func.func @add(%a: tensor<1048576xf32>, %b: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %0 = arith.addf %a, %b : tensor<1048576xf32>
  return %0 : tensor<1048576xf32>
}
