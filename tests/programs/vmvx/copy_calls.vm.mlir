// Hand-built calls of vmvx.copy.2d.x8/x16/x32/x64 and fill.2d.x32 (VM dialect, compiled with
// --compile-from=vm) that pass module.c's checks: iree-compile's own copies (transposes, strided
// slices) fail its length bound, so these are what a successful copy does. Each function takes the
// operands' offsets, strides and sizes (i64, as the imports do), runs the kernel into a fresh 128-byte
// output buffer and returns a hash of every output byte (h = h * 31 + byte, i32 wrapping) and two
// elements. The source is 128 distinct-ish bytes of rodata.
vm.module @module {
  vm.rodata private @src dense<[11, 48, 85, 122, -97, -60, -23, 14, 51, 88, 125, -94, -57, -20, 17, 54, 91, -128, -91, -54, -17, 20, 57, 94, -125, -88, -51, -14, 23, 60, 97, -122, -85, -48, -11, 26, 63, 100, -119, -82, -45, -8, 29, 66, 103, -116, -79, -42, -5, 32, 69, 106, -113, -76, -39, -2, 35, 72, 109, -110, -73, -36, 1, 38, 75, 112, -107, -70, -33, 4, 41, 78, 115, -104, -67, -30, 7, 44, 81, 118, -101, -64, -27, 10, 47, 84, 121, -98, -61, -24, 13, 50, 87, 124, -95, -58, -21, 16, 53, 90, 127, -92, -55, -18, 19, 56, 93, -126, -89, -52, -15, 22, 59, 96, -123, -86, -49, -12, 25, 62, 99, -120, -83, -46, -9, 28, 65, 102]> : tensor<128xi8>
  vm.import private @vmvx.copy.2d.x8(%in : !vm.buffer, %io : i64, %is0 : i64, %is1 : i64, %out : !vm.buffer, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64)
  vm.import private @vmvx.copy.2d.x16(%in : !vm.buffer, %io : i64, %is0 : i64, %is1 : i64, %out : !vm.buffer, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64)
  vm.import private @vmvx.copy.2d.x32(%in : !vm.buffer, %io : i64, %is0 : i64, %is1 : i64, %out : !vm.buffer, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64)
  vm.import private @vmvx.copy.2d.x64(%in : !vm.buffer, %io : i64, %is0 : i64, %is1 : i64, %out : !vm.buffer, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64)
  vm.import private @vmvx.fill.2d.x32(%value : i32, %out : !vm.buffer, %oo : i64, %os0 : i64, %s0 : i64, %s1 : i64)
  vm.func private @hash(%buf : !vm.buffer) -> i32 {
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %h0 = vm.const.i32 7
    %m = vm.const.i32 31
    %n = vm.buffer.length %buf : !vm.buffer -> i64
    vm.br ^loop(%c0, %h0 : i64, i32)
  ^loop(%i : i64, %h : i32):
    %b = vm.buffer.load.i8.u %buf[%i] : !vm.buffer -> i32
    %hm = vm.mul.i32 %h, %m : i32
    %hn = vm.add.i32 %hm, %b : i32
    %ip1 = vm.add.i64 %i, %c1 : i64
    %more = vm.cmp.lt.i64.s %ip1, %n : i64
    vm.cond_br %more, ^loop(%ip1, %hn : i64, i32), ^done(%hn : i32)
  ^done(%r : i32):
    vm.return %r : i32
  }
  vm.func @copy_x8(%io : i64, %is0 : i64, %is1 : i64, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64) -> (i32, i32, i32) {
    %c0 = vm.const.i64 0
    %c128 = vm.const.i64 128
    %c8 = vm.const.i32 8
    %src = vm.const.ref.rodata @src : !vm.buffer
    %out = vm.buffer.alloc %c128, %c8 : !vm.buffer
    vm.call @vmvx.copy.2d.x8(%src, %io, %is0, %is1, %out, %oo, %os0, %os1, %s0, %s1) : (!vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, i64, i64) -> ()
    %h = vm.call @hash(%out) : (!vm.buffer) -> i32
    %first = vm.buffer.load.i8.u %out[%oo] : !vm.buffer -> i32
    %one = vm.const.i64 1
    %next = vm.add.i64 %oo, %one : i64
    %second = vm.buffer.load.i8.u %out[%next] : !vm.buffer -> i32
    vm.return %h, %first, %second : i32, i32, i32
  }
  vm.export @copy_x8
  vm.func @copy_x16(%io : i64, %is0 : i64, %is1 : i64, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64) -> (i32, i32, i32) {
    %c0 = vm.const.i64 0
    %c128 = vm.const.i64 128
    %c8 = vm.const.i32 8
    %src = vm.const.ref.rodata @src : !vm.buffer
    %out = vm.buffer.alloc %c128, %c8 : !vm.buffer
    vm.call @vmvx.copy.2d.x16(%src, %io, %is0, %is1, %out, %oo, %os0, %os1, %s0, %s1) : (!vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, i64, i64) -> ()
    %h = vm.call @hash(%out) : (!vm.buffer) -> i32
    %first = vm.buffer.load.i16.u %out[%oo] : !vm.buffer -> i32
    %one = vm.const.i64 1
    %next = vm.add.i64 %oo, %one : i64
    %second = vm.buffer.load.i16.u %out[%next] : !vm.buffer -> i32
    vm.return %h, %first, %second : i32, i32, i32
  }
  vm.export @copy_x16
  vm.func @copy_x32(%io : i64, %is0 : i64, %is1 : i64, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64) -> (i32, i32, i32) {
    %c0 = vm.const.i64 0
    %c128 = vm.const.i64 128
    %c8 = vm.const.i32 8
    %src = vm.const.ref.rodata @src : !vm.buffer
    %out = vm.buffer.alloc %c128, %c8 : !vm.buffer
    vm.call @vmvx.copy.2d.x32(%src, %io, %is0, %is1, %out, %oo, %os0, %os1, %s0, %s1) : (!vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, i64, i64) -> ()
    %h = vm.call @hash(%out) : (!vm.buffer) -> i32
    %first = vm.buffer.load.i32 %out[%oo] : !vm.buffer -> i32
    %one = vm.const.i64 1
    %next = vm.add.i64 %oo, %one : i64
    %second = vm.buffer.load.i32 %out[%next] : !vm.buffer -> i32
    vm.return %h, %first, %second : i32, i32, i32
  }
  vm.export @copy_x32
  vm.func @copy_x64(%io : i64, %is0 : i64, %is1 : i64, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64) -> (i32, i64, i64) {
    %c0 = vm.const.i64 0
    %c128 = vm.const.i64 128
    %c8 = vm.const.i32 8
    %src = vm.const.ref.rodata @src : !vm.buffer
    %out = vm.buffer.alloc %c128, %c8 : !vm.buffer
    vm.call @vmvx.copy.2d.x64(%src, %io, %is0, %is1, %out, %oo, %os0, %os1, %s0, %s1) : (!vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, i64, i64) -> ()
    %h = vm.call @hash(%out) : (!vm.buffer) -> i32
    %first = vm.buffer.load.i64 %out[%oo] : !vm.buffer -> i64
    %one = vm.const.i64 1
    %next = vm.add.i64 %oo, %one : i64
    %second = vm.buffer.load.i64 %out[%next] : !vm.buffer -> i64
    vm.return %h, %first, %second : i32, i64, i64
  }
  vm.export @copy_x64
  vm.func @fill_x32(%value : i32, %oo : i64, %os0 : i64, %s0 : i64, %s1 : i64) -> (i32, i32) {
    %c128 = vm.const.i64 128
    %c8 = vm.const.i32 8
    %out = vm.buffer.alloc %c128, %c8 : !vm.buffer
    vm.call @vmvx.fill.2d.x32(%value, %out, %oo, %os0, %s0, %s1) : (i32, !vm.buffer, i64, i64, i64, i64) -> ()
    %h = vm.call @hash(%out) : (!vm.buffer) -> i32
    %first = vm.buffer.load.i32 %out[%oo] : !vm.buffer -> i32
    vm.return %h, %first : i32, i32
  }
  vm.export @fill_x32
}
