// VM dialect (compile with --compile-from=vm): vm.yield, an op the interpreter does not run
// (coroutines are not modelled), reached only when the argument is nonzero.
vm.module @yielding {
  vm.func @maybe_yield(%a : i32) -> i32 {
    vm.cond_br %a, ^bb1, ^bb2
  ^bb1:
    vm.yield ^bb2
  ^bb2:
    vm.return %a : i32
  }
  vm.export @maybe_yield
}
