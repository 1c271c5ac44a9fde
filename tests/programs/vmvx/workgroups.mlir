// An elementwise kernel of several workgroups (vmvx: 64 elements each, 8 of them).
func.func @mix(%x: tensor<512xf32>, %y: tensor<512xf32>) -> tensor<512xf32> {
  %0 = arith.mulf %x, %y : tensor<512xf32>
  %1 = arith.addf %0, %x : tensor<512xf32>
  return %1 : tensor<512xf32>
}
