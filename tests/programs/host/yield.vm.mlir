// VM dialect (compile with --compile-from=vm): vm.yield, reached only when the argument is nonzero
// (iree-run-module never finishes a call that yields; the interpreter resumes it).
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
