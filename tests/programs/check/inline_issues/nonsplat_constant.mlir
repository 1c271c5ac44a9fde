// A non-splat constant tensor does not compile for the inline models (util.unfoldable_constant or
// arith.constant alike); the corpus builds tensors from barriered scalars instead.
func.func @nonsplat() -> tensor<2xf32> {
  %c = util.unfoldable_constant dense<[1.0, -2.0]> : tensor<2xf32>
  %r = math.absf %c : tensor<2xf32>
  return %r : tensor<2xf32>
}
