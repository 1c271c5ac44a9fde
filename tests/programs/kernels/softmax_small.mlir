// Softmax over the last axis of a 5x37 f32 tensor: bench_kernels.py's softmax, small enough for the
// reference path (tests/vm/bytecode/test_compiled_blocks.py). vmvx-inline's max reduction starts
// each row from a NaN loaded from the output buffer.
func.func @softmax(%x: tensor<5x37xf32>) -> tensor<5x37xf32> {
  %0 = tensor.empty() : tensor<5x37xf32>
  %1 = linalg.softmax dimension(1) ins(%x : tensor<5x37xf32>) outs(%0 : tensor<5x37xf32>) -> tensor<5x37xf32>
  return %1 : tensor<5x37xf32>
}
