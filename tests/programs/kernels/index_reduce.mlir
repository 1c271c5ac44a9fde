// A 64x1024x256 f32 tensor computed from the indices of all three dimensions (i64 and i32 index
// math, signed division and remainder of negative values), offset per row by the input, reduced
// over its two inner dimensions.
func.func @index_reduce(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64x1024x256xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64x1024x256xf32>) {
  ^bb0(%s: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %k32 = arith.index_cast %k : index to i32
    %c131 = arith.constant 131 : i64
    %c100 = arith.constant 100 : i32
    %c7 = arith.constant 7 : i32
    %c13 = arith.constant 13 : i64
    %ij = arith.muli %i64, %c131 : i64
    %ij2 = arith.addi %ij, %j64 : i64
    %r = arith.remsi %ij2, %c13 : i64
    %r32 = arith.trunci %r : i64 to i32
    %kc = arith.subi %k32, %c100 : i32
    %q = arith.divsi %kc, %c7 : i32
    %v = arith.addi %q, %r32 : i32
    %f = arith.sitofp %v : i32 to f32
    %y = arith.addf %f, %s : f32
    linalg.yield %y : f32
  } -> tensor<64x1024x256xf32>
  %z = tensor.empty() : tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%z : tensor<64xf32>) -> tensor<64xf32>
  %red = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>],
                         iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g : tensor<64x1024x256xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %red : tensor<64xf32>
}
