// More vm.buffer ops: compare, hash (SipHash-2-4), and the compiler's own itoa helper (loops,
// i8 stores, vm.buffer.clone); plus util.switch, which becomes vm.switch.i32 / vm.switch.i64.
func.func @compare_hash(%v: i32, %n: index) -> (i1, i1, i64, i64) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = util.buffer.alloc uninitialized : !util.buffer{%c8}
  util.buffer.fill %v, %a[%c0 for %c8] : i32 -> !util.buffer{%c8}
  %b = util.buffer.alloc uninitialized : !util.buffer{%c8}
  util.buffer.fill %v, %b[%c0 for %c8] : i32 -> !util.buffer{%c8}
  %z = arith.constant 0 : i32
  util.buffer.store %z, %b[%c4 for %c4] : i32 -> !util.buffer{%c8}
  %same = util.buffer.compare %a[%c0], %b[%c0], %n : !util.buffer{%c8}, !util.buffer{%c8}
  %all = util.buffer.compare %a[%c0], %b[%c0], %c8 : !util.buffer{%c8}, !util.buffer{%c8}
  %h = util.buffer.hash %a[%c0 for %n] : !util.buffer{%c8} -> i64
  %h8 = util.buffer.hash %b[%c0 for %c8] : !util.buffer{%c8} -> i64
  return %same, %all, %h, %h8 : i1, i1, i64, i64
}
func.func @itoa(%x: index) -> (index, i32, i32) {
  %s = util.string.itoa %x : index -> !util.buffer
  %n = util.buffer.size %s : !util.buffer
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = util.buffer.load %s[%c0 for %c1] : !util.buffer{%n} -> i8
  %last_at = arith.subi %n, %c1 : index
  %last = util.buffer.load %s[%last_at for %c1] : !util.buffer{%n} -> i8
  %f = arith.extui %first : i8 to i32
  %l = arith.extui %last : i8 to i32
  return %n, %f, %l : index, i32, i32
}
func.func @switches(%i: index, %j: i32) -> (index, i32, f32) {
  %c100 = arith.constant 100 : index
  %c200 = arith.constant 200 : index
  %c300 = arith.constant 300 : index
  %big = arith.constant 0x100000007 : index
  %0 = util.switch index from [%c100, %big, %c200] at %i else %c300 : index
  %a = arith.constant -5 : i32
  %b = arith.constant 77 : i32
  %1 = util.switch i32 from [%a, %b] at %i else %j : i32
  %x = arith.constant 1.5 : f32
  %y = arith.constant -2.25 : f32
  %d = arith.constant 0.5 : f32
  %2 = util.switch f32 from [%x, %y] at %i else %d : f32
  return %0, %1, %2 : index, i32, f32
}
