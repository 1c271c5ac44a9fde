// bench_kernels.py's 3x3 convolution at 1x6x6x3 by 3x3x3x4, small enough for the reference path
// (tests/vm/bytecode/test_compiled_blocks.py): a loop nest five deep.
func.func @conv2d(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x4x4x4xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) outs(%1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}
