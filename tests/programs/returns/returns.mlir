// Zero, one and several results (tensors and scalars): how Program.call hands them back is checked
// against iree.runtime's function invoker on the same .vmfb (tests/tooling/test_program_returns.py).
func.func @nothing() {
  return
}
func.func @one(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @two(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  %1 = arith.subf %a, %b : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func @mixed(%a: tensor<4xf32>, %n: i32) -> (tensor<4xf32>, i32) {
  %0 = arith.mulf %a, %a : tensor<4xf32>
  %c = arith.constant 3 : i32
  %1 = arith.addi %n, %c : i32
  return %0, %1 : tensor<4xf32>, i32
}
func.func @scalar(%x: i64) -> i64 {
  %c = arith.constant 5 : i64
  %0 = arith.muli %x, %c : i64
  return %0 : i64
}
