// Scalar integer and float arithmetic on i32 / i64 / f32 / f64 (no tensors: no HAL imports).
func.func @i32_ops(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %add = arith.addi %a, %b : i32
  %sub = arith.subi %a, %b : i32
  %mul = arith.muli %a, %b : i32
  %and = arith.andi %a, %b : i32
  %or = arith.ori %a, %b : i32
  %xor = arith.xori %a, %b : i32
  %c31 = arith.constant 31 : i32
  %amt = arith.andi %b, %c31 : i32
  %shl = arith.shli %a, %amt : i32
  %shrs = arith.shrsi %a, %amt : i32
  %shru = arith.shrui %a, %amt : i32
  %max = arith.maxui %a, %b : i32
  return %add, %sub, %mul, %and, %or, %xor, %shl, %shrs, %shru, %max
      : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
}
func.func @i64_ops(%a: i64, %b: i64) -> (i64, i64, i64, i64, i64, i64, i64) {
  %add = arith.addi %a, %b : i64
  %mul = arith.muli %a, %b : i64
  %c = arith.constant 123456789012 : i64
  %sub = arith.subi %c, %a : i64
  %c63 = arith.constant 63 : i64
  %amt = arith.andi %b, %c63 : i64
  %shl = arith.shli %a, %amt : i64
  %shr = arith.shrsi %a, %amt : i64
  %min = arith.minsi %a, %b : i64
  %umax = arith.maxui %a, %b : i64
  return %add, %mul, %sub, %shl, %shr, %min, %umax : i64, i64, i64, i64, i64, i64, i64
}
func.func @f32_ops(%a: f32, %b: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %add = arith.addf %a, %b : f32
  %mul = arith.mulf %a, %b : f32
  %div = arith.divf %a, %b : f32
  %c = arith.constant 0.1 : f32
  %sub = arith.subf %a, %c : f32
  %neg = arith.negf %a : f32
  %abs = math.absf %b : f32
  %fma = math.fma %a, %b, %c : f32
  %min = arith.minimumf %a, %b : f32
  return %add, %mul, %div, %sub, %neg, %abs, %fma, %min : f32, f32, f32, f32, f32, f32, f32, f32
}
func.func @f32_math(%a: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %floor = math.floor %a : f32
  %ceil = math.ceil %a : f32
  %round = math.round %a : f32
  %even = math.roundeven %a : f32
  %sqrt = math.sqrt %a : f32
  %exp = math.exp %a : f32
  %sin = math.sin %a : f32
  return %floor, %ceil, %round, %even, %sqrt, %exp, %sin : f32, f32, f32, f32, f32, f32, f32
}
func.func @f64_ops(%a: f64, %b: f64) -> (f64, f64, f64, f64, f64) {
  %add = arith.addf %a, %b : f64
  %div = arith.divf %a, %b : f64
  %c = arith.constant 0.1 : f64
  %mul = arith.mulf %a, %c : f64
  %sub = arith.subf %mul, %b : f64
  %floor = math.floor %a : f64
  return %add, %div, %mul, %sub, %floor : f64, f64, f64, f64, f64
}
