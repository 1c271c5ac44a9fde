// Results the program makes itself: bf16 from a kernel, i1 from a comparison, a vm.list (values,
// a tensor, an empty slot, a nested list) next to a scalar.
func.func @to_bf16(%x: tensor<?xf32>) -> tensor<?xbf16> {
  %0 = arith.truncf %x : tensor<?xf32> to tensor<?xbf16>
  return %0 : tensor<?xbf16>
}
func.func @is_pos(%x: tensor<?xf32>) -> tensor<?xi1> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<?xi1>) {
  ^bb0(%a: f32, %o: i1):
    %p = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %p : i1
  } -> tensor<?xi1>
  return %r : tensor<?xi1>
}
func.func @lists(%a: i32, %f: f32, %t: tensor<?xf32>) -> (!util.list<?>, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %l = util.list.create %c4 : !util.list<?>
  util.list.resize %l, %c4 : !util.list<?>
  util.list.set %l[%c0], %a : i32 -> !util.list<?>
  %n = tensor.dim %t, %c0 : tensor<?xf32>
  %v = hal.tensor.export %t : tensor<?xf32>{%n} -> !hal.buffer_view
  util.list.set %l[%c1], %v : !hal.buffer_view -> !util.list<?>
  %inner = util.list.create %c1 : !util.list<?>
  util.list.resize %inner, %c1 : !util.list<?>
  util.list.set %inner[%c0], %f : f32 -> !util.list<?>
  util.list.set %l[%c3], %inner : !util.list<?> -> !util.list<?>
  %k = arith.constant -5 : i64
  return %l, %k : !util.list<?>, i64
}
