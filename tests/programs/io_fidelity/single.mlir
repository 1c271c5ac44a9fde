// One export: iree-run-module runs it without --function.
func.func @only(%x: i32) -> i32 { return %x : i32 }
