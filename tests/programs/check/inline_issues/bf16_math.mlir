// bf16 arithmetic compiles for inline-dynamic but not for inline-static (vmvx-inline); truncf to
// bf16 and extf from it compile for both (bf16_round_trip in element_types.mlir).
func.func @bf16_mul() -> tensor<2xbf16> {
  %a = arith.constant 1.5 : f32
  %b = arith.constant -2.3 : f32
  %x:2 = util.optimization_barrier %a, %b : f32, f32
  %t = tensor.from_elements %x#0, %x#1 : tensor<2xf32>
  %h = arith.truncf %t : tensor<2xf32> to tensor<2xbf16>
  %m = arith.mulf %h, %h : tensor<2xbf16>
  return %m : tensor<2xbf16>
}
