// VM dialect (compile with --compile-from=vm): variadic imports with i32 and (i32, i64) spans,
// a ref argument and a ref result. Only native modules export variadic functions.
vm.module @varmain {
  vm.import private @native.sum(%base : i32, %xs : i32 ...) -> i32
  vm.import private @native.pairs(%xs : tuple<i32, i64> ...) -> i64
  vm.import private @native.wrap(%b : !vm.buffer, %n : i32) -> !vm.buffer
  vm.rodata private @blob dense<[1, 2, 3, 4]> : tensor<4xi8>
  vm.func @f(%a : i32, %b : i32, %c : i64) -> (i32, i64, !vm.buffer) {
    %r = vm.call.variadic @native.sum(%a, [%b, %a, %b]) : (i32, i32 ...) -> i32
    %s = vm.call.variadic @native.pairs([(%a, %c), (%b, %c)]) : (tuple<i32, i64> ...) -> i64
    %e = vm.call.variadic @native.sum(%b, []) : (i32, i32 ...) -> i32
    %t = vm.add.i32 %r, %e : i32
    %blob = vm.const.ref.rodata @blob : !vm.buffer
    %w = vm.call @native.wrap(%blob, %t) : (!vm.buffer, i32) -> !vm.buffer
    vm.return %t, %s, %w : i32, i64, !vm.buffer
  }
  vm.export @f
}
