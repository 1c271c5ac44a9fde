// vmvx microkernels with data tiling (--iree-opt-data-tiling): pack, mmt4d, unpack.
func.func @matmul_f32(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
func.func @matmul_acc(%a: tensor<9x16xf32>, %b: tensor<16x10xf32>, %c: tensor<9x10xf32>) -> tensor<9x10xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<9x16xf32>, tensor<16x10xf32>) outs(%c : tensor<9x10xf32>) -> tensor<9x10xf32>
  return %r : tensor<9x10xf32>
}
func.func @matmul_i8(%a: tensor<6x9xi8>, %b: tensor<9x5xi8>) -> tensor<6x5xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<6x5xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<6x5xi32>) -> tensor<6x5xi32>
  %r = linalg.matmul ins(%a, %b : tensor<6x9xi8>, tensor<9x5xi8>) outs(%f : tensor<6x5xi32>) -> tensor<6x5xi32>
  return %r : tensor<6x5xi32>
}
func.func @matmul_dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
