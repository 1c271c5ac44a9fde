// Int <-> float conversions (f32 <- f64 and f64 -> int are not legal for the VM target in 3.13).
func.func @to_float(%a: i32, %b: i64) -> (f32, f32, f32, f32, f64, f64) {
  %0 = arith.sitofp %a : i32 to f32
  %1 = arith.uitofp %a : i32 to f32
  %2 = arith.sitofp %b : i64 to f32
  %3 = arith.uitofp %b : i64 to f32
  %4 = arith.sitofp %b : i64 to f64
  %5 = arith.uitofp %b : i64 to f64
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f64, f64
}
func.func @to_int(%x: f32) -> (i32, i32, i64, i64) {
  %0 = arith.fptosi %x : f32 to i32
  %1 = arith.fptoui %x : f32 to i32
  %2 = arith.fptosi %x : f32 to i64
  %3 = arith.fptoui %x : f32 to i64
  return %0, %1, %2, %3 : i32, i32, i64, i64
}
func.func @ints(%a: i32, %b: i64) -> (i64, i64, i32, i32, i32, i32, i32) {
  %0 = arith.extsi %a : i32 to i64
  %1 = arith.extui %a : i32 to i64
  %2 = arith.trunci %b : i64 to i32
  %t8 = arith.trunci %a : i32 to i8
  %3 = arith.extsi %t8 : i8 to i32
  %4 = arith.extui %t8 : i8 to i32
  %t16 = arith.trunci %a : i32 to i16
  %5 = arith.extui %t16 : i16 to i32
  %6 = arith.extsi %t16 : i16 to i32
  return %0, %1, %2, %3, %4, %5, %6 : i64, i64, i32, i32, i32, i32, i32
}
func.func @bits(%x: f32, %y: f64) -> (f64, i32, i64, f32) {
  %0 = arith.extf %x : f32 to f64
  %1 = arith.bitcast %x : f32 to i32
  %2 = arith.bitcast %y : f64 to i64
  %c = arith.constant 1 : i32
  %3 = arith.addi %1, %c : i32
  %4 = arith.bitcast %3 : i32 to f32
  return %0, %1, %2, %4 : f64, i32, i64, f32
}
