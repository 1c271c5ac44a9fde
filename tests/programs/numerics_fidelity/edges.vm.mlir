// VM dialect (--compile-from=vm): what the sweeps cannot hold. Integer division and remainder whose
// native instruction traps (x / 0, INT_MIN / -1: the runtime dies of SIGFPE, for rem and the
// unsigned and i64 forms too), and float constants whose immediates are NaNs with payloads or
// signaling NaNs (returned as bits: IREE loads the immediate as it is).
vm.module @edges {
  vm.func @rem_i32_s(%a : i32, %b : i32) -> i32 {
    %r = vm.rem.i32.s %a, %b : i32
    vm.return %r : i32
  }
  vm.export @rem_i32_s

  vm.func @rem_i32_u(%a : i32, %b : i32) -> i32 {
    %r = vm.rem.i32.u %a, %b : i32
    vm.return %r : i32
  }
  vm.export @rem_i32_u

  vm.func @div_i32_u(%a : i32, %b : i32) -> i32 {
    %r = vm.div.i32.u %a, %b : i32
    vm.return %r : i32
  }
  vm.export @div_i32_u

  vm.func @div_i64_s(%a : i64, %b : i64) -> i64 {
    %r = vm.div.i64.s %a, %b : i64
    vm.return %r : i64
  }
  vm.export @div_i64_s

  vm.func @rem_i64_s(%a : i64, %b : i64) -> i64 {
    %r = vm.rem.i64.s %a, %b : i64
    vm.return %r : i64
  }
  vm.export @rem_i64_s

  vm.func @rem_i64_u(%a : i64, %b : i64) -> i64 {
    %r = vm.rem.i64.u %a, %b : i64
    vm.return %r : i64
  }
  vm.export @rem_i64_u

  vm.func @div_i64_u(%a : i64, %b : i64) -> i64 {
    %r = vm.div.i64.u %a, %b : i64
    vm.return %r : i64
  }
  vm.export @div_i64_u

  vm.func @nan_consts() -> (i32, i32, i32, i32, i64, i64, i64) {
    %a = vm.const.f32 0x7F800001
    %b = vm.const.f32 0xFFBFFFFF
    %c = vm.const.f32 0xFFC01234
    %d = vm.const.f32 0x80000000
    %e = vm.const.f64 0x7FF0000000000001
    %f = vm.const.f64 0xFFF8000000001234
    %g = vm.const.f64 0x8000000000000000
    %0 = vm.bitcast.f32.i32 %a : f32 -> i32
    %1 = vm.bitcast.f32.i32 %b : f32 -> i32
    %2 = vm.bitcast.f32.i32 %c : f32 -> i32
    %3 = vm.bitcast.f32.i32 %d : f32 -> i32
    %4 = vm.bitcast.f64.i64 %e : f64 -> i64
    %5 = vm.bitcast.f64.i64 %f : f64 -> i64
    %6 = vm.bitcast.f64.i64 %g : f64 -> i64
    vm.return %0, %1, %2, %3, %4, %5, %6 : i32, i32, i32, i32, i64, i64, i64
  }
  vm.export @nan_consts
}
