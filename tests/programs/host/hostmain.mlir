// Imports hostlib.mix: vm.call of an import with i32/i64/f32 arguments and results.
module @hostmain {
  func.func private @hostlib.mix(i32, i64, f32) -> (i64, f32, i32)
  func.func @run(%a: i32, %b: i64, %c: f32) -> (i64, f32, i32) {
    %0:3 = call @hostlib.mix(%a, %b, %c) : (i32, i64, f32) -> (i64, f32, i32)
    %1:3 = call @hostlib.mix(%0#2, %0#0, %0#1) : (i32, i64, f32) -> (i64, f32, i32)
    return %1#0, %1#1, %1#2 : i64, f32, i32
  }
}
