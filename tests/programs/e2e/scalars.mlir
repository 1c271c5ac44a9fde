// i64 and f64 scalars in and out (compiled with --iree-input-demote-f64-to-f32=false), next to
// an f64 tensor: scale(x) = x * f + offset, and a 64-bit integer mix of the inputs.
func.func @wide(%x: tensor<4xf64>, %f: f64, %n: i64) -> (tensor<4xf64>, f64, i64) {
  %c1 = arith.constant 1.5 : f64
  %off = arith.addf %f, %c1 : f64
  %e = tensor.empty() : tensor<4xf64>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%x : tensor<4xf64>) outs(%e : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %f : f64
    %a = arith.addf %m, %off : f64
    linalg.yield %a : f64
  } -> tensor<4xf64>
  %big = arith.constant 1099511627776 : i64
  %n2 = arith.muli %n, %big : i64
  %n3 = arith.addi %n2, %n : i64
  return %0, %off, %n3 : tensor<4xf64>, f64, i64
}
