// Check-style corpus: control flow (scf.if, scf.while, scf.for).
// Conventions: tests/support/check_corpus.py. Expected values: tests/support/check_reference.py (numpy).
util.func private @check.expect_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view)
util.func private @check.expect_almost_eq(%lhs: !hal.buffer_view, %rhs: !hal.buffer_view, %atol: f32, %rtol: f32)
util.func private @check.expect_true(%operand: i32)
util.func private @check.expect_false(%operand: i32)
util.func private @check.expect_all_true(%operand: !hal.buffer_view)

util.func private @if_then_f32_v() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 3.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %v = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %v : tensor<4xf32>
}

util.func private @if_then_f32_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 7 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

util.func private @if_then_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3.0 : f32
  %c1 = arith.constant -4.0 : f32
  %c2 = arith.constant 0.5 : f32
  %c3 = arith.constant 6.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// scf.if on a host i32 (7 > 5): the then branch doubles the tensor.
func.func @if_then_f32() {
  %v = util.call @if_then_f32_v() : () -> (tensor<4xf32>)
  %n = util.call @if_then_f32_scalars() : () -> (i32)
  %e = util.call @if_then_f32_e() : () -> (tensor<4xf32>)
  %five = arith.constant 5 : i32
  %c = arith.cmpi sgt, %n, %five : i32
  %r = scf.if %c -> (tensor<4xf32>) {
    %s = arith.addf %v, %v : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    %s = arith.mulf %v, %v : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  %taken = arith.extui %c : i1 to i32
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_true(%taken) : (i32) -> ()
  return
}

util.func private @if_else_f32_v() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 3.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %v = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %v : tensor<4xf32>
}

util.func private @if_else_f32_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 3 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

util.func private @if_else_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 2.25 : f32
  %c1 = arith.constant 4.0 : f32
  %c2 = arith.constant 0.0625 : f32
  %c3 = arith.constant 9.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// scf.if on a host i32 (3 > 5): the else branch squares the tensor.
