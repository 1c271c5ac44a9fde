// Denormal inputs and results, for the floating-point state IREE's local HAL pushes around a
// dispatch (tests/hal/local/test_fpu_state.py): each function is one elementwise dispatch.
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @add64(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
  %0 = arith.addf %a, %b : tensor<4xf64>
  return %0 : tensor<4xf64>
}
