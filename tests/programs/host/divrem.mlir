// Integer division and remainder: C truncation semantics; x / 0 and INT_MIN / -1 are undefined in
// IREE's runtime (SIGFPE on x86-64).
func.func @div_i32(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
  %0 = arith.divsi %a, %b : i32
  %1 = arith.remsi %a, %b : i32
  %2 = arith.divui %a, %b : i32
  %3 = arith.remui %a, %b : i32
  return %0, %1, %2, %3 : i32, i32, i32, i32
}
func.func @div_i64(%a: i64, %b: i64) -> (i64, i64, i64, i64) {
  %0 = arith.divsi %a, %b : i64
  %1 = arith.remsi %a, %b : i64
  %2 = arith.divui %a, %b : i64
  %3 = arith.remui %a, %b : i64
  return %0, %1, %2, %3 : i64, i64, i64, i64
}
func.func @floor_ceil(%a: i32, %b: i32) -> (i32, i32) {
  %0 = arith.floordivsi %a, %b : i32
  %1 = arith.ceildivsi %a, %b : i32
  return %0, %1 : i32, i32
}
