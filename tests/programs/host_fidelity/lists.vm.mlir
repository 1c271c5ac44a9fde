// VM dialect (--compile-from=vm): vm.list element types (values, i8/i16 narrowing, variants, a list
// of lists), conversions between the op's type and the element type, resize/reserve/alloc sizes,
// get/set out of range, and list.get.ref's type check. `!vm.list<?>` encodes as `!vm.opaque`.
vm.module @lst {
  // A variant list holding i32, i64, f32, f64, each read back as another type.
  vm.func @variant_convert(%a : i32, %b : i64, %x : f32, %y : f64) -> (i64, i32, f32, i32, f64, f32, i32, f64) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %c3 = vm.const.i32 3
    %c4 = vm.const.i32 4
    %l = vm.list.alloc %c4 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c4 : (!vm.list<?>, i32)
    vm.list.set.i32 %l, %c0, %a : (!vm.list<?>, i32, i32)
    vm.list.set.i64 %l, %c1, %b : (!vm.list<?>, i32, i64)
    vm.list.set.f32 %l, %c2, %x : (!vm.list<?>, i32, f32)
    vm.list.set.f64 %l, %c3, %y : (!vm.list<?>, i32, f64)
    %0 = vm.list.get.i64 %l, %c0 : (!vm.list<?>, i32) -> i64
    %1 = vm.list.get.i32 %l, %c1 : (!vm.list<?>, i32) -> i32
    %2 = vm.list.get.f32 %l, %c0 : (!vm.list<?>, i32) -> f32
    %3 = vm.list.get.i32 %l, %c2 : (!vm.list<?>, i32) -> i32
    %4 = vm.list.get.f64 %l, %c2 : (!vm.list<?>, i32) -> f64
    %5 = vm.list.get.f32 %l, %c3 : (!vm.list<?>, i32) -> f32
    %6 = vm.list.get.i32 %l, %c3 : (!vm.list<?>, i32) -> i32
    %7 = vm.list.get.f64 %l, %c1 : (!vm.list<?>, i32) -> f64
    vm.return %0, %1, %2, %3, %4, %5, %6, %7 : i64, i32, f32, i32, f64, f32, i32, f64
  }
  vm.export @variant_convert

  // i8/i16 lists narrow what is stored and sign-extend what is read; f32 <-> i32 gives 0.
  vm.func @narrow(%a : i32, %b : i64) -> (i32, i64, i32, i64, i32, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %l8 = vm.list.alloc %c2 : (i32) -> !vm.list<i8>
    vm.list.resize %l8, %c2 : (!vm.list<i8>, i32)
    vm.list.set.i32 %l8, %c0, %a : (!vm.list<i8>, i32, i32)
    vm.list.set.i64 %l8, %c1, %b : (!vm.list<i8>, i32, i64)
    %0 = vm.list.get.i32 %l8, %c0 : (!vm.list<i8>, i32) -> i32
    %1 = vm.list.get.i64 %l8, %c1 : (!vm.list<i8>, i32) -> i64
    %l16 = vm.list.alloc %c2 : (i32) -> !vm.list<i16>
    vm.list.resize %l16, %c2 : (!vm.list<i16>, i32)
    vm.list.set.i32 %l16, %c0, %a : (!vm.list<i16>, i32, i32)
    vm.list.set.i64 %l16, %c1, %b : (!vm.list<i16>, i32, i64)
    %2 = vm.list.get.i32 %l16, %c0 : (!vm.list<i16>, i32) -> i32
    %3 = vm.list.get.i64 %l16, %c1 : (!vm.list<i16>, i32) -> i64
    %lf = vm.list.alloc %c2 : (i32) -> !vm.list<f32>
    vm.list.resize %lf, %c2 : (!vm.list<f32>, i32)
    vm.list.set.i32 %lf, %c0, %a : (!vm.list<f32>, i32, i32)
    %fz = vm.list.get.f32 %lf, %c0 : (!vm.list<f32>, i32) -> f32
    %4 = vm.bitcast.f32.i32 %fz : f32 -> i32
    %li = vm.list.alloc %c2 : (i32) -> !vm.list<i32>
    vm.list.resize %li, %c2 : (!vm.list<i32>, i32)
    vm.list.set.i32 %li, %c0, %a : (!vm.list<i32>, i32, i32)
    %fi = vm.list.get.f32 %li, %c0 : (!vm.list<i32>, i32) -> f32
    %5 = vm.bitcast.f32.i32 %fi : f32 -> i32
    vm.return %0, %1, %2, %3, %4, %5 : i32, i64, i32, i64, i32, i32
  }
  vm.export @narrow

  // Shrink to %n and grow back: what the regrown elements hold.
  vm.func @regrow(%v : i32, %n : i32) -> (i32, i32, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c3 = vm.const.i32 3
    %l = vm.list.alloc %c1 : (i32) -> !vm.list<i32>
    vm.list.resize %l, %c3 : (!vm.list<i32>, i32)
    vm.list.set.i32 %l, %c1, %v : (!vm.list<i32>, i32, i32)
    vm.list.set.i32 %l, %c0, %v : (!vm.list<i32>, i32, i32)
    vm.list.resize %l, %n : (!vm.list<i32>, i32)
    vm.list.resize %l, %c3 : (!vm.list<i32>, i32)
    %a = vm.list.get.i32 %l, %c0 : (!vm.list<i32>, i32) -> i32
    %b = vm.list.get.i32 %l, %c1 : (!vm.list<i32>, i32) -> i32
    %s = vm.list.size %l : (!vm.list<i32>) -> i32
    vm.return %a, %b, %s : i32, i32, i32
  }
  vm.export @regrow

  // The same for a variant list holding a buffer at 0.
  vm.func @variant_regrow(%n : i32) -> (i32, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %c8 = vm.const.i64 8
    %z = vm.const.i32 0
    %l = vm.list.alloc %c1 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c2 : (!vm.list<?>, i32)
    %b = vm.buffer.alloc %c8, %z : !vm.buffer
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    vm.list.set.i32 %l, %c1, %c2 : (!vm.list<?>, i32, i32)
    vm.list.resize %l, %n : (!vm.list<?>, i32)
    vm.list.resize %l, %c2 : (!vm.list<?>, i32)
    %g = vm.list.get.ref %l, %c0 : (!vm.list<?>, i32) -> !vm.buffer
    %nz = vm.cmp.nz.ref %g : !vm.buffer
    %s = vm.list.size %l : (!vm.list<?>) -> i32
    vm.return %nz, %s : i32, i32
  }
  vm.export @variant_regrow

  // Reads element %i of a variant list [buffer, 5 (i32), empty] as i32.
  vm.func @variant_get_i32(%i : i32) -> i32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c3 = vm.const.i32 3
    %c5 = vm.const.i32 5
    %c8 = vm.const.i64 8
    %z = vm.const.i32 0
    %l = vm.list.alloc %c3 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c3 : (!vm.list<?>, i32)
    %b = vm.buffer.alloc %c8, %z : !vm.buffer
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    vm.list.set.i32 %l, %c1, %c5 : (!vm.list<?>, i32, i32)
    %v = vm.list.get.i32 %l, %i : (!vm.list<?>, i32) -> i32
    vm.return %v : i32
  }
  vm.export @variant_get_i32

  // Element %i of a variant list [buffer, 5 (i32), empty, list] as a buffer: is it non-null?
  vm.func @variant_get_buffer(%i : i32) -> i32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c3 = vm.const.i32 3
    %c4 = vm.const.i32 4
    %c5 = vm.const.i32 5
    %c8 = vm.const.i64 8
    %z = vm.const.i32 0
    %l = vm.list.alloc %c4 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c4 : (!vm.list<?>, i32)
    %b = vm.buffer.alloc %c8, %z : !vm.buffer
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    vm.list.set.i32 %l, %c1, %c5 : (!vm.list<?>, i32, i32)
    %inner = vm.list.alloc %c1 : (i32) -> !vm.list<i32>
    vm.list.set.ref %l, %c3, %inner : (!vm.list<?>, i32, !vm.list<i32>)
    %g = vm.list.get.ref %l, %i : (!vm.list<?>, i32) -> !vm.buffer
    %nz = vm.cmp.nz.ref %g : !vm.buffer
    vm.return %nz : i32
  }
  vm.export @variant_get_buffer

  // Element %i of [buffer, 5 (i32), empty, list<i32>] as a !vm.list<f32>: every list is `vm.list`.
  vm.func @variant_get_list(%i : i32) -> i32 {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c3 = vm.const.i32 3
    %c4 = vm.const.i32 4
    %c5 = vm.const.i32 5
    %c8 = vm.const.i64 8
    %z = vm.const.i32 0
    %l = vm.list.alloc %c4 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c4 : (!vm.list<?>, i32)
    %b = vm.buffer.alloc %c8, %z : !vm.buffer
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    vm.list.set.i32 %l, %c1, %c5 : (!vm.list<?>, i32, i32)
    %inner = vm.list.alloc %c1 : (i32) -> !vm.list<i32>
    vm.list.resize %inner, %c5 : (!vm.list<i32>, i32)
    vm.list.set.ref %l, %c3, %inner : (!vm.list<?>, i32, !vm.list<i32>)
    %g = vm.list.get.ref %l, %i : (!vm.list<?>, i32) -> !vm.list<f32>
    %nz = vm.cmp.nz.ref %g : !vm.list<f32>
    vm.return %nz : i32
  }
  vm.export @variant_get_list

  // get (%set = 0) or set (%set != 0) element %i of a %n-element i64 list.
  vm.func @oob(%n : i32, %i : i32, %set : i32) -> i32 {
    %c7 = vm.const.i32 7
    %l = vm.list.alloc %n : (i32) -> !vm.list<i64>
    vm.list.resize %l, %n : (!vm.list<i64>, i32)
    vm.cond_br %set, ^s, ^g
  ^s:
    %c7l = vm.const.i64 7
    vm.list.set.i64 %l, %i, %c7l : (!vm.list<i64>, i32, i64)
    vm.return %c7 : i32
  ^g:
    %v = vm.list.get.i32 %l, %i : (!vm.list<i64>, i32) -> i32
    vm.return %v : i32
  }
  vm.export @oob

  // Capacities and sizes from the caller (u32: -1 is 4294967295).
  vm.func @alloc(%cap : i32) -> i32 {
    %l = vm.list.alloc %cap : (i32) -> !vm.list<?>
    %s = vm.list.size %l : (!vm.list<?>) -> i32
    vm.return %s : i32
  }
  vm.export @alloc

  vm.func @reserve(%cap : i32) -> i32 {
    %c0 = vm.const.i32 0
    %l = vm.list.alloc %c0 : (i32) -> !vm.list<i64>
    vm.list.reserve %l, %cap : (!vm.list<i64>, i32)
    %s = vm.list.size %l : (!vm.list<i64>) -> i32
    vm.return %s : i32
  }
  vm.export @reserve

  vm.func @resize(%n : i32) -> i32 {
    %c0 = vm.const.i32 0
    %l = vm.list.alloc %c0 : (i32) -> !vm.list<i8>
    vm.list.resize %l, %n : (!vm.list<i8>, i32)
    %s = vm.list.size %l : (!vm.list<i8>) -> i32
    vm.return %s : i32
  }
  vm.export @resize

  // A list of lists (a ref list): set element %i, read element %j back.
  vm.func @nested(%i : i32, %j : i32) -> (i32, i32) {
    %c2 = vm.const.i32 2
    %c5 = vm.const.i32 5
    %l = vm.list.alloc %c2 : (i32) -> !vm.list<!vm.list<i32>>
    vm.list.resize %l, %c2 : (!vm.list<!vm.list<i32>>, i32)
    %inner = vm.list.alloc %c2 : (i32) -> !vm.list<i32>
    vm.list.resize %inner, %c5 : (!vm.list<i32>, i32)
    vm.list.set.ref %l, %i, %inner : (!vm.list<!vm.list<i32>>, i32, !vm.list<i32>)
    %g = vm.list.get.ref %l, %j : (!vm.list<!vm.list<i32>>, i32) -> !vm.list<i32>
    %nz = vm.cmp.nz.ref %g : !vm.list<i32>
    %s = vm.list.size %l : (!vm.list<!vm.list<i32>>) -> i32
    vm.return %nz, %s : i32, i32
  }
  vm.export @nested

  // list.get.ref typed !vm.ref<?> (`!vm.opaque`: no ref type) of a list element.
  vm.func @variant_any(%i : i32) -> i32 {
    %c2 = vm.const.i32 2
    %l = vm.list.alloc %c2 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c2 : (!vm.list<?>, i32)
    %inner = vm.list.alloc %c2 : (i32) -> !vm.list<i32>
    vm.list.set.ref %l, %i, %inner : (!vm.list<?>, i32, !vm.list<i32>)
    %g = vm.list.get.ref %l, %i : (!vm.list<?>, i32) -> !vm.ref<?>
    %nz = vm.cmp.nz.ref %g : !vm.ref<?>
    vm.return %nz : i32
  }
  vm.export @variant_any

  // Two list.get.ref of one slot (the tests set the MOVE bit on the first one's result).
  vm.func @list_get_twice(%n : i64) -> (i32, i32, i32) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %z = vm.const.i32 0
    %l = vm.list.alloc %c1 : (i32) -> !vm.list<?>
    vm.list.resize %l, %c1 : (!vm.list<?>, i32)
    %b = vm.buffer.alloc %n, %z : !vm.buffer
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    %x = vm.list.get.ref %l, %c0 : (!vm.list<?>, i32) -> !vm.buffer
    %y = vm.list.get.ref %l, %c0 : (!vm.list<?>, i32) -> !vm.buffer
    %0 = vm.cmp.nz.ref %x : !vm.buffer
    %1 = vm.cmp.nz.ref %y : !vm.buffer
    %2 = vm.list.size %l : (!vm.list<?>) -> i32
    vm.return %0, %1, %2 : i32, i32, i32
  }
  vm.export @list_get_twice
}
