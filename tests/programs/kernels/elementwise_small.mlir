// bench_kernels.py's elementwise chain over 48 f32, small enough for the reference path
// (tests/vm/bytecode/test_compiled_blocks.py): tanh(exp(x) * 0.5) + pow(x, y), and min/max/abs/neg.
func.func @chain(%x: tensor<48xf32>, %y: tensor<48xf32>) -> (tensor<48xf32>, tensor<48xf32>) {
  %half = arith.constant dense<0.5> : tensor<48xf32>
  %0 = math.exp %x : tensor<48xf32>
  %1 = arith.mulf %0, %half : tensor<48xf32>
  %2 = math.tanh %1 : tensor<48xf32>
  %3 = math.powf %x, %y : tensor<48xf32>
  %4 = arith.addf %2, %3 : tensor<48xf32>
  %5 = arith.minimumf %x, %y : tensor<48xf32>
  %6 = math.absf %5 : tensor<48xf32>
  %7 = arith.negf %6 : tensor<48xf32>
  %8 = arith.maxnumf %7, %y : tensor<48xf32>
  %9 = arith.divf %8, %x : tensor<48xf32>
  return %4, %9 : tensor<48xf32>, tensor<48xf32>
}
