// bench_kernels.py's matmul at 7x9 by 9x5, small enough for the reference path
// (tests/vm/bytecode/test_compiled_blocks.py): vm.fma.f32 accumulations, vm.fma.i64 indices.
func.func @matmul(%a: tensor<7x9xf32>, %b: tensor<9x5xf32>) -> tensor<7x5xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<7x5xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<7x5xf32>) -> tensor<7x5xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<7x9xf32>, tensor<9x5xf32>) outs(%1 : tensor<7x5xf32>) -> tensor<7x5xf32>
  return %2 : tensor<7x5xf32>
}
