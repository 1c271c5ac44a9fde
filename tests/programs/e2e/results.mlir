// Several results of mixed kinds: two tensors and a scalar computed on the host.
func.func @stats(%a: tensor<8xf32>, %b: tensor<8xf32>, %k: i32) -> (tensor<8xf32>, tensor<8xf32>, i32) {
  %sum = arith.addf %a, %b : tensor<8xf32>
  %max = arith.maximumf %a, %b : tensor<8xf32>
  %c3 = arith.constant 3 : i32
  %k3 = arith.muli %k, %c3 : i32
  return %sum, %max, %k3 : tensor<8xf32>, tensor<8xf32>, i32
}
