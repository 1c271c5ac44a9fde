// Internal calls: mixed i32/i64/f32/f64 arguments and results (64-bit values on even registers in
// the callee), and a call inside a loop inside a call (kept as calls by the never-inline policy).
// (A recursive util.func makes iree-compile 3.13 loop forever, so there is none here.)
util.func private @mix(%a: i32, %b: i64, %c: f32, %d: f64) -> (i64, f64, i32)
    attributes {inlining_policy = #util.inline.never} {
  %ae = arith.extsi %a : i32 to i64
  %s = arith.addi %ae, %b : i64
  %ce = arith.extf %c : f32 to f64
  %t = arith.mulf %ce, %d : f64
  %c7 = arith.constant 7 : i32
  %u = arith.muli %a, %c7 : i32
  util.return %s, %t, %u : i64, f64, i32
}
util.func private @scale2(%x: f32, %n: i64) -> (f32, i64) attributes {inlining_policy = #util.inline.never} {
  %two = arith.constant 2.0 : f32
  %y = arith.mulf %x, %two : f32
  %c1 = arith.constant 1 : i64
  %m = arith.addi %n, %c1 : i64
  util.return %y, %m : f32, i64
}
util.func private @chain(%x: f32, %k: i32) -> (f32, i64) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ki = arith.index_cast %k : i32 to index
  %z = arith.constant 0 : i64
  %r:2 = scf.for %i = %c0 to %ki step %c1 iter_args(%a = %x, %n = %z) -> (f32, i64) {
    %y:2 = util.call @scale2(%a, %n) : (f32, i64) -> (f32, i64)
    scf.yield %y#0, %y#1 : f32, i64
  }
  util.return %r#0, %r#1 : f32, i64
}
func.func @caller(%a: i32, %b: i64, %c: f32, %d: f64) -> (i64, f64, i32) {
  %0:3 = util.call @mix(%a, %b, %c, %d) : (i32, i64, f32, f64) -> (i64, f64, i32)
  %1:3 = util.call @mix(%0#2, %0#0, %c, %0#1) : (i32, i64, f32, f64) -> (i64, f64, i32)
  return %1#0, %1#1, %1#2 : i64, f64, i32
}
func.func @doubling(%x: f32, %k: i32) -> (f32, i64) {
  %r:2 = util.call @chain(%x, %k) : (f32, i32) -> (f32, i64)
  return %r#0, %r#1 : f32, i64
}
