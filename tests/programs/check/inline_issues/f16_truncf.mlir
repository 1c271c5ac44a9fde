// arith.truncf f32 -> f16 compiles for inline-dynamic but not for inline-static (vmvx-inline).
func.func @f16_truncf() -> tensor<2xf16> {
  %a = arith.constant 1.5 : f32
  %b = arith.constant -2.3 : f32
  %x:2 = util.optimization_barrier %a, %b : f32, f32
  %t = tensor.from_elements %x#0, %x#1 : tensor<2xf32>
  %h = arith.truncf %t : tensor<2xf32> to tensor<2xf16>
  return %h : tensor<2xf16>
}
