// util.buffer -> vm.buffer: alloc, fill, store/load of i8..i64/f32 at element offsets, copy, slices
// (alloc + copy), size, rodata constants, and an index chosen by the caller (bounds errors).
func.func @roundtrip(%x: i32, %y: f32, %z: i64) -> (i32, f32, i64, index, i32, i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %b = util.buffer.alloc uninitialized : !util.buffer{%c32}
  %fillv = arith.constant 7 : i8
  util.buffer.fill %fillv, %b[%c0 for %c32] : i8 -> !util.buffer{%c32}
  util.buffer.store %x, %b[%c0 for %c4] : i32 -> !util.buffer{%c32}
  util.buffer.store %y, %b[%c4 for %c4] : f32 -> !util.buffer{%c32}
  util.buffer.store %z, %b[%c8 for %c8] : i64 -> !util.buffer{%c32}
  %lx = util.buffer.load %b[%c0 for %c4] : !util.buffer{%c32} -> i32
  %ly = util.buffer.load %b[%c4 for %c4] : !util.buffer{%c32} -> f32
  %lz = util.buffer.load %b[%c8 for %c8] : !util.buffer{%c32} -> i64
  %sz = util.buffer.size %b : !util.buffer
  %tail = util.buffer.load %b[%c16 for %c4] : !util.buffer{%c32} -> i32
  %cst = util.buffer.constant : !util.buffer = dense<[1, 2, 3, 40000]> : tensor<4xi32>
  %k = util.buffer.load %cst[%c12 for %c4] : !util.buffer{%c16} -> i32
  return %lx, %ly, %lz, %sz, %tail, %k : i32, f32, i64, index, i32, i32
}
func.func @copy_slice(%v: i32, %off: index) -> (i32, i32, index, i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %a = util.buffer.alloc uninitialized : !util.buffer{%c16}
  %fv = arith.constant 0x11223344 : i32
  util.buffer.fill %fv, %a[%c0 for %c16] : i32 -> !util.buffer{%c16}
  util.buffer.store %v, %a[%c4 for %c4] : i32 -> !util.buffer{%c16}
  %b = util.buffer.alloc uninitialized : !util.buffer{%c16}
  util.buffer.fill %fv, %b[%c0 for %c16] : i32 -> !util.buffer{%c16}
  util.buffer.copy %a[%c4], %b[%c8], %c4 : !util.buffer{%c16} -> !util.buffer{%c16}
  %s = util.buffer.slice %b[%c8] : !util.buffer{%c16} -> !util.buffer{%c8}
  %x = util.buffer.load %s[%c0 for %c4] : !util.buffer{%c8} -> i32
  %y = util.buffer.load %b[%off for %c4] : !util.buffer{%c16} -> i32
  %n = util.buffer.size %s : !util.buffer
  %w = util.buffer.load %b[%c0 for %c4] : !util.buffer{%c16} -> i32
  return %x, %y, %n, %w : i32, i32, index, i32
}
func.func @bytes(%v: i32) -> (i32, i32, i32, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = util.buffer.alloc uninitialized : !util.buffer{%c8}
  util.buffer.store %v, %a[%c0 for %c4] : i32 -> !util.buffer{%c8}
  %b0 = util.buffer.load %a[%c1 for %c1] : !util.buffer{%c8} -> i8
  %h = util.buffer.load %a[%c2 for %c2] : !util.buffer{%c8} -> i16
  %s8 = arith.extsi %b0 : i8 to i32
  %u8 = arith.extui %b0 : i8 to i32
  %s16 = arith.extsi %h : i16 to i32
  %u16 = arith.extui %h : i16 to i32
  return %s8, %u8, %s16, %u16 : i32, i32, i32, i32
}
