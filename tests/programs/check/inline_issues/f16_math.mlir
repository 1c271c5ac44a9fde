// f16 arithmetic compiles for inline-dynamic but not for inline-static (vmvx-inline); the corpus only
// moves f16 values (f16_reverse in element_types.mlir).
func.func @f16_add() -> tensor<2xf16> {
  %a = arith.constant 15360 : i16
  %b = arith.constant -16384 : i16
  %x:2 = util.optimization_barrier %a, %b : i16, i16
  %bits = tensor.from_elements %x#0, %x#1 : tensor<2xi16>
  %h = arith.bitcast %bits : tensor<2xi16> to tensor<2xf16>
  %s = arith.addf %h, %h : tensor<2xf16>
  return %s : tensor<2xf16>
}
