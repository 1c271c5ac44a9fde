// Softmax over the last axis of a 12x128x64 f32 tensor: softmax_large's loop nest (the 12 batches a
// loop inside each workgroup, three index adds per element) at a size that runs in a test.
func.func @softmax_3d(%x: tensor<12x128x64xf32>) -> tensor<12x128x64xf32> {
  %0 = tensor.empty() : tensor<12x128x64xf32>
  %1 = linalg.softmax dimension(2) ins(%x : tensor<12x128x64xf32>) outs(%0 : tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  return %1 : tensor<12x128x64xf32>
}
