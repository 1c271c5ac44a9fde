// A 4096x4096 i32 tensor computed from its indices (i32 products that wrap, signed division and
// remainder of negative values) plus a per-column input, returned with its row maxima.
func.func @iota_max(%x: tensor<4096xi32>) -> (tensor<4096x4096xi32>, tensor<4096xi32>) {
  %e = tensor.empty() : tensor<4096x4096xi32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4096xi32>) outs(%e : tensor<4096x4096xi32>) {
  ^bb0(%s: i32, %out: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %i32 = arith.index_cast %i : index to i32
    %j32 = arith.index_cast %j : index to i32
    %c40503 = arith.constant 40503 : i32
    %c2048 = arith.constant 2048 : i32
    %c9 = arith.constant 9 : i32
    %h = arith.muli %i32, %c40503 : i32
    %h2 = arith.muli %h, %j32 : i32
    %jc = arith.subi %j32, %c2048 : i32
    %q = arith.divsi %jc, %c9 : i32
    %r = arith.remsi %h2, %c2048 : i32
    %v = arith.addi %q, %r : i32
    %y = arith.addi %v, %s : i32
    linalg.yield %y : i32
  } -> tensor<4096x4096xi32>
  %z = tensor.empty() : tensor<4096xi32>
  %min = arith.constant -2147483648 : i32
  %acc = linalg.fill ins(%min : i32) outs(%z : tensor<4096xi32>) -> tensor<4096xi32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%g : tensor<4096x4096xi32>) outs(%acc : tensor<4096xi32>) {
  ^bb0(%a: i32, %b: i32):
    %t = arith.maxsi %a, %b : i32
    linalg.yield %t : i32
  } -> tensor<4096xi32>
  return %g, %m : tensor<4096x4096xi32>, tensor<4096xi32>
}
