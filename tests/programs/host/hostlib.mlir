// A bytecode module other modules import from (module name `hostlib`).
module @hostlib {
  func.func @mix(%a: i32, %b: i64, %c: f32) -> (i64, f32, i32) {
    %ae = arith.extsi %a : i32 to i64
    %s = arith.muli %ae, %b : i64
    %t = arith.addf %c, %c : f32
    %k = arith.constant 3 : i32
    %v = arith.addi %a, %k : i32
    return %s, %t, %v : i64, f32, i32
  }
}
