// vmvx microkernels: a transpose (copy.2d with a column stride), a strided slice copy, a fill.
func.func @transpose(%a: tensor<3x5xi32>) -> tensor<5x3xi32> {
  %e = tensor.empty() : tensor<5x3xi32>
  %t = linalg.transpose ins(%a : tensor<3x5xi32>) outs(%e : tensor<5x3xi32>) permutation = [1, 0]
  return %t : tensor<5x3xi32>
}
func.func @transpose_f32(%a: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%a : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) permutation = [1, 0]
  return %t : tensor<6x4xf32>
}
func.func @slice_copy(%a: tensor<6x8xi32>) -> tensor<3x4xi32> {
  %s = tensor.extract_slice %a[1, 2] [3, 4] [2, 1] : tensor<6x8xi32> to tensor<3x4xi32>
  %b = util.optimization_barrier %s : tensor<3x4xi32>
  return %b : tensor<3x4xi32>
}
// The fill initializes the matmul's accumulator (fill.2d.x32 of the f32's bits).
func.func @fill_matmul(%x: f32, %a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %f = linalg.fill ins(%x : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
