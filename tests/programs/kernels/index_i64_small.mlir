// bench_kernels.py's index_i64 at 3x40x12, small enough for the reference path (the same body:
// a division by an index-derived divisor, the remainder of negative values, products that wrap).
func.func @index_i64(%x: tensor<3xi64>, %y: tensor<40xi32>) -> tensor<3x12xi64> {
  %z = tensor.empty() : tensor<3x12xi64>
  %c0 = arith.constant 0 : i64
  %acc = linalg.fill ins(%c0 : i64) outs(%z : tensor<3x12xi64>) -> tensor<3x12xi64>
  %red = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d1)>,
                                          affine_map<(d0, d1, d2) -> (d0, d2)>],
                         iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %y : tensor<3xi64>, tensor<40xi32>) outs(%acc : tensor<3x12xi64>) {
  ^bb0(%s: i64, %t: i32, %a: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %one = arith.constant 1 : index
    %c300 = arith.constant 300 : i64
    %c7 = arith.constant 7 : i64
    %k1 = arith.addi %k, %one : index
    %ij = arith.muli %i, %j : index
    %q = arith.divsi %ij, %k1 : index
    %q64 = arith.index_cast %q : index to i64
    %j64 = arith.index_cast %j : index to i64
    %jn = arith.subi %j64, %c300 : i64
    %r = arith.remsi %jn, %c7 : i64
    %v = arith.addi %q64, %r : i64
    %w = arith.muli %v, %s : i64
    %t64 = arith.extsi %t : i32 to i64
    %u = arith.addi %w, %t64 : i64
    %sum = arith.addi %a, %u : i64
    linalg.yield %sum : i64
  } -> tensor<3x12xi64>
  return %red : tensor<3x12xi64>
}
