// vm.fail: cf.assert and util.status.check_ok lower to a conditional branch into vm.fail.
func.func @checked_div(%a: i32, %b: i32) -> i32 {
  %z = arith.constant 0 : i32
  %nz = arith.cmpi ne, %b, %z : i32
  cf.assert %nz, "divisor must be nonzero"
  %0 = arith.divsi %a, %b : i32
  return %0 : i32
}
func.func @status(%code: i32) -> i32 {
  util.status.check_ok %code, "custom status failure"
  %c = arith.constant 42 : i32
  return %c : i32
}
