// util.list -> vm.list of i32 / i64 / f32 and a variant list of refs: alloc, resize, set, get, size.
func.func @lists(%n: i32, %x: i64) -> (i32, i64, i32, f32, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %l = util.list.create %c3 : !util.list<i32>
  util.list.resize %l, %c3 : !util.list<i32>
  util.list.set %l[%c0], %n : !util.list<i32>
  %t = arith.constant 11 : i32
  util.list.set %l[%c1], %t : !util.list<i32>
  %a = util.list.get %l[%c0] : !util.list<i32>
  %untouched = util.list.get %l[%c1] : !util.list<i32>
  %sz = util.list.size %l : !util.list<i32>
  %szi = arith.index_cast %sz : index to i32
  %l2 = util.list.create %c1 : !util.list<i64>
  util.list.resize %l2, %c1 : !util.list<i64>
  util.list.set %l2[%c0], %x : !util.list<i64>
  %b = util.list.get %l2[%c0] : !util.list<i64>
  %l3 = util.list.create %c1 : !util.list<f32>
  util.list.resize %l3, %c1 : !util.list<f32>
  %f = arith.constant 2.5 : f32
  util.list.set %l3[%c0], %f : !util.list<f32>
  %g = util.list.get %l3[%c0] : !util.list<f32>
  return %a, %b, %szi, %g, %untouched : i32, i64, i32, f32, i32
}
func.func @list_oob(%i: index) -> i32 {
  %c2 = arith.constant 2 : index
  %l = util.list.create %c2 : !util.list<i32>
  util.list.resize %l, %c2 : !util.list<i32>
  %v = util.list.get %l[%i] : !util.list<i32>
  return %v : i32
}

// A list of refs: util.list<!util.buffer> cannot be encoded by iree-compile 3.13 ("not registered
// in type table"); a variant list (`?`) holding a buffer can.
func.func @buffer_list(%n: index) -> (index, index, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = util.list.create %c2 : !util.list<?>
  util.list.resize %l, %c2 : !util.list<?>
  %b = util.buffer.alloc uninitialized : !util.buffer{%n}
  util.list.set %l[%c1], %b : !util.buffer -> !util.list<?>
  %g = util.list.get %l[%c1] : !util.list<?> -> !util.buffer
  %s = util.buffer.size %g : !util.buffer
  %sz = util.list.size %l : !util.list<?>
  %c4 = arith.constant 4 : index
  %v = arith.constant 42 : i32
  util.buffer.store %v, %g[%c0 for %c4] : i32 -> !util.buffer{%s}
  %w = util.buffer.load %b[%c0 for %c4] : !util.buffer{%n} -> i32
  return %s, %sz, %w : index, index, i32
}
