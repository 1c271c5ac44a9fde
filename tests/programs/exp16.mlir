// Elementwise exp of a 16-element f32 tensor (math.exp, expanded inline by iree-compile).
func.func @expf(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = math.exp %a : tensor<16xf32>
  return %0 : tensor<16xf32>
}
