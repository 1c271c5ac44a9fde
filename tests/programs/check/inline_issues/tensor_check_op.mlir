// A check op on tensors does not lower for the inline models; the corpus exports tensors to buffer
// views (hal.tensor.export) and calls the check imports declared on buffer views.
func.func @tensor_check() {
  %c1 = arith.constant 1 : i32
  %x = util.optimization_barrier %c1 : i32
  %t = tensor.from_elements %x, %x : tensor<2xi32>
  check.expect_eq(%t, %t) : tensor<2xi32>
  return
}
