// VM dialect (compile with --compile-from=vm): loops whose registers the compiled regions keep as
// Python locals (vm/bytecode/regions.py), each against the reference handlers in
// tests/vm/bytecode/test_compiled_blocks.py: raw f32 copies that must keep signaling-NaN bits, an f32 loop
// accumulator entered with a NaN, nested loops with signed i32 and i64 counters, handlers (buffer
// fill, list ops) inside a loop, narrow element loads and stores, f64, and a loop that stores out of
// bounds.
vm.module @loops {
  // Fills n i32 elements with `bits`, copies them as f32 loads and stores, and returns the copy's
  // first and last element bits and the f32 sum of the copy.
  vm.func @copy_f32(%bits : i32, %n : i64) -> (i32, i32, f32) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c4 = vm.const.i64 4
    %align = vm.const.i32 16
    %bytes = vm.mul.i64 %n, %c4 : i64
    %a = vm.buffer.alloc %bytes, %align : !vm.buffer
    %b = vm.buffer.alloc %bytes, %align : !vm.buffer
    %zero = vm.const.f32.zero
    vm.br ^fill(%c0 : i64)
  ^fill(%i : i64):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^fill_body, ^copy(%c0, %zero : i64, f32)
  ^fill_body:
    vm.buffer.store.i32 %bits, %a[%i] : i32 -> !vm.buffer
    %i1 = vm.add.i64 %i, %c1 : i64
    vm.br ^fill(%i1 : i64)
  ^copy(%j : i64, %acc : f32):
    %more2 = vm.cmp.lt.i64.s %j, %n : i64
    vm.cond_br %more2, ^copy_body, ^done(%acc : f32)
  ^copy_body:
    %x = vm.buffer.load.f32 %a[%j] : !vm.buffer -> f32
    %acc2 = vm.add.f32 %acc, %x : f32
    vm.buffer.store.f32 %x, %b[%j] : f32 -> !vm.buffer
    %j1 = vm.add.i64 %j, %c1 : i64
    vm.br ^copy(%j1, %acc2 : i64, f32)
  ^done(%sum : f32):
    %first = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %last_index = vm.sub.i64 %n, %c1 : i64
    %last = vm.buffer.load.i32 %b[%last_index] : !vm.buffer -> i32
    vm.return %first, %last, %sum : i32, i32, f32
  }
  vm.export @copy_f32

  // An f32 accumulator that may start as a NaN or overflow to infinity: acc = acc * x + 1, n times.
  vm.func @f32_acc(%start : f32, %x : f32, %n : i32) -> f32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %one = vm.const.f32 1.0
    vm.br ^loop(%c0, %start : i32, f32)
  ^loop(%i : i32, %acc : f32):
    %more = vm.cmp.lt.i32.s %i, %n : i32
    vm.cond_br %more, ^body, ^done(%acc : f32)
  ^body:
    %m = vm.mul.f32 %acc, %x : f32
    %acc2 = vm.add.f32 %m, %one : f32
    %i1 = vm.add.i32 %i, %c1 : i32
    vm.br ^loop(%i1, %acc2 : i32, f32)
  ^done(%r : f32):
    vm.return %r : f32
  }
  vm.export @f32_acc

  // Nested loops: i from lo to hi (signed i32, may be negative), j from 0 to i * i (i64); returns the
  // i32 sum of i * j (wrapping) and the i64 count of inner steps and the last shifted value.
  vm.func @nested(%lo : i32, %hi : i32) -> (i32, i64, i64) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %k1 = vm.const.i32 1
    %k0 = vm.const.i32 0
    %k3 = vm.const.i32 3
    vm.br ^outer(%lo, %k0, %c0, %c0 : i32, i32, i64, i64)
  ^outer(%i : i32, %sum : i32, %count : i64, %shl : i64):
    %more = vm.cmp.lt.i32.s %i, %hi : i32
    vm.cond_br %more, ^outer_body, ^done(%sum, %count, %shl : i32, i64, i64)
  ^outer_body:
    %ii = vm.mul.i32 %i, %i : i32
    %limit = vm.ext.i32.i64.s %ii : i32 -> i64
    vm.br ^inner(%c0, %sum, %count, %shl : i64, i32, i64, i64)
  ^inner(%j : i64, %s : i32, %c : i64, %h : i64):
    %more2 = vm.cmp.lt.i64.s %j, %limit : i64
    vm.cond_br %more2, ^inner_body, ^next(%s, %c, %h : i32, i64, i64)
  ^inner_body:
    %j32 = vm.trunc.i64.i32 %j : i64 -> i32
    %p = vm.mul.i32 %i, %j32 : i32
    %s2 = vm.add.i32 %s, %p : i32
    %c2 = vm.add.i64 %c, %c1 : i64
    %h1 = vm.shl.i64 %c2, %k3 : i64
    %h2 = vm.xor.i64 %h1, %h : i64
    %j1 = vm.add.i64 %j, %c1 : i64
    vm.br ^inner(%j1, %s2, %c2, %h2 : i64, i32, i64, i64)
  ^next(%s3 : i32, %c3 : i64, %h3 : i64):
    %i1 = vm.add.i32 %i, %k1 : i32
    vm.br ^outer(%i1, %s3, %c3, %h3 : i32, i32, i64, i64)
  ^done(%rs : i32, %rc : i64, %rh : i64):
    vm.return %rs, %rc, %rh : i32, i64, i64
  }
  vm.export @nested

  // Handlers inside a loop: each step fills a byte range, appends to a list and reads it back.
  vm.func @handlers(%n : i64, %v : i32) -> (i64, i32, i32) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %k0 = vm.const.i32 0
    %k1 = vm.const.i32 1
    %align = vm.const.i32 16
    %cap = vm.const.i32 4
    %buf = vm.buffer.alloc %n, %align : !vm.buffer
    %list = vm.list.alloc %cap : (i32) -> !vm.list<i32>
    vm.br ^loop(%c0, %k0 : i64, i32)
  ^loop(%i : i64, %acc : i32):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^body, ^done(%acc : i32)
  ^body:
    %rest = vm.sub.i64 %n, %i : i64
    %byte = vm.trunc.i64.i32 %i : i64 -> i32
    %x = vm.add.i32 %byte, %v : i32
    vm.buffer.fill.i8 %buf, %i, %rest, %x : i32 -> !vm.buffer
    %size = vm.list.size %list : (!vm.list<i32>) -> i32
    %size1 = vm.add.i32 %size, %k1 : i32
    vm.list.resize %list, %size1 : (!vm.list<i32>, i32)
    vm.list.set.i32 %list, %size, %x : (!vm.list<i32>, i32, i32)
    %got = vm.list.get.i32 %list, %size : (!vm.list<i32>, i32) -> i32
    %b = vm.buffer.load.i8.s %buf[%i] : !vm.buffer -> i32
    %t = vm.add.i32 %got, %b : i32
    %acc2 = vm.add.i32 %acc, %t : i32
    %i1 = vm.add.i64 %i, %c1 : i64
    vm.br ^loop(%i1, %acc2 : i64, i32)
  ^done(%r : i32):
    %len = vm.buffer.length %buf : !vm.buffer -> i64
    %last = vm.list.size %list : (!vm.list<i32>) -> i32
    vm.return %len, %r, %last : i64, i32, i32
  }
  vm.export @handlers

  // Narrow and wide elements in one loop: i16 stores of a wrapping counter, i8 signed/unsigned loads,
  // f64 math on them; returns the sums and the last i16 read back.
  vm.func @widths(%n : i64, %step : i32) -> (i32, i32, f64, i32) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %k0 = vm.const.i32 0
    %align = vm.const.i32 8
    %f0 = vm.const.f64.zero
    %half = vm.const.f64 0.5
    %bytes = vm.mul.i64 %n, %c2 : i64
    %buf = vm.buffer.alloc %bytes, %align : !vm.buffer
    vm.br ^loop(%c0, %k0, %k0, %k0, %f0 : i64, i32, i32, i32, f64)
  ^loop(%i : i64, %ctr : i32, %su : i32, %ss : i32, %fs : f64):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^body, ^done(%su, %ss, %fs : i32, i32, f64)
  ^body:
    %ctr2 = vm.add.i32 %ctr, %step : i32
    vm.buffer.store.i16 %ctr2, %buf[%i] : i32 -> !vm.buffer
    %i2 = vm.mul.i64 %i, %c2 : i64
    %u = vm.buffer.load.i8.u %buf[%i2] : !vm.buffer -> i32
    %s = vm.buffer.load.i8.s %buf[%i2] : !vm.buffer -> i32
    %su2 = vm.add.i32 %su, %u : i32
    %ss2 = vm.add.i32 %ss, %s : i32
    %s64 = vm.ext.i32.i64.s %s : i32 -> i64
    %sf = vm.cast.si64.f64 %s64 : i64 -> f64
    %m = vm.mul.f64 %sf, %half : f64
    %fs2 = vm.add.f64 %fs, %m : f64
    %i1 = vm.add.i64 %i, %c1 : i64
    vm.br ^loop(%i1, %ctr2, %su2, %ss2, %fs2 : i64, i32, i32, i32, f64)
  ^done(%a : i32, %b : i32, %c : f64):
    %last_index = vm.sub.i64 %n, %c1 : i64
    %last = vm.buffer.load.i16.s %buf[%last_index] : !vm.buffer -> i32
    vm.return %a, %b, %c, %last : i32, i32, f64, i32
  }
  vm.export @widths

  // Stores i64 elements i = 0, 1, ... into a 32-byte buffer until `n`: past element 3 it traps.
  vm.func @oob(%n : i64) -> i64 {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c32 = vm.const.i64 32
    %align = vm.const.i32 16
    %buf = vm.buffer.alloc %c32, %align : !vm.buffer
    vm.br ^loop(%c0 : i64)
  ^loop(%i : i64):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^body, ^done
  ^body:
    vm.buffer.store.i64 %i, %buf[%i] : i64 -> !vm.buffer
    %i1 = vm.add.i64 %i, %c1 : i64
    vm.br ^loop(%i1 : i64)
  ^done:
    %last = vm.buffer.load.i64 %buf[%c0] : !vm.buffer -> i64
    vm.return %last : i64
  }
  vm.export @oob

  // Non-finite constants inside a loop: max(acc, x) against +inf/-inf, and a NaN compare.
  vm.func @nonfinite(%x : f64, %n : i32) -> (f64, f64, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %f0 = vm.const.f64.zero
    vm.br ^loop(%c0, %f0, %f0, %c0 : i32, f64, f64, i32)
  ^loop(%i : i32, %a : f64, %b : f64, %u : i32):
    %more = vm.cmp.lt.i32.s %i, %n : i32
    vm.cond_br %more, ^body, ^done(%a, %b, %u : f64, f64, i32)
  ^body:
    %inf = vm.const.f64 0x7FF0000000000000
    %ninf = vm.const.f64 0xFFF0000000000000
    %nan = vm.const.f64 0x7FF8000000000001
    %p = vm.mul.f64 %x, %inf : f64
    %q = vm.add.f64 %x, %ninf : f64
    %a2 = vm.add.f64 %a, %p : f64
    %b2 = vm.sub.f64 %q, %nan : f64
    %un = vm.cmp.eq.f64.o %b2, %b2 : f64
    %u2 = vm.add.i32 %u, %un : i32
    %i1 = vm.add.i32 %i, %c1 : i32
    vm.br ^loop(%i1, %a2, %b2, %u2 : i32, f64, f64, i32)
  ^done(%ra : f64, %rb : f64, %ru : i32):
    vm.return %ra, %rb, %ru : f64, f64, i32
  }
  vm.export @nonfinite

  // A running maximum over n f32 elements whose bits are bits, bits + step, ...: vm.select.{f32,
  // i32,i64,f64} keep the best value (its bits exactly, a NaN's too), its index, a 64-bit tag and
  // the best as f64; each step stores the other one (the element not kept, or the best it lost to)
  // into a second buffer, so a signaling NaN element is selected and stored. Returns the best's
  // bits, its index, the tag, the last stored bits and the f64.
  vm.func @select_loop(%bits : i32, %step : i32, %start : f32, %n : i64) -> (i32, i32, i64, i32, f64) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c4 = vm.const.i64 4
    %minus = vm.const.i64 -1
    %k0 = vm.const.i32 -1
    %d0 = vm.const.f64 -2.5
    %align = vm.const.i32 16
    %bytes = vm.mul.i64 %n, %c4 : i64
    %a = vm.buffer.alloc %bytes, %align : !vm.buffer
    %b = vm.buffer.alloc %bytes, %align : !vm.buffer
    vm.br ^fill(%c0, %bits : i64, i32)
  ^fill(%i : i64, %v : i32):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^fill_body, ^scan(%c0, %start, %k0, %minus, %d0 : i64, f32, i32, i64, f64)
  ^fill_body:
    vm.buffer.store.i32 %v, %a[%i] : i32 -> !vm.buffer
    %i1 = vm.add.i64 %i, %c1 : i64
    %v1 = vm.add.i32 %v, %step : i32
    vm.br ^fill(%i1, %v1 : i64, i32)
  ^scan(%j : i64, %best : f32, %at : i32, %tag : i64, %d : f64):
    %more2 = vm.cmp.lt.i64.s %j, %n : i64
    vm.cond_br %more2, ^scan_body, ^done(%best, %at, %tag, %d : f32, i32, i64, f64)
  ^scan_body:
    %x = vm.buffer.load.f32 %a[%j] : !vm.buffer -> f32
    %gt = vm.cmp.lt.f32.o %best, %x : f32
    %nb = vm.select.f32 %gt, %x, %best : f32
    %ji = vm.trunc.i64.i32 %j : i64 -> i32
    %na = vm.select.i32 %gt, %ji, %at : i32
    %nt = vm.select.i64 %gt, %j, %tag : i64
    %xd = vm.ext.f32.f64 %x : f32 -> f64
    %nd = vm.select.f64 %gt, %xd, %d : f64
    %lost = vm.select.f32 %gt, %best, %x : f32
    vm.buffer.store.f32 %lost, %b[%j] : f32 -> !vm.buffer
    %j1 = vm.add.i64 %j, %c1 : i64
    vm.br ^scan(%j1, %nb, %na, %nt, %nd : i64, f32, i32, i64, f64)
  ^done(%rb : f32, %ra : i32, %rt : i64, %rd : f64):
    %bb = vm.bitcast.f32.i32 %rb : f32 -> i32
    %last_index = vm.sub.i64 %n, %c1 : i64
    %last = vm.buffer.load.i32 %b[%last_index] : !vm.buffer -> i32
    vm.return %bb, %ra, %rt, %last, %rd : i32, i32, i64, i32, f64
  }
  vm.export @select_loop

  // The f32 ops regions.py writes inline on held floats, over n elements whose bits are bits,
  // bits + step, ... (read last to first; NaNs quiet and signaling, infinities, denormals, zeros of both signs as the
  // calls choose): a running min.f32 from a start given as bits, and max.f32 from its negation (a
  // signaling NaN start keeps its bits through every comparison and enters the loop), pow.f32 by y (pow(x, 0)
  // of a signaling NaN is a NaN, not 1), neg/abs of f32 and f64, div.f32/f64 by y (a zero y too),
  // and the unordered and NaN compares. Each element's result bits are folded into hashes;
  // returns the min's and max's bits and the hashes.
  vm.func @float_bits_loop(%bits : i32, %step : i32, %startbits : i32, %y : f32, %n : i64)
      -> (i32, i32, i32, i32, i32, i64) {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c4 = vm.const.i64 4
    %k0 = vm.const.i32 0
    %k1 = vm.const.i32 1
    %k31 = vm.const.i32 31
    %align = vm.const.i32 16
    %c31 = vm.const.i64 31
    %bytes = vm.mul.i64 %n, %c4 : i64
    %a = vm.buffer.alloc %bytes, %align : !vm.buffer
    %start = vm.bitcast.i32.f32 %startbits : i32 -> f32
    %nstart = vm.neg.f32 %start : f32
    %yd = vm.ext.f32.f64 %y : f32 -> f64
    vm.br ^fill(%c0, %bits : i64, i32)
  ^fill(%i : i64, %v : i32):
    %more = vm.cmp.lt.i64.s %i, %n : i64
    vm.cond_br %more, ^fill_body, ^scan(%i, %start, %nstart, %k0, %k1, %k31, %c1 : i64, f32, f32, i32, i32, i32, i64)
  ^fill_body:
    vm.buffer.store.i32 %v, %a[%i] : i32 -> !vm.buffer
    %i1 = vm.add.i64 %i, %c1 : i64
    %v1 = vm.add.i32 %v, %step : i32
    vm.br ^fill(%i1, %v1 : i64, i32)
  ^scan(%j : i64, %mn : f32, %mx : f32, %hp : i32, %hd : i32, %hc : i32, %s : i64):
    %more2 = vm.cmp.lt.i64.s %c0, %j : i64
    vm.cond_br %more2, ^scan_body, ^done(%mn, %mx, %hp, %hd, %hc, %s : f32, f32, i32, i32, i32, i64)
  ^scan_body:
    %j1 = vm.sub.i64 %j, %c1 : i64
    %x = vm.buffer.load.f32 %a[%j1] : !vm.buffer -> f32
    %mn2 = vm.min.f32 %mn, %x : f32
    %mx2 = vm.max.f32 %x, %mx : f32
    %p = vm.pow.f32 %x, %y : f32
    %ng = vm.neg.f32 %p : f32
    %ab = vm.abs.f32 %x : f32
    %q = vm.div.f32 %x, %y : f32
    %nb = vm.bitcast.f32.i32 %ng : f32 -> i32
    %ab2 = vm.bitcast.f32.i32 %ab : f32 -> i32
    %qb = vm.bitcast.f32.i32 %q : f32 -> i32
    %hp1 = vm.mul.i32 %hp, %k31 : i32
    %hp2 = vm.xor.i32 %hp1, %nb : i32
    %hp3 = vm.add.i32 %hp2, %ab2 : i32
    %hd1 = vm.mul.i32 %hd, %k31 : i32
    %hd2 = vm.xor.i32 %hd1, %qb : i32
    %u1 = vm.cmp.lt.f32.u %x, %y : f32
    %u2 = vm.cmp.lte.f32.u %y, %x : f32
    %u3 = vm.cmp.eq.f32.u %x, %y : f32
    %u4 = vm.cmp.ne.f32.u %x, %y : f32
    %u5 = vm.cmp.nan.f32 %x : f32
    %xd = vm.ext.f32.f64 %x : f32 -> f64
    %dn = vm.neg.f64 %xd : f64
    %da = vm.abs.f64 %dn : f64
    %dq = vm.div.f64 %dn, %yd : f64
    %u6 = vm.cmp.lt.f64.u %dq, %da : f64
    %u7 = vm.cmp.nan.f64 %dq : f64
    %u8 = vm.cmp.eq.f64.u %da, %yd : f64
    %hc1 = vm.shl.i32 %hc, %k1 : i32
    %hc2 = vm.xor.i32 %hc1, %u1 : i32
    %hc3 = vm.shl.i32 %hc2, %k1 : i32
    %hc4 = vm.xor.i32 %hc3, %u2 : i32
    %hc5 = vm.shl.i32 %hc4, %k1 : i32
    %hc6 = vm.xor.i32 %hc5, %u3 : i32
    %hc7 = vm.shl.i32 %hc6, %k1 : i32
    %hc8 = vm.xor.i32 %hc7, %u4 : i32
    %hc9 = vm.shl.i32 %hc8, %k1 : i32
    %hc10 = vm.xor.i32 %hc9, %u5 : i32
    %hc11 = vm.mul.i32 %hc10, %k31 : i32
    %hc12 = vm.add.i32 %hc11, %u6 : i32
    %hc13 = vm.shl.i32 %hc12, %k1 : i32
    %hc14 = vm.xor.i32 %hc13, %u7 : i32
    %hc15 = vm.shl.i32 %hc14, %k1 : i32
    %hc16 = vm.xor.i32 %hc15, %u8 : i32
    %dqb = vm.bitcast.f64.i64 %dq : f64 -> i64
    %s1 = vm.mul.i64 %s, %c31 : i64
    %s2 = vm.xor.i64 %s1, %dqb : i64
    vm.br ^scan(%j1, %mn2, %mx2, %hp3, %hd2, %hc16, %s2 : i64, f32, f32, i32, i32, i32, i64)
  ^done(%rmn : f32, %rmx : f32, %rp : i32, %rd : i32, %rc : i32, %rs : i64):
    %bmn = vm.bitcast.f32.i32 %rmn : f32 -> i32
    %bmx = vm.bitcast.f32.i32 %rmx : f32 -> i32
    vm.return %bmn, %bmx, %rp, %rd, %rc, %rs : i32, i32, i32, i32, i32, i64
  }
  vm.export @float_bits_loop
}
