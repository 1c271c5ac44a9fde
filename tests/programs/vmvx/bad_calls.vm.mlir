// A hand-built call of vmvx.add.2d.f32 (VM dialect, compiled with --compile-from=vm): the lhs
// buffer's byte length, the call's size0, lhs offset and lhs row stride are inputs, so one function
// makes in-bounds, out-of-bounds and overflowing calls; iree-run-module gives the statuses.
vm.module @module {
  vm.import private @vmvx.add.2d.f32(%lhs : !vm.buffer, %lo : i64, %ls0 : i64, %ls1 : i64, %rhs : !vm.buffer, %ro : i64, %rs0 : i64, %rs1 : i64, %out : !vm.buffer, %oo : i64, %os0 : i64, %os1 : i64, %s0 : i64, %s1 : i64)
  vm.func @oob(%n : i64, %size0 : i64, %offset : i64, %stride0 : i64) {
    %c4 = vm.const.i32 4
    %zero = vm.const.i64 0
    %one = vm.const.i64 1
    %c4l = vm.const.i64 4
    %c32 = vm.const.i64 32
    %small = vm.buffer.alloc %n, %c4 : !vm.buffer
    %big = vm.buffer.alloc %c32, %c4 : !vm.buffer
    vm.call @vmvx.add.2d.f32(%small, %offset, %stride0, %one, %big, %zero, %c4l, %one, %big, %zero, %c4l, %one, %size0, %c4l) : (!vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, !vm.buffer, i64, i64, i64, i64, i64) -> ()
    vm.return
  }
  vm.export @oob
}
