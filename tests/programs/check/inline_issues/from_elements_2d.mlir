// tensor.from_elements of a rank-2 tensor does not compile; the corpus reshapes a rank-1 one in a
// kernel that reads it with tensor.extract.
func.func @from_elements_2d() -> tensor<2x2xf32> {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %c = arith.constant 3.0 : f32
  %d = arith.constant 4.0 : f32
  %x:4 = util.optimization_barrier %a, %b, %c, %d : f32, f32, f32, f32
  %t = tensor.from_elements %x#0, %x#1, %x#2, %x#3 : tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}
