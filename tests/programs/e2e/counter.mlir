// A mutable global counter: every call of @next adds its step and returns the new value, so
// successive calls in one context see 10 + step, 10 + 2 * step, ...
util.global private mutable @count = 10 : i64

func.func @next(%step: i64) -> i64 {
  %c = util.global.load @count : i64
  %n = arith.addi %c, %step : i64
  util.global.store %n, @count : i64
  return %n : i64
}

// A tensor kept in a mutable global: each call adds %x to it and returns the running total.
util.global private mutable @total = dense<0.0> : tensor<4xf32>

func.func @accumulate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = util.global.load @total : tensor<4xf32>
  %n = arith.addf %t, %x : tensor<4xf32>
  util.global.store %n, @total : tensor<4xf32>
  return %n : tensor<4xf32>
}
