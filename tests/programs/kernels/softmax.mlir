// Softmax over the last axis of a 64x4096 f32 tensor: max reduction, exp, sum reduction, division.
func.func @softmax(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = tensor.empty() : tensor<64x4096xf32>
  %1 = linalg.softmax dimension(1) ins(%x : tensor<64x4096xf32>) outs(%0 : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  return %1 : tensor<64x4096xf32>
}
