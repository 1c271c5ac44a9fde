// An elementwise chain over 262144 f32: tanh(exp(x) * 0.5) + pow(x, y).
func.func @chain(%x: tensor<262144xf32>, %y: tensor<262144xf32>) -> tensor<262144xf32> {
  %half = arith.constant dense<0.5> : tensor<262144xf32>
  %0 = math.exp %x : tensor<262144xf32>
  %1 = arith.mulf %0, %half : tensor<262144xf32>
  %2 = math.tanh %1 : tensor<262144xf32>
  %3 = math.powf %x, %y : tensor<262144xf32>
  %4 = arith.addf %2, %3 : tensor<262144xf32>
  return %4 : tensor<262144xf32>
}