func.func @if_else_f32() {
  %v = util.call @if_else_f32_v() : () -> (tensor<4xf32>)
  %n = util.call @if_else_f32_scalars() : () -> (i32)
  %e = util.call @if_else_f32_e() : () -> (tensor<4xf32>)
  %five = arith.constant 5 : i32
  %c = arith.cmpi sgt, %n, %five : i32
  %r = scf.if %c -> (tensor<4xf32>) {
    %s = arith.addf %v, %v : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  } else {
    %s = arith.mulf %v, %v : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  %taken = arith.extui %c : i1 to i32
  %r_v = hal.tensor.export %r : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%r_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  util.call @check.expect_false(%taken) : (i32) -> ()
  return
}

util.func private @while_doubling_t0() -> (tensor<2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -0.5 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  %t0 = tensor.from_elements %bar#0, %bar#1 : tensor<2xf32>
  util.return %t0 : tensor<2xf32>
}

util.func private @while_doubling_scalars() -> (i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %bar = util.optimization_barrier %c0 : i32
  util.return %bar : i32
}

util.func private @while_doubling_e() -> (tensor<2xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 192.0 : f32
  %c1 = arith.constant -64.0 : f32
  %bar:2 = util.optimization_barrier %c0, %c1 : f32, f32
  %e = tensor.from_elements %bar#0, %bar#1 : tensor<2xf32>
  util.return %e : tensor<2xf32>
}

// scf.while doubling a host counter from 1 until it reaches 100 (128) and a tensor with it.
func.func @while_doubling() {
  %t0 = util.call @while_doubling_t0() : () -> (tensor<2xf32>)
  %one = util.call @while_doubling_scalars() : () -> (i32)
  %e = util.call @while_doubling_e() : () -> (tensor<2xf32>)
  %lim = arith.constant 100 : i32
  %two = arith.constant 2 : i32
  %w:2 = scf.while (%i = %one, %t = %t0) : (i32, tensor<2xf32>) -> (i32, tensor<2xf32>) {
    %go = arith.cmpi slt, %i, %lim : i32
    scf.condition(%go) %i, %t : i32, tensor<2xf32>
  } do {
  ^bb0(%i2: i32, %t2: tensor<2xf32>):
    %ni = arith.muli %i2, %two : i32
    %nt = arith.addf %t2, %t2 : tensor<2xf32>
    scf.yield %ni, %nt : i32, tensor<2xf32>
  }
  %want = arith.constant 128 : i32
  %is = arith.cmpi eq, %w#0, %want : i32
  %reached = arith.extui %is : i1 to i32
  %tt_v = hal.tensor.export %w#1 : tensor<2xf32> -> !hal.buffer_view
  util.call @check.expect_true(%reached) : (i32) -> ()
  %e_v = hal.tensor.export %e : tensor<2xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%tt_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @for_accumulate_f32_v() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 3.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %v = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %v : tensor<4xf32>
}

util.func private @for_accumulate_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 15.0 : f32
  %c1 = arith.constant -20.0 : f32
  %c2 = arith.constant 2.5 : f32
  %c3 = arith.constant 30.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// scf.for k in 0..4 with a tensor iter_arg: acc += v * k, a dispatch per iteration.
func.func @for_accumulate_f32() {
  %v = util.call @for_accumulate_f32_v() : () -> (tensor<4xf32>)
  %e = util.call @for_accumulate_f32_e() : () -> (tensor<4xf32>)
  %z_c = arith.constant 0.0 : f32
  %z_e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%z_c : f32) outs(%z_e : tensor<4xf32>) -> tensor<4xf32>
  %lo = arith.constant 0 : index
  %hi = arith.constant 5 : index
  %st = arith.constant 1 : index
  %acc = scf.for %k = %lo to %hi step %st iter_args(%a = %z) -> (tensor<4xf32>) {
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %kt_e = tensor.empty() : tensor<4xf32>
    %kt = linalg.fill ins(%kf : f32) outs(%kt_e : tensor<4xf32>) -> tensor<4xf32>
    %m = arith.mulf %v, %kt : tensor<4xf32>
    %n = arith.addf %a, %m : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %acc_v = hal.tensor.export %acc : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%acc_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @while_tensor_cond_i32_t0() -> (tensor<2xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1 : i32
  %c1 = arith.constant 2 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  %t0 = tensor.from_elements %bar#0, %bar#1 : tensor<2xi32>
  util.return %t0 : tensor<2xi32>
}

util.func private @while_tensor_cond_i32_e() -> (tensor<2xi32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 63 : i32
  %c1 = arith.constant 95 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  %e = tensor.from_elements %bar#0, %bar#1 : tensor<2xi32>
  util.return %e : tensor<2xi32>
}

// scf.while whose condition reads a reduction back on the host: t = 2t + 1 while sum(t) < 100.
func.func @while_tensor_cond_i32() {
  %t0 = util.call @while_tensor_cond_i32_t0() : () -> (tensor<2xi32>)
  %e = util.call @while_tensor_cond_i32_e() : () -> (tensor<2xi32>)
  %ones_c = arith.constant 1 : i32
  %ones_e = tensor.empty() : tensor<2xi32>
  %ones = linalg.fill ins(%ones_c : i32) outs(%ones_e : tensor<2xi32>) -> tensor<2xi32>
  %hundred = arith.constant 100 : i32
  %zero = arith.constant 0 : i32
  %w = scf.while (%t = %t0) : (tensor<2xi32>) -> tensor<2xi32> {
    %acc_e = tensor.empty() : tensor<i32>
    %acc = linalg.fill ins(%zero : i32) outs(%acc_e : tensor<i32>) -> tensor<i32>
    %sum = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%t : tensor<2xi32>) outs(%acc : tensor<i32>) {
    ^bb0(%a: i32, %b: i32):
      %s = arith.addi %a, %b : i32
      linalg.yield %s : i32
    } -> tensor<i32>
    %s = tensor.extract %sum[] : tensor<i32>
    %go = arith.cmpi slt, %s, %hundred : i32
    scf.condition(%go) %t : tensor<2xi32>
  } do {
  ^bb0(%u: tensor<2xi32>):
    %d = arith.addi %u, %u : tensor<2xi32>
    %n = arith.addi %d, %ones : tensor<2xi32>
    scf.yield %n : tensor<2xi32>
  }
  %w_v = hal.tensor.export %w : tensor<2xi32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<2xi32> -> !hal.buffer_view
  util.call @check.expect_eq(%w_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @for_if_parity_f32_v() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 1.5 : f32
  %c1 = arith.constant -2.0 : f32
  %c2 = arith.constant 0.25 : f32
  %c3 = arith.constant 3.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %v = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %v : tensor<4xf32>
}

util.func private @for_if_parity_f32_e() -> (tensor<4xf32>) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 4.5 : f32
  %c1 = arith.constant -6.0 : f32
  %c2 = arith.constant 0.75 : f32
  %c3 = arith.constant 9.0 : f32
  %bar:4 = util.optimization_barrier %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  %e = tensor.from_elements %bar#0, %bar#1, %bar#2, %bar#3 : tensor<4xf32>
  util.return %e : tensor<4xf32>
}

// scf.if nested in scf.for on the induction variable's parity: even k adds v * k, odd k subtracts v.
func.func @for_if_parity_f32() {
  %v = util.call @for_if_parity_f32_v() : () -> (tensor<4xf32>)
  %e = util.call @for_if_parity_f32_e() : () -> (tensor<4xf32>)
  %z_c = arith.constant 0.0 : f32
  %z_e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%z_c : f32) outs(%z_e : tensor<4xf32>) -> tensor<4xf32>
  %lo = arith.constant 0 : index
  %hi = arith.constant 6 : index
  %st = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %acc = scf.for %k = %lo to %hi step %st iter_args(%a = %z) -> (tensor<4xf32>) {
    %par = arith.remui %k, %c2 : index
    %even = arith.cmpi eq, %par, %lo : index
    %n = scf.if %even -> (tensor<4xf32>) {
      %ki = arith.index_cast %k : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      %kt_e = tensor.empty() : tensor<4xf32>
      %kt = linalg.fill ins(%kf : f32) outs(%kt_e : tensor<4xf32>) -> tensor<4xf32>
      %m = arith.mulf %v, %kt : tensor<4xf32>
      %s = arith.addf %a, %m : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    } else {
      %s = arith.subf %a, %v : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    }
    scf.yield %n : tensor<4xf32>
  }
  %acc_v = hal.tensor.export %acc : tensor<4xf32> -> !hal.buffer_view
  %e_v = hal.tensor.export %e : tensor<4xf32> -> !hal.buffer_view
  util.call @check.expect_eq(%acc_v, %e_v) : (!hal.buffer_view, !hal.buffer_view) -> ()
  return
}

util.func private @if_scalar_max_i32_scalars() -> (i32, i32) attributes {inlining_policy = #util.inline.never} {
  %c0 = arith.constant 9 : i32
  %c1 = arith.constant 4 : i32
  %bar:2 = util.optimization_barrier %c0, %c1 : i32, i32
  util.return %bar#0, %bar#1 : i32, i32
}

// scf.if yielding a host scalar (the larger of 9 and 4), checked with expect_true and expect_false.
func.func @if_scalar_max_i32() {
  %a, %b = util.call @if_scalar_max_i32_scalars() : () -> (i32, i32)
  %gt = arith.cmpi sgt, %a, %b : i32
  %m = scf.if %gt -> (i32) {
    scf.yield %a : i32
  } else {
    scf.yield %b : i32
  }
  %nine = arith.constant 9 : i32
  %four = arith.constant 4 : i32
  %is9 = arith.cmpi eq, %m, %nine : i32
  %is4 = arith.cmpi eq, %m, %four : i32
  %is_nine = arith.extui %is9 : i1 to i32
  %is_four = arith.extui %is4 : i1 to i32
  util.call @check.expect_true(%is_nine) : (i32) -> ()
  util.call @check.expect_false(%is_four) : (i32) -> ()
  return
}
