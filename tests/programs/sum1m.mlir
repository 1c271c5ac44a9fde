// Sum of a 1048576-element (4 MiB) f32 tensor: for inline-static, a kernel of VM bytecode whose
// time is the interpreter's (the bytecode-bound benchmark of benchmarks/bench_program.py).
func.func @sum(%a: tensor<1048576xf32>) -> tensor<f32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = linalg.reduce ins(%a : tensor<1048576xf32>) outs(%zero : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<f32>
}
