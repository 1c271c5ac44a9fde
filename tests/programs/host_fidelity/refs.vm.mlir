// VM dialect (--compile-from=vm): ref ops - casts and their type check, select/switch/global ops on
// `!vm.ref<?>` values, comparisons, discard, and ref results that move out of a global.
vm.module @rf {
  vm.global.ref private mutable @any : !vm.ref<?>
  vm.global.ref private mutable @g : !vm.buffer
  vm.rodata private @blob dense<[1, 2, 3, 4]> : tensor<4xi8>

  // vm.cast.any.ref checks the type; !vm.ref<?> (`!vm.opaque`) selects/globals reject any non-null.
  vm.func @cast_to_list(%c : i32) -> i32 {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %any = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    %l = vm.cast.any.ref %any : !vm.ref<?> -> !vm.list<i32>
    %nz = vm.cmp.nz.ref %l : !vm.list<i32>
    vm.return %nz : i32
  }
  vm.export @cast_to_list

  vm.func @cast_to_buffer(%c : i32) -> i32 {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %any = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    %l = vm.cast.any.ref %any : !vm.ref<?> -> !vm.buffer
    %nz = vm.cmp.eq.ref %l, %b : !vm.buffer
    vm.return %nz : i32
  }
  vm.export @cast_to_buffer

  vm.func @cast_null(%c : i32) -> i32 {
    %b = vm.const.ref.zero : !vm.buffer
    %any = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    %l = vm.cast.any.ref %any : !vm.ref<?> -> !vm.list<i32>
    %nz = vm.cmp.nz.ref %l : !vm.list<i32>
    vm.return %nz : i32
  }
  vm.export @cast_null

  vm.func @select_any(%c : i32) -> i32 {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %n = vm.const.ref.zero : !vm.buffer
    %x = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    %y = vm.cast.ref.any %n : !vm.buffer -> !vm.ref<?>
    %s = vm.select.ref %c, %x, %y : !vm.ref<?>
    %nz = vm.cmp.nz.ref %s : !vm.ref<?>
    vm.return %nz : i32
  }
  vm.export @select_any

  vm.func @global_any(%c : i32) -> i32 {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %x = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    vm.global.store.ref %x, @any : !vm.ref<?>
    %y = vm.global.load.ref @any : !vm.ref<?>
    %nz = vm.cmp.nz.ref %y : !vm.ref<?>
    vm.return %nz : i32
  }
  vm.export @global_any

  // Comparisons (the tests set the MOVE bit on the first operand).
  vm.func @cmp(%c : i32) -> (i32, i32, i32, i32) {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %b2 = vm.const.ref.rodata @blob : !vm.buffer
    %n = vm.const.ref.zero : !vm.buffer
    %0 = vm.cmp.eq.ref %b, %b2 : !vm.buffer
    %1 = vm.cmp.ne.ref %b, %n : !vm.buffer
    %2 = vm.cmp.nz.ref %n : !vm.buffer
    %3 = vm.cmp.eq.ref %n, %n : !vm.buffer
    vm.return %0, %1, %2, %3 : i32, i32, i32, i32
  }
  vm.export @cmp

  vm.func @switch_any(%i : i32) -> i32 {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %n = vm.const.ref.zero : !vm.buffer
    %x = vm.cast.ref.any %b : !vm.buffer -> !vm.ref<?>
    %y = vm.cast.ref.any %n : !vm.buffer -> !vm.ref<?>
    %s = vm.switch.ref %i[%x, %y] else %y : !vm.ref<?>
    %nz = vm.cmp.nz.ref %s : !vm.ref<?>
    vm.return %nz : i32
  }
  vm.export @switch_any

  vm.func @discard(%c : i32) -> (i32, i32) {
    %b = vm.const.ref.rodata @blob : !vm.buffer
    %0 = vm.cmp.nz.ref %b : !vm.buffer
    vm.discard.refs %b : !vm.buffer
    %1 = vm.cmp.nz.ref %b : !vm.buffer
    vm.return %0, %1 : i32, i32
  }
  vm.export @discard

  vm.func @global_load_twice(%n : i64) -> (i32, i32) {
    %z = vm.const.i32 0
    %b = vm.buffer.alloc %n, %z : !vm.buffer
    vm.global.store.ref %b, @g : !vm.buffer
    %x = vm.global.load.ref @g : !vm.buffer
    %y = vm.global.load.ref @g : !vm.buffer
    %0 = vm.cmp.nz.ref %x : !vm.buffer
    %1 = vm.cmp.nz.ref %y : !vm.buffer
    vm.return %0, %1 : i32, i32
  }
  vm.export @global_load_twice
}
