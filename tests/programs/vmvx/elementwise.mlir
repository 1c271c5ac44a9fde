// vmvx microkernels: 2-D binary and unary elementwise ops in f32 and i32. The strided slices make
// the kernels' operands strided (row stride 5 or 6 over a 4-column view), the broadcast a stride 0.
func.func @binary_f32(%a: tensor<3x5xf32>, %b: tensor<3x5xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %as = tensor.extract_slice %a[0, 1] [3, 4] [1, 1] : tensor<3x5xf32> to tensor<3x4xf32>
  %bs = tensor.extract_slice %b[0, 0] [3, 4] [1, 1] : tensor<3x5xf32> to tensor<3x4xf32>
  %add = arith.addf %as, %bs : tensor<3x4xf32>
  %sub = arith.subf %as, %bs : tensor<3x4xf32>
  %mul = arith.mulf %as, %bs : tensor<3x4xf32>
  %div = arith.divf %as, %bs : tensor<3x4xf32>
  return %add, %sub, %mul, %div : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
func.func @unary_f32(%a: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %abs = math.absf %a : tensor<4x6xf32>
  %ceil = math.ceil %a : tensor<4x6xf32>
  %floor = math.floor %a : tensor<4x6xf32>
  %exp = math.exp %a : tensor<4x6xf32>
  %log = math.log %abs : tensor<4x6xf32>
  %neg = arith.negf %a : tensor<4x6xf32>
  %rsqrt = math.rsqrt %abs : tensor<4x6xf32>
  %e2 = math.exp %neg : tensor<4x6xf32>
  return %abs, %ceil, %floor, %exp, %log, %neg, %rsqrt, %e2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
func.func @binary_i32(%a: tensor<3x6xi32>, %b: tensor<3x6xi32>) -> (tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>) {
  %add = arith.addi %a, %b : tensor<3x6xi32>
  %sub = arith.subi %a, %b : tensor<3x6xi32>
  %mul = arith.muli %a, %b : tensor<3x6xi32>
  %and = arith.andi %a, %b : tensor<3x6xi32>
  %or = arith.ori %a, %b : tensor<3x6xi32>
  %xor = arith.xori %a, %b : tensor<3x6xi32>
  %divs = arith.divsi %a, %b : tensor<3x6xi32>
  %divu = arith.divui %a, %b : tensor<3x6xi32>
  %c31 = arith.constant dense<31> : tensor<3x6xi32>
  %n = arith.andi %b, %c31 : tensor<3x6xi32>
  %shl = arith.shli %a, %n : tensor<3x6xi32>
  %shrs = arith.shrsi %a, %n : tensor<3x6xi32>
  %shru = arith.shrui %a, %n : tensor<3x6xi32>
  return %add, %sub, %mul, %and, %or, %xor, %divs, %divu, %shl, %shrs, %shru : tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>, tensor<3x6xi32>
}
func.func @ctlz_i32(%a: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %r = math.ctlz %a : tensor<2x5xi32>
  return %r : tensor<2x5xi32>
}
// A row broadcast: the kernel reads %row with stride0 0.
func.func @broadcast_add(%m: tensor<4x3xf32>, %row: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %row : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
