// Dynamic shapes in two dimensions: the transpose of an i32 matrix plus one.
func.func @transpose_inc(%m: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %r = tensor.dim %m, %c0 : tensor<?x?xi32>
  %c = tensor.dim %m, %c1 : tensor<?x?xi32>
  %init = tensor.empty(%c, %r) : tensor<?x?xi32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<?x?xi32>) outs(%init : tensor<?x?xi32>) {
  ^bb0(%in: i32, %out: i32):
    %s = arith.addi %in, %one : i32
    linalg.yield %s : i32
  } -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}
