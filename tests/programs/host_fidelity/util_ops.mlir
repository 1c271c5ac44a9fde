// util.buffer byte offsets/lengths that are not multiples of the element size: the compiler
// divides them (vm.div.i64.s) into element offsets/counts before vm.buffer.fill/load see them.
func.func @fill_bytes(%off: index, %len: index, %v: i32) -> (i32, i32, i32, i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %b = util.buffer.alloc uninitialized : !util.buffer{%c16}
  %z = arith.constant 0 : i8
  util.buffer.fill %z, %b[%c0 for %c16] : i8 -> !util.buffer{%c16}
  util.buffer.fill %v, %b[%off for %len] : i32 -> !util.buffer{%c16}
  %w0 = util.buffer.load %b[%c0 for %c4] : !util.buffer{%c16} -> i32
  %w1 = util.buffer.load %b[%c4 for %c4] : !util.buffer{%c16} -> i32
  %w2 = util.buffer.load %b[%c8 for %c4] : !util.buffer{%c16} -> i32
  %w3 = util.buffer.load %b[%c12 for %c4] : !util.buffer{%c16} -> i32
  return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
}
func.func @load_bytes(%off: index) -> (i32, i16) {
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %cst = util.buffer.constant : !util.buffer = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>
  %c8 = arith.constant 8 : index
  %x = util.buffer.load %cst[%off for %c4] : !util.buffer{%c8} -> i32
  %y = util.buffer.load %cst[%off for %c2] : !util.buffer{%c8} -> i16
  return %x, %y : i32, i16
}
func.func @variant_values(%v: i32, %w: i64) -> (i32, i64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = util.list.create %c2 : !util.list<?>
  util.list.resize %l, %c2 : !util.list<?>
  util.list.set %l[%c0], %v : i32 -> !util.list<?>
  util.list.set %l[%c1], %w : i64 -> !util.list<?>
  %a = util.list.get %l[%c0] : !util.list<?> -> i32
  %b = util.list.get %l[%c1] : !util.list<?> -> i64
  %n = util.list.size %l : !util.list<?>
  return %a, %b, %n : i32, i64, index
}
