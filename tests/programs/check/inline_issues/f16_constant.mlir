// An f16 scalar constant on the host does not compile; the corpus spells f16 values by
// their bits (i16, then arith.bitcast in a kernel) and makes bf16 with arith.truncf from f32.
func.func @f16_constant() -> tensor<2xf16> {
  %h = arith.constant 0.5 : f16
  %x = util.optimization_barrier %h : f16
  %t = tensor.from_elements %x, %x : tensor<2xf16>
  return %t : tensor<2xf16>
}
