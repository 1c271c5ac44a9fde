// Softmax over the last axis of a 12x128x40960 f32 tensor, the size of IREE's regression program
// softmax_large (tests/e2e/regression), with the tensor an input so that it compiles for the
// inline models: bench_kernels.py --whole-run times whole runs of it against iree-run-module.
func.func @softmax_large(%x: tensor<12x128x40960xf32>) -> tensor<12x128x40960xf32> {
  %0 = tensor.empty() : tensor<12x128x40960xf32>
  %1 = linalg.softmax dimension(2) ins(%x : tensor<12x128x40960xf32>) outs(%0 : tensor<12x128x40960xf32>) -> tensor<12x128x40960xf32>
  return %1 : tensor<12x128x40960xf32>
}
