// Control flow: scf.for / scf.while lowered to branches with block operands, comparisons, select.
func.func @sum_squares(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ni = arith.index_cast %n : i32 to index
  %init = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %ni step %c1 iter_args(%acc = %init) -> (i32) {
    %ii = arith.index_cast %i : index to i32
    %sq = arith.muli %ii, %ii : i32
    %a = arith.addi %acc, %sq : i32
    scf.yield %a : i32
  }
  return %r : i32
}
func.func @collatz(%n: i64) -> (i64, i32) {
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  %z = arith.constant 0 : i64
  %s0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:3 = scf.while (%x = %n, %steps = %s0, %mx = %n) : (i64, i32, i64) -> (i64, i32, i64) {
    %cond = arith.cmpi ne, %x, %one : i64
    scf.condition(%cond) %x, %steps, %mx : i64, i32, i64
  } do {
  ^bb0(%x: i64, %steps: i32, %mx: i64):
    %rem = arith.remui %x, %two : i64
    %even = arith.cmpi eq, %rem, %z : i64
    %half = arith.divui %x, %two : i64
    %t = arith.muli %x, %three : i64
    %t1 = arith.addi %t, %one : i64
    %nx = arith.select %even, %half, %t1 : i64
    %ns = arith.addi %steps, %c1 : i32
    %nm = arith.maxsi %mx, %nx : i64
    scf.yield %nx, %ns, %nm : i64, i32, i64
  }
  return %r#2, %r#1 : i64, i32
}
func.func @newton_sqrt(%x: f64) -> (f64, i32) {
  %half = arith.constant 0.5 : f64
  %eps = arith.constant 1.0e-12 : f64
  %i0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%g = %x, %it = %i0) : (f64, i32) -> (f64, i32) {
    %sq = arith.mulf %g, %g : f64
    %err = arith.subf %sq, %x : f64
    %aerr = math.absf %err : f64
    %big = arith.cmpf ogt, %aerr, %eps : f64
    scf.condition(%big) %g, %it : f64, i32
  } do {
  ^bb0(%g: f64, %it: i32):
    %q = arith.divf %x, %g : f64
    %s = arith.addf %g, %q : f64
    %ng = arith.mulf %s, %half : f64
    %ni = arith.addi %it, %c1 : i32
    scf.yield %ng, %ni : f64, i32
  }
  return %r#0, %r#1 : f64, i32
}
func.func @cmp_i32(%a: i32, %b: i32) -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %0 = arith.cmpi eq, %a, %b : i32
  %1 = arith.cmpi ne, %a, %b : i32
  %2 = arith.cmpi slt, %a, %b : i32
  %3 = arith.cmpi sle, %a, %b : i32
  %4 = arith.cmpi sgt, %a, %b : i32
  %5 = arith.cmpi sge, %a, %b : i32
  %6 = arith.cmpi ult, %a, %b : i32
  %7 = arith.cmpi ule, %a, %b : i32
  %8 = arith.cmpi ugt, %a, %b : i32
  %9 = arith.cmpi uge, %a, %b : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}
func.func @cmp_f32(%a: f32, %b: f32) -> (i1, i1, i1, i1, i1, i1, i1, i1) {
  %0 = arith.cmpf oeq, %a, %b : f32
  %1 = arith.cmpf une, %a, %b : f32
  %2 = arith.cmpf olt, %a, %b : f32
  %3 = arith.cmpf ole, %a, %b : f32
  %4 = arith.cmpf ogt, %a, %b : f32
  %5 = arith.cmpf uge, %a, %b : f32
  %6 = arith.cmpf uno, %a, %b : f32
  %7 = arith.cmpf ueq, %a, %b : f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : i1, i1, i1, i1, i1, i1, i1, i1
}
func.func @select(%c: i32, %a: f32, %b: f32, %x: i64, %y: i64) -> (f32, i64, i32) {
  %z = arith.constant 0 : i32
  %p = arith.cmpi sgt, %c, %z : i32
  %0 = arith.select %p, %a, %b : f32
  %1 = arith.select %p, %x, %y : i64
  %m = arith.minsi %c, %z : i32
  return %0, %1, %m : f32, i64, i32
}
