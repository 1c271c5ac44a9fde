// Programs the inline models compile to wrong results (tests/tooling/test_inline_issues.py pins each).

// Two tensors of the same size filled in separate stream regions: each gets its own
// hal_inline.buffer.allocate, but hal_inline's imports declare buffer.allocate `nosideeffects`, so
// the VM's CSE merges the two calls and both results share one buffer: both read 3 4. The corpus
// gives every tensor of data its own never-inlined function.
func.func @alloc_cse() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %x:2 = util.optimization_barrier %a, %b : i32, i32
  %t1 = tensor.from_elements %x#0, %x#1 : tensor<2xi32>
  %c = arith.constant 3 : i32
  %d = arith.constant 4 : i32
  %y:2 = util.optimization_barrier %c, %d : i32, i32
  %t2 = tensor.from_elements %y#0, %y#1 : tensor<2xi32>
  return %t1, %t2 : tensor<2xi32>, tensor<2xi32>
}

// A -0.0 float constant becomes +0: the arith-to-VM conversion emits vm.const.f32.zero for every
// constant whose value isZero(), which -0.0 is. The corpus spells -0 by its bits.
func.func @negative_zero() -> (f32, tensor<2xf32>) {
  %z = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %x:2 = util.optimization_barrier %z, %one : f32, f32
  %t = tensor.from_elements %x#0, %x#1 : tensor<2xf32>
  return %x#0, %t : f32, tensor<2xf32>
}

// arith.fptosi truncates toward zero, but inline-static runs its kernels as VM bytecode, where
// vm.cast.f32.si32 rounds half away from zero (lroundf): 2.7 -2.7 0.5 become 3 -3 1 there and
// 2 -2 0 in inline-dynamic. The corpus's casts use values whose truncation is their rounding.
func.func @fptosi() -> tensor<3xi32> {
  %a = arith.constant 2.7 : f32
  %b = arith.constant -2.7 : f32
  %c = arith.constant 0.5 : f32
  %x:3 = util.optimization_barrier %a, %b, %c : f32, f32, f32
  %t = tensor.from_elements %x#0, %x#1, %x#2 : tensor<3xf32>
  %i = arith.fptosi %t : tensor<3xf32> to tensor<3xi32>
  return %i : tensor<3xi32>
}

// The same merge between a dispatch's inputs and its results: in inline-static the allocation
// holding a and b and the one holding the two results have the same size, so they become one
// buffer and the dot's result slot is a[0]: zeroing the accumulator erases a[0] before it is read,
// and the dot of [-5, 2] and [-3, 4] is 8 instead of 23.
func.func @dot_on_its_input() -> (tensor<f32>, tensor<f32>) {
  %c0 = arith.constant -5.0 : f32
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant -3.0 : f32
  %c3 = arith.constant 4.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %a = tensor.from_elements %bar#0, %bar#1 : tensor<2xf32>
  %b = tensor.from_elements %bar#2, %bar#3 : tensor<2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.dot ins(%a, %b : tensor<2xf32>, tensor<2xf32>) outs(%acc : tensor<f32>) -> tensor<f32>
  %x = tensor.from_elements %bar#3 : tensor<f32>
  return %r, %x : tensor<f32>, tensor<f32>
}
