// ~512 MB of tensor (tests/tooling/test_heap_limit.py): a 2**27-element f32 fill the barrier keeps, read at one index.
// Cheap to run: the kernel is a fill, the result one element.
func.func @big(%x: f32, %i: index) -> f32 {
  %e = tensor.empty() : tensor<134217728xf32>
  %f = linalg.fill ins(%x : f32) outs(%e : tensor<134217728xf32>) -> tensor<134217728xf32>
  %b = util.optimization_barrier %f : tensor<134217728xf32>
  %r = tensor.extract %b[%i] : tensor<134217728xf32>
  return %r : f32
}
