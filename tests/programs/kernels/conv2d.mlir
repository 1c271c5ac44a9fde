// A 3x3 convolution, NHWC input 1x64x64x16, HWCF filter 3x3x16x16, stride 1, no padding.
func.func @conv2d(%x: tensor<1x64x64x16xf32>, %w: tensor<3x3x16x16xf32>) -> tensor<1x62x62x16xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<1x62x62x16xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<1x62x62x16xf32>) -> tensor<1x62x62x16xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x64x64x16xf32>, tensor<3x3x16x16xf32>) outs(%1 : tensor<1x62x62x16xf32>) -> tensor<1x62x62x16xf32>
  return %2 : tensor<1x62x62x16xf32>
}
