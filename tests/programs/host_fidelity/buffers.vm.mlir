// VM dialect (--compile-from=vm): every vm.buffer op at the edges of its checks - offsets and lengths
// chosen by the caller, 64-bit wrap-around included, read-only rodata, null buffers. Scratch buffers
// are clones of the 16 rodata bytes 1..16 and are read back as four little-endian i32 words.
// (vm.br_table without block operands makes iree-compile 3.13 exit silently: one function per case.)
vm.module @buf {
  vm.rodata private @bytes dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : tensor<16xi8>

  vm.func @alloc(%len : i64, %align : i32) -> i64 {
    %b = vm.buffer.alloc %len, %align : !vm.buffer
    %n = vm.buffer.length %b : !vm.buffer -> i64
    vm.return %n : i64
  }
  vm.export @alloc

  vm.func @clone(%off : i64, %len : i64, %align : i32) -> (i64, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %b = vm.buffer.clone %r, %off, %len, %align : !vm.buffer -> !vm.buffer
    %n = vm.buffer.length %b : !vm.buffer -> i64
    %c0 = vm.const.i64 0
    %v = vm.const.i32 -1
    vm.buffer.store.i8 %v, %b[%c0] : i32 -> !vm.buffer
    %x = vm.buffer.load.i8.u %b[%c0] : !vm.buffer -> i32
    %y = vm.buffer.load.i8.u %r[%off] : !vm.buffer -> i32
    vm.return %n, %x, %y : i64, i32, i32
  }
  vm.export @clone

  vm.func @load_i32(%off : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %v = vm.buffer.load.i32 %r[%off] : !vm.buffer -> i32
    vm.return %v : i32
  }
  vm.export @load_i32

  vm.func @load_i16(%off : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %v = vm.buffer.load.i16.s %r[%off] : !vm.buffer -> i32
    vm.return %v : i32
  }
  vm.export @load_i16

  vm.func @load_i64(%off : i64) -> i64 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %v = vm.buffer.load.i64 %r[%off] : !vm.buffer -> i64
    vm.return %v : i64
  }
  vm.export @load_i64

  vm.func @store_rodata(%off : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %v = vm.const.i32 7
    vm.buffer.store.i32 %v, %r[%off] : i32 -> !vm.buffer
    %x = vm.buffer.load.i32 %r[%off] : !vm.buffer -> i32
    vm.return %x : i32
  }
  vm.export @store_rodata

  vm.func @fill_rodata(%off : i64, %len : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %v = vm.const.i32 7
    vm.buffer.fill.i8 %r, %off, %len, %v : i32 -> !vm.buffer
    %x = vm.buffer.load.i32 %r[%off] : !vm.buffer -> i32
    vm.return %x : i32
  }
  vm.export @fill_rodata

  vm.func @copy_to_rodata(%len : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.alloc %c16, %z : !vm.buffer
    vm.buffer.copy %b, %c0, %r, %c0, %len : !vm.buffer -> !vm.buffer
    %x = vm.buffer.load.i32 %r[%c0] : !vm.buffer -> i32
    vm.return %x : i32
  }
  vm.export @copy_to_rodata


  vm.func @copy(%src : i64, %dst : i64, %len : i64) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.copy %b, %src, %b, %dst, %len : !vm.buffer -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @copy

  vm.func @compare(%lo : i64, %ro : i64, %len : i64) -> i32 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    %x = vm.buffer.compare %r, %lo, %b, %ro, %len : !vm.buffer, !vm.buffer
    vm.return %x : i32
  }
  vm.export @compare

  vm.func @hash(%off : i64, %len : i64) -> i64 {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %x = vm.buffer.hash %r, %off, %len : !vm.buffer -> i64
    vm.return %x : i64
  }
  vm.export @hash


  vm.func @fill_i8(%off : i64, %len : i64, %v : i32) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.i8 %b, %off, %len, %v : i32 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_i8

  vm.func @fill_i16(%off : i64, %len : i64, %v : i32) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.i16 %b, %off, %len, %v : i32 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_i16

  vm.func @fill_i32(%off : i64, %len : i64, %v : i32) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.i32 %b, %off, %len, %v : i32 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_i32

  vm.func @fill_i64(%off : i64, %len : i64, %v : i64) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.i64 %b, %off, %len, %v : i64 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_i64

  vm.func @fill_f32(%off : i64, %len : i64, %v : f32) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.f32 %b, %off, %len, %v : f32 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_f32

  vm.func @fill_f64(%off : i64, %len : i64, %v : f64) -> (i32, i32, i32, i32) {
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c2 = vm.const.i64 2
    %c3 = vm.const.i64 3
    %c16 = vm.const.i64 16
    %z = vm.const.i32 0
    %b = vm.buffer.clone %r, %c0, %c16, %z : !vm.buffer -> !vm.buffer
    vm.buffer.fill.f64 %b, %off, %len, %v : f64 -> !vm.buffer
    %w0 = vm.buffer.load.i32 %b[%c0] : !vm.buffer -> i32
    %w1 = vm.buffer.load.i32 %b[%c1] : !vm.buffer -> i32
    %w2 = vm.buffer.load.i32 %b[%c2] : !vm.buffer -> i32
    %w3 = vm.buffer.load.i32 %b[%c3] : !vm.buffer -> i32
    vm.return %w0, %w1, %w2, %w3 : i32, i32, i32, i32
  }
  vm.export @fill_f64

  vm.func @null_length() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %n = vm.buffer.length %null : !vm.buffer -> i64
    vm.return %z : i32
  }
  vm.export @null_length

  vm.func @null_clone() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %b = vm.buffer.clone %null, %c0, %c1, %z : !vm.buffer -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_clone

  vm.func @null_copy_src() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    vm.buffer.copy %null, %c0, %r, %c0, %c1 : !vm.buffer -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_copy_src

  vm.func @null_copy_dst() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    vm.buffer.copy %r, %c0, %null, %c0, %c1 : !vm.buffer -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_copy_dst

  vm.func @null_compare_lhs() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %x = vm.buffer.compare %null, %c0, %r, %c0, %c1 : !vm.buffer, !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_compare_lhs

  vm.func @null_compare_rhs() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %x = vm.buffer.compare %r, %c0, %null, %c0, %c1 : !vm.buffer, !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_compare_rhs

  vm.func @null_fill() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    vm.buffer.fill.i32 %null, %c0, %c1, %z : i32 -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_fill

  vm.func @null_load() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %l = vm.buffer.load.i16.u %null[%c0] : !vm.buffer -> i32
    vm.return %z : i32
  }
  vm.export @null_load

  vm.func @null_store() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    vm.buffer.store.i64 %c0, %null[%c0] : i64 -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_store

  vm.func @null_hash() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %h = vm.buffer.hash %null, %c0, %c1 : !vm.buffer -> i64
    vm.return %z : i32
  }
  vm.export @null_hash

  vm.func @null_load_f32() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %lf = vm.buffer.load.f32 %null[%c0] : !vm.buffer -> f32
    vm.return %z : i32
  }
  vm.export @null_load_f32

  vm.func @null_store_f64() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %f = vm.const.f64 1.0
    vm.buffer.store.f64 %f, %null[%c0] : f64 -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_store_f64

  vm.func @null_fill_f32() -> i32 {
    %null = vm.const.ref.zero : !vm.buffer
    %r = vm.const.ref.rodata @bytes : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %z = vm.const.i32 0
    %g = vm.const.f32 1.0
    vm.buffer.fill.f32 %null, %c0, %c1, %g : f32 -> !vm.buffer
    vm.return %z : i32
  }
  vm.export @null_fill_f32
}
