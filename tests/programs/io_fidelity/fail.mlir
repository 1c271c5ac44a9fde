// Calls that fail inside the module, after iree-run-module has parsed the inputs and printed
// `EXEC @check`: a false cf.assert becomes a vm.cond_fail (FAILED_PRECONDITION with the message).
func.func @check(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %ok = arith.cmpi sgt, %x, %c0 : i32
  cf.assert %ok, "x must be positive"
  return %x : i32
}
