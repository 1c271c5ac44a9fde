// VM dialect (compile with --compile-from=vm): index arithmetic in loops, which the loop regions
// write without a mask, a sign conversion or a division call where vm/bytecode/value_ranges.py
// proves the values in range (tests/vm/bytecode/test_value_ranges.py runs them on both paths, on
// the host's data model and riscv32's, and against iree-run-module): signed division and remainder
// of negative values by constants and by divisors the loop keeps positive, i32 and i64 counters at
// the 32- and 64-bit edges, divisors that reach zero or -1, negative indices, and i32 arguments the
// regions speculate nonnegative given negative values.
vm.module @index_math {
  // Over i = start + k, k in [0, n): the i32 sum of i / 7 + i % 7 + (i / ((i & 15) + 1)) * 3, and
  // the i64 sum of ((i - 300) / 13) * ((i - 300) % 13).
  vm.func @divs(%start : i32, %n : i32) -> (i32, i64) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c3 = vm.const.i32 3
    %c7 = vm.const.i32 7
    %c15 = vm.const.i32 15
    %z64 = vm.const.i64 0
    %c13 = vm.const.i64 13
    %c300 = vm.const.i64 300
    vm.br ^loop(%c0, %c0, %z64 : i32, i32, i64)
  ^loop(%k : i32, %acc : i32, %acc64 : i64):
    %more = vm.cmp.lt.i32.s %k, %n : i32
    vm.cond_br %more, ^body, ^done(%acc, %acc64 : i32, i64)
  ^body:
    %i = vm.add.i32 %start, %k : i32
    %q = vm.div.i32.s %i, %c7 : i32
    %r = vm.rem.i32.s %i, %c7 : i32
    %m = vm.and.i32 %i, %c15 : i32
    %d = vm.add.i32 %m, %c1 : i32
    %q2 = vm.div.i32.s %i, %d : i32
    %t = vm.mul.i32 %q2, %c3 : i32
    %s1 = vm.add.i32 %q, %r : i32
    %s2 = vm.add.i32 %s1, %t : i32
    %acc2 = vm.add.i32 %acc, %s2 : i32
    %i64 = vm.ext.i32.i64.s %i : i32 -> i64
    %j = vm.sub.i64 %i64, %c300 : i64
    %q64 = vm.div.i64.s %j, %c13 : i64
    %r64 = vm.rem.i64.s %j, %c13 : i64
    %p = vm.mul.i64 %q64, %r64 : i64
    %acc64b = vm.add.i64 %acc64, %p : i64
    %k1 = vm.add.i32 %k, %c1 : i32
    vm.br ^loop(%k1, %acc2, %acc64b : i32, i32, i64)
  ^done(%a : i32, %b : i64):
    vm.return %a, %b : i32, i64
  }
  vm.export @divs

  // x / (k + 1) and x % (k + 1) for k in [0, n), summed (x may be INT_MIN: no divisor is -1), and
  // the same over i64 with x sign-extended and scaled by 2^32.
  vm.func @div_min(%x : i32, %n : i32) -> (i32, i64) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %z64 = vm.const.i64 0
    %one64 = vm.const.i64 1
    %c32 = vm.const.i32 32
    %x64a = vm.ext.i32.i64.s %x : i32 -> i64
    %x64 = vm.shl.i64 %x64a, %c32 : i64
    vm.br ^loop(%c0, %c0, %z64 : i32, i32, i64)
  ^loop(%k : i32, %acc : i32, %acc64 : i64):
    %more = vm.cmp.lt.i32.s %k, %n : i32
    vm.cond_br %more, ^body, ^done(%acc, %acc64 : i32, i64)
  ^body:
    %d = vm.add.i32 %k, %c1 : i32
    %q = vm.div.i32.s %x, %d : i32
    %r = vm.rem.i32.s %x, %d : i32
    %s = vm.add.i32 %q, %r : i32
    %acc2 = vm.add.i32 %acc, %s : i32
    %k64 = vm.ext.i32.i64.s %k : i32 -> i64
    %d64 = vm.add.i64 %k64, %one64 : i64
    %q64 = vm.div.i64.s %x64, %d64 : i64
    %r64 = vm.rem.i64.s %x64, %d64 : i64
    %s64 = vm.xor.i64 %q64, %r64 : i64
    %acc64b = vm.add.i64 %acc64, %s64 : i64
    %k1 = vm.add.i32 %k, %c1 : i32
    vm.br ^loop(%k1, %acc2, %acc64b : i32, i32, i64)
  ^done(%a : i32, %b : i64):
    vm.return %a, %b : i32, i64
  }
  vm.export @div_min

  // x / d and x % d for d = e, e + 1, ..., e + n - 1, summed: traps when d reaches 0, or when x
  // is INT_MIN and d is -1 (SIGFPE in IREE's runtime); the i64 form with x and d sign-extended,
  // x scaled by 2^32 (INT64_MIN when x is INT_MIN).
  vm.func @div_steps(%x : i32, %e : i32, %n : i32) -> (i32, i64) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %z64 = vm.const.i64 0
    %c32 = vm.const.i32 32
    %x64a = vm.ext.i32.i64.s %x : i32 -> i64
    %x64 = vm.shl.i64 %x64a, %c32 : i64
    vm.br ^loop(%c0, %c0, %z64 : i32, i32, i64)
  ^loop(%k : i32, %acc : i32, %acc64 : i64):
    %more = vm.cmp.lt.i32.s %k, %n : i32
    vm.cond_br %more, ^body, ^done(%acc, %acc64 : i32, i64)
  ^body:
    %d = vm.add.i32 %e, %k : i32
    %q = vm.div.i32.s %x, %d : i32
    %r = vm.rem.i32.s %x, %d : i32
    %s = vm.add.i32 %q, %r : i32
    %acc2 = vm.add.i32 %acc, %s : i32
    %d64 = vm.ext.i32.i64.s %d : i32 -> i64
    %q64 = vm.div.i64.s %x64, %d64 : i64
    %acc64b = vm.add.i64 %acc64, %q64 : i64
    %k1 = vm.add.i32 %k, %c1 : i32
    vm.br ^loop(%k1, %acc2, %acc64b : i32, i32, i64)
  ^done(%a : i32, %b : i64):
    vm.return %a, %b : i32, i64
  }
  vm.export @div_steps

  // Counters that stop at the edges: i from 2^63 - 256 up to 2^63 - 1 and from -2^63 up to
  // -2^63 + 255 (i64), j from 2^31 - 256 up to 2^31 - 1 (i32); hashes of them that wrap (* 3, - 1)
  // and that do not ((i - base) / 5, j % 9).
  vm.func @edges(%salt : i32) -> (i64, i64, i32) {
    %c0 = vm.const.i32 0
    %c1_32 = vm.const.i32 1
    %c3_32 = vm.const.i32 3
    %c9 = vm.const.i32 9
    %c1 = vm.const.i64 1
    %c3 = vm.const.i64 3
    %c5 = vm.const.i64 5
    %z64 = vm.const.i64 0
    %top = vm.const.i64 9223372036854775552
    %max = vm.const.i64 9223372036854775807
    %min = vm.const.i64 -9223372036854775808
    %low_end = vm.const.i64 -9223372036854775553
    %top32 = vm.const.i32 2147483392
    %max32 = vm.const.i32 2147483647
    %salt64 = vm.ext.i32.i64.s %salt : i32 -> i64
    vm.br ^hi(%top, %salt64 : i64, i64)
  ^hi(%i : i64, %acc : i64):
    %more = vm.cmp.lt.i64.s %i, %max : i64
    vm.cond_br %more, ^hi_body, ^lo(%min, %acc : i64, i64)
  ^hi_body:
    %w = vm.mul.i64 %i, %c3 : i64
    %off = vm.sub.i64 %i, %top : i64
    %q = vm.div.i64.s %off, %c5 : i64
    %h = vm.xor.i64 %w, %q : i64
    %acc2 = vm.add.i64 %acc, %h : i64
    %i1 = vm.add.i64 %i, %c1 : i64
    vm.br ^hi(%i1, %acc2 : i64, i64)
  ^lo(%i2 : i64, %acc3 : i64):
    %more2 = vm.cmp.lt.i64.s %i2, %low_end : i64
    vm.cond_br %more2, ^lo_body, ^mid(%top32, %c0 : i32, i32)
  ^lo_body:
    %below = vm.sub.i64 %i2, %c1 : i64
    %q2 = vm.div.i64.s %i2, %c5 : i64
    %r2 = vm.rem.i64.s %i2, %c3 : i64
    %h2 = vm.add.i64 %below, %q2 : i64
    %h3 = vm.mul.i64 %h2, %r2 : i64
    %acc4 = vm.add.i64 %acc3, %h3 : i64
    %i3 = vm.add.i64 %i2, %c1 : i64
    vm.br ^lo(%i3, %acc4 : i64, i64)
  ^mid(%j : i32, %acc5 : i32):
    %more3 = vm.cmp.lt.i32.s %j, %max32 : i32
    vm.cond_br %more3, ^mid_body, ^done(%acc, %acc3, %acc5 : i64, i64, i32)
  ^mid_body:
    %wj = vm.mul.i32 %j, %c3_32 : i32
    %rj = vm.rem.i32.s %j, %c9 : i32
    %hj = vm.add.i32 %wj, %rj : i32
    %acc6 = vm.xor.i32 %acc5, %hj : i32
    %j1 = vm.add.i32 %j, %c1_32 : i32
    vm.br ^mid(%j1, %acc6 : i32, i32)
  ^done(%ra : i64, %rb : i64, %rc : i32):
    vm.return %ra, %rb, %rc : i64, i64, i32
  }
  vm.export @edges

  // The sum of n i32 loads of a 16-element buffer (element e holds e * 10 - 70) from index
  // off + k: out of range (or, negative, wrapping past IREE's bounds check) when the window
  // leaves it; the i32 offset form sign-extends its argument.
  vm.func @window(%off : i64, %n : i32) -> i32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c10 = vm.const.i32 10
    %c70 = vm.const.i32 70
    %z64 = vm.const.i64 0
    %one64 = vm.const.i64 1
    %c16 = vm.const.i64 16
    %bytes = vm.const.i64 64
    %align = vm.const.i32 16
    %buf = vm.buffer.alloc %bytes, %align : !vm.buffer
    vm.br ^fill(%z64 : i64)
  ^fill(%e : i64):
    %more = vm.cmp.lt.i64.s %e, %c16 : i64
    vm.cond_br %more, ^fill_body, ^loop(%c0, %c0 : i32, i32)
  ^fill_body:
    %e32 = vm.trunc.i64.i32 %e : i64 -> i32
    %v1 = vm.mul.i32 %e32, %c10 : i32
    %v = vm.sub.i32 %v1, %c70 : i32
    vm.buffer.store.i32 %v, %buf[%e] : i32 -> !vm.buffer
    %e1 = vm.add.i64 %e, %one64 : i64
    vm.br ^fill(%e1 : i64)
  ^loop(%k : i32, %acc : i32):
    %more2 = vm.cmp.lt.i32.s %k, %n : i32
    vm.cond_br %more2, ^body, ^done(%acc : i32)
  ^body:
    %k64 = vm.ext.i32.i64.s %k : i32 -> i64
    %idx = vm.add.i64 %off, %k64 : i64
    %x = vm.buffer.load.i32 %buf[%idx] : !vm.buffer -> i32
    %acc2 = vm.add.i32 %acc, %x : i32
    %k1 = vm.add.i32 %k, %c1 : i32
    vm.br ^loop(%k1, %acc2 : i32, i32)
  ^done(%r : i32):
    vm.return %r : i32
  }
  vm.export @window

  // The sum over r < rows, c < cols of ((r * cols + c) + 3 * rows) % 97: the inner loop's index
  // is an address's shape, (base + c) + offset with base and offset invariant in it.
  vm.func @strided(%rows : i32, %cols : i32) -> i64 {
    %z = vm.const.i64 0
    %one = vm.const.i64 1
    %c3 = vm.const.i64 3
    %c97 = vm.const.i64 97
    %rows64 = vm.ext.i32.i64.s %rows : i32 -> i64
    %cols64 = vm.ext.i32.i64.s %cols : i32 -> i64
    %off = vm.mul.i64 %rows64, %c3 : i64
    vm.br ^outer(%z, %z : i64, i64)
  ^outer(%r : i64, %acc : i64):
    %more = vm.cmp.lt.i64.s %r, %rows64 : i64
    vm.cond_br %more, ^row, ^done(%acc : i64)
  ^row:
    %base = vm.mul.i64 %r, %cols64 : i64
    vm.br ^inner(%z, %acc : i64, i64)
  ^inner(%c : i64, %a : i64):
    %more2 = vm.cmp.lt.i64.s %c, %cols64 : i64
    vm.cond_br %more2, ^body, ^next(%a : i64)
  ^body:
    %x = vm.add.i64 %base, %c : i64
    %x2 = vm.add.i64 %x, %off : i64
    %m = vm.rem.i64.s %x2, %c97 : i64
    %a2 = vm.add.i64 %a, %m : i64
    %c1 = vm.add.i64 %c, %one : i64
    vm.br ^inner(%c1, %a2 : i64, i64)
  ^next(%a3 : i64):
    %r1 = vm.add.i64 %r, %one : i64
    vm.br ^outer(%r1, %a3 : i64, i64)
  ^done(%res : i64):
    vm.return %res : i64
  }
  vm.export @strided

  // The sum over k < n of v / 7 + v % 7 + k, with v = a; a negative a goes through a call first
  // (so the loop's region is entered again after it, at a block the assumption of nonnegative
  // arguments makes unreachable), and joins the same loop.
  vm.func @join(%a : i32, %n : i32) -> i32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c7 = vm.const.i32 7
    %neg = vm.cmp.lt.i32.s %a, %c0 : i32
    vm.cond_br %neg, ^slow, ^loop(%a, %c0, %c0 : i32, i32, i32)
  ^slow:
    %b = vm.call @ident(%a) : (i32) -> i32
    vm.br ^loop(%b, %c0, %c0 : i32, i32, i32)
  ^loop(%v : i32, %k : i32, %acc : i32):
    %more = vm.cmp.lt.i32.s %k, %n : i32
    vm.cond_br %more, ^body, ^done(%acc : i32)
  ^body:
    %q = vm.div.i32.s %v, %c7 : i32
    %r = vm.rem.i32.s %v, %c7 : i32
    %s = vm.add.i32 %q, %r : i32
    %t = vm.add.i32 %s, %k : i32
    %acc2 = vm.add.i32 %acc, %t : i32
    %k1 = vm.add.i32 %k, %c1 : i32
    vm.br ^loop(%v, %k1, %acc2 : i32, i32, i32)
  ^done(%res : i32):
    vm.return %res : i32
  }
  vm.export @join

  vm.func private @ident(%x : i32) -> i32 {
    vm.return %x : i32
  }

  vm.func @window32(%off : i32, %n : i32) -> i32 {
    %off64 = vm.ext.i32.i64.s %off : i32 -> i64
    %r = vm.call @window(%off64, %n) : (i64, i32) -> i32
    vm.return %r : i32
  }
  vm.export @window32
}
