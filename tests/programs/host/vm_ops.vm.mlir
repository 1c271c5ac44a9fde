// VM dialect (compile with --compile-from=vm): ops the input dialects do not reach from scalar
// code: the rest of the integer and float ops, f64 casts and compares, more vm.buffer element
// widths, vm.br_table, vm.switch.f64, ref ops (select/switch/cast/compare, ref globals), f64
// lists, vm.import.resolved on an optional import. (A ref-typed list, vm.global.address and the
// indirect global ops do not compile from the VM dialect in iree-compile 3.13.)
vm.module @vmops {
  vm.func @int_misc(%a : i32, %b : i32, %c : i64, %d : i64)
      -> (i32, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32) {
    %0 = vm.abs.i32 %a : i32
    %1 = vm.not.i32 %a : i32
    %2 = vm.ctlz.i32 %b : i32
    %3 = vm.cmp.nz.i32 %b : i32
    %4 = vm.min.i32.u %a, %b : i32
    %5 = vm.max.i32.s %a, %b : i32
    %6 = vm.abs.i64 %c : i64
    %7 = vm.not.i64 %c : i64
    %8 = vm.ctlz.i64 %d : i64
    %9 = vm.xor.i64 %c, %d : i64
    %10 = vm.min.i64.u %c, %d : i64
    %11 = vm.cmp.lt.i64.u %c, %d : i64
    %12 = vm.cmp.nz.i64 %d : i64
    %13 = vm.min.i32.s %a, %b : i32
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13
        : i32, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32
  }
  vm.export @int_misc

  vm.func @f32_math(%x : f32, %y : f32)
      -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, f32) {
    %0 = vm.atan.f32 %x : f32
    %1 = vm.atan2.f32 %x, %y : f32
    %2 = vm.cos.f32 %x : f32
    %3 = vm.exp2.f32 %x : f32
    %4 = vm.expm1.f32 %x : f32
    %5 = vm.log.f32 %x : f32
    %6 = vm.log10.f32 %x : f32
    %7 = vm.log1p.f32 %x : f32
    %8 = vm.log2.f32 %x : f32
    %9 = vm.pow.f32 %x, %y : f32
    %10 = vm.rsqrt.f32 %x : f32
    %11 = vm.tanh.f32 %x : f32
    %12 = vm.erf.f32 %x : f32
    %13 = vm.rem.f32 %x, %y : f32
    %14 = vm.max.f32 %x, %y : f32
    %15 = vm.cmp.ne.f32.o %x, %y : f32
    %16 = vm.cmp.lte.f32.u %x, %y : f32
    %17 = vm.const.f32.zero
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17
        : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, f32
  }
  vm.export @f32_math

  vm.func @f64_math(%x : f64, %y : f64, %c : i32)
      -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) {
    %0 = vm.cos.f64 %x : f64
    %1 = vm.exp.f64 %x : f64
    %2 = vm.log.f64 %x : f64
    %3 = vm.pow.f64 %x, %y : f64
    %4 = vm.tanh.f64 %x : f64
    %5 = vm.fma.f64 %x, %y, %x : f64
    %6 = vm.round.f64 %x : f64
    %7 = vm.round.f64.even %x : f64
    %8 = vm.ceil.f64 %x : f64
    %9 = vm.neg.f64 %x : f64
    %10 = vm.min.f64 %x, %y : f64
    %11 = vm.max.f64 %x, %y : f64
    %12 = vm.sqrt.f64 %x : f64
    %13 = vm.rem.f64 %x, %y : f64
    %14 = vm.select.f64 %c, %x, %y : f64
    %15 = vm.const.f64.zero
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15
        : f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64
  }
  vm.export @f64_math

  vm.func @f64_math2(%x : f64, %y : f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) {
    %0 = vm.atan.f64 %x : f64
    %1 = vm.atan2.f64 %x, %y : f64
    %2 = vm.erf.f64 %x : f64
    %3 = vm.exp2.f64 %x : f64
    %4 = vm.expm1.f64 %x : f64
    %5 = vm.log10.f64 %x : f64
    %6 = vm.log1p.f64 %x : f64
    %7 = vm.log2.f64 %x : f64
    %8 = vm.rsqrt.f64 %x : f64
    %9 = vm.sin.f64 %x : f64
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
        : f64, f64, f64, f64, f64, f64, f64, f64, f64, f64
  }
  vm.export @f64_math2

  vm.func @f64_cmp_cast(%x : f64, %y : f64, %a : i64)
      -> (i32, i32, i32, i32, i32, i32, i32, i32, f64, f64, i64, i64, f32, f64) {
    %0 = vm.cmp.eq.f64.o %x, %y : f64
    %1 = vm.cmp.eq.f64.u %x, %y : f64
    %2 = vm.cmp.ne.f64.o %x, %y : f64
    %3 = vm.cmp.ne.f64.u %x, %y : f64
    %4 = vm.cmp.lt.f64.u %x, %y : f64
    %5 = vm.cmp.lte.f64.o %x, %y : f64
    %6 = vm.cmp.lte.f64.u %x, %y : f64
    %7 = vm.cmp.nan.f64 %x : f64
    %8 = vm.cast.si64.f64 %a : i64 -> f64
    %9 = vm.cast.ui64.f64 %a : i64 -> f64
    %12 = vm.cast.f64.si64 %x : f64 -> i64
    %13 = vm.cast.f64.ui64 %x : f64 -> i64
    %14 = vm.trunc.f64.f32 %x : f64 -> f32
    %b = vm.bitcast.f64.i64 %y : f64 -> i64
    %15 = vm.bitcast.i64.f64 %b : i64 -> f64
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %12, %13, %14, %15
        : i32, i32, i32, i32, i32, i32, i32, i32, f64, f64, i64, i64, f32, f64
  }
  vm.export @f64_cmp_cast

  vm.func @buffers(%v : i32, %w : i64, %x : f32, %y : f64)
      -> (i32, i32, i32, i32, i64, f32, f64, f64, i64) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c8 = vm.const.i64 8
    %c32 = vm.const.i64 32
    %align = vm.const.i32 16
    %buf = vm.buffer.alloc %c32, %align : !vm.buffer
    vm.buffer.fill.i16 %buf, %c0, %c8, %v : i32 -> !vm.buffer
    %0 = vm.buffer.load.i8.u %buf[%c1] : !vm.buffer -> i32
    %1 = vm.buffer.load.i16.u %buf[%c3] : !vm.buffer -> i32
    vm.buffer.store.i16 %v, %buf[%c1] : i32 -> !vm.buffer
    %2 = vm.buffer.load.i32 %buf[%c0] : !vm.buffer -> i32
    vm.buffer.fill.i64 %buf, %c1, %c3, %w : i64 -> !vm.buffer
    %3 = vm.buffer.load.i32 %buf[%c3] : !vm.buffer -> i32
    %4 = vm.buffer.load.i64 %buf[%c2] : !vm.buffer -> i64
    vm.buffer.fill.f32 %buf, %c0, %c2, %x : f32 -> !vm.buffer
    %5 = vm.buffer.load.f32 %buf[%c1] : !vm.buffer -> f32
    vm.buffer.fill.f64 %buf, %c2, %c2, %y : f64 -> !vm.buffer
    %6 = vm.buffer.load.f64 %buf[%c3] : !vm.buffer -> f64
    vm.buffer.store.f64 %y, %buf[%c0] : f64 -> !vm.buffer
    %7 = vm.buffer.load.f64 %buf[%c0] : !vm.buffer -> f64
    %8 = vm.buffer.length %buf : !vm.buffer -> i64
    vm.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : i32, i32, i32, i32, i64, f32, f64, f64, i64
  }
  vm.export @buffers

  vm.func @branch_table(%i : i32, %v : i32) -> i32 {
    vm.br_table %i {
      default: ^bb1(%v : i32),
      0: ^bb2(%v : i32),
      1: ^bb3(%v : i32)
    }
  ^bb1(%a : i32):
    %c7 = vm.const.i32 7
    %r1 = vm.add.i32 %a, %c7 : i32
    vm.return %r1 : i32
  ^bb2(%b : i32):
    %c100 = vm.const.i32 100
    %r2 = vm.mul.i32 %b, %c100 : i32
    vm.return %r2 : i32
  ^bb3(%c : i32):
    %r3 = vm.not.i32 %c : i32
    vm.return %r3 : i32
  }
  vm.export @branch_table

  vm.func @switch_f64(%i : i32, %x : f64, %y : f64) -> f64 {
    %d = vm.const.f64 0.5
    %0 = vm.switch.f64 %i[%x, %y] else %d : f64
    vm.return %0 : f64
  }
  vm.export @switch_f64

  vm.global.ref private mutable @keep : !vm.buffer
  vm.rodata private @blob dense<[1, 2, 3, 4]> : tensor<4xi8>
  vm.func @refs(%c : i32, %n : i32) -> (i32, i32, i32, i32, i32, i64, i32) {
    %null = vm.const.ref.zero : !vm.buffer
    %blob = vm.const.ref.rodata @blob : !vm.buffer
    %n64 = vm.ext.i32.i64.s %n : i32 -> i64
    %al = vm.const.i32 0
    %fresh = vm.buffer.alloc %n64, %al : !vm.buffer
    %0 = vm.cmp.nz.ref %null : !vm.buffer
    %1 = vm.cmp.eq.ref %blob, %fresh : !vm.buffer
    %2 = vm.cmp.ne.ref %blob, %fresh : !vm.buffer
    %pick = vm.select.ref %c, %blob, %fresh : !vm.buffer
    vm.global.store.ref %pick, @keep : !vm.buffer
    %back = vm.global.load.ref @keep : !vm.buffer
    %3 = vm.cmp.eq.ref %back, %blob : !vm.buffer
    %sw = vm.switch.ref %c[%fresh, %null] else %blob : !vm.buffer
    %4 = vm.cmp.nz.ref %sw : !vm.buffer
    %len = vm.buffer.length %back : !vm.buffer -> i64
    %any = vm.cast.any.ref %sw : !vm.buffer -> !vm.buffer
    %5 = vm.cmp.eq.ref %any, %sw : !vm.buffer
    vm.return %0, %1, %2, %3, %4, %len, %5 : i32, i32, i32, i32, i32, i64, i32
  }
  vm.export @refs

  vm.func @lists(%x : f64, %y : f64) -> (f64, f64, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %l = vm.list.alloc %c1 : (i32) -> !vm.list<f64>
    vm.list.reserve %l, %c2 : (!vm.list<f64>, i32)
    vm.list.resize %l, %c2 : (!vm.list<f64>, i32)
    vm.list.set.f64 %l, %c1, %x : (!vm.list<f64>, i32, f64)
    vm.list.set.f64 %l, %c0, %y : (!vm.list<f64>, i32, f64)
    %0 = vm.list.get.f64 %l, %c1 : (!vm.list<f64>, i32) -> f64
    %1 = vm.list.get.f64 %l, %c0 : (!vm.list<f64>, i32) -> f64
    %2 = vm.list.size %l : (!vm.list<f64>) -> i32
    vm.return %0, %1, %2 : f64, f64, i32
  }
  vm.export @lists

  vm.import private optional @absent.fn(%a : i32) -> i32
  vm.func @optional_import(%a : i32) -> i32 {
    %ok = vm.import.resolved @absent.fn : i32
    vm.cond_br %ok, ^call, ^skip
  ^call:
    %r = vm.call @absent.fn(%a) : (i32) -> i32
    vm.return %r : i32
  ^skip:
    %c = vm.const.i32 -1
    vm.return %c : i32
  }
  vm.export @optional_import

}
