// Mutable globals of every value type, initialized by the module's __init and updated per call.
util.global private mutable @count = 10 : i32
util.global private mutable @total = 0 : i64
util.global private mutable @scale = 1.5 : f32
util.global private mutable @acc = 0.25 : f64
func.func @next(%step: i32) -> (i32, i64, f32, f64) {
  %c = util.global.load @count : i32
  %n = arith.addi %c, %step : i32
  util.global.store %n, @count : i32
  %t = util.global.load @total : i64
  %ne = arith.extsi %n : i32 to i64
  %nt = arith.addi %t, %ne : i64
  util.global.store %nt, @total : i64
  %s = util.global.load @scale : f32
  %two = arith.constant 2.0 : f32
  %ns = arith.mulf %s, %two : f32
  util.global.store %ns, @scale : f32
  %a = util.global.load @acc : f64
  %h = arith.constant 0.5 : f64
  %na = arith.addf %a, %h : f64
  util.global.store %na, @acc : f64
  return %n, %nt, %ns, %na : i32, i64, f32, f64
}
// Three calls of @next in one invocation: the oracle for three successive invocations of @next.
func.func @next3(%s0: i32, %s1: i32, %s2: i32)
    -> (i32, i64, f32, f64, i32, i64, f32, f64, i32, i64, f32, f64) {
  %a:4 = call @next(%s0) : (i32) -> (i32, i64, f32, f64)
  %b:4 = call @next(%s1) : (i32) -> (i32, i64, f32, f64)
  %c:4 = call @next(%s2) : (i32) -> (i32, i64, f32, f64)
  return %a#0, %a#1, %a#2, %a#3, %b#0, %b#1, %b#2, %b#3, %c#0, %c#1, %c#2, %c#3
      : i32, i64, f32, f64, i32, i64, f32, f64, i32, i64, f32, f64
}
