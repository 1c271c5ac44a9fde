// Host-side integer division next to a dispatch: @div_scale(x, a, b) = (x * (a / b), a / b). The
// quotient is also a result, so vm.div.i32.s runs in the VM before the dispatch: with b = 0 the
// native runtime dies of SIGFPE there; the interpreter traps naming function and pc.
func.func @div_scale(%x: tensor<4xf32>, %a: i32, %b: i32) -> (tensor<4xf32>, i32) {
  %q = arith.divsi %a, %b : i32
  %f = arith.sitofp %q : i32 to f32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %f : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %0, %q : tensor<4xf32>, i32
}
