// A store into one vm.buffer that lands on another buffer's handle (a layout bytecode cannot make,
// but memory can hold): the load after it must see the handle as the store left it. The first
// block ends in a branch, so the compiled path runs it in a region function with its buffer memo.
vm.module @alias {
  vm.func @poke(%a: !vm.buffer, %b: !vm.buffer, %off: i64, %val: i32) -> i32 {
    %zero = vm.const.i64.zero
    %x = vm.buffer.load.i32 %b[%zero] : !vm.buffer -> i32
    vm.buffer.store.i32 %val, %a[%off] : i32 -> !vm.buffer
    %y = vm.buffer.load.i32 %b[%zero] : !vm.buffer -> i32
    %s = vm.add.i32 %x, %y : i32
    vm.br ^bb1(%s : i32)
  ^bb1(%r: i32):
    vm.return %r : i32
  }
  vm.export @poke
}
