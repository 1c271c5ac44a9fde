// A program importing a native module of one's own (`mymod`, tests/modules/test_native_modules.py): the
// module reads buffer views and buffers through ireeabi.modules.hal.module_api and returns a new view.
util.func private @mymod.scale(%view: !hal.buffer_view, %factor: f32) -> !hal.buffer_view
util.func private @mymod.byte_sum(%buffer: !hal.buffer) -> i64

func.func @scale(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %v = hal.tensor.export %x : tensor<2x3xf32> -> !hal.buffer_view
  %k = arith.constant 2.5 : f32
  %r = util.call @mymod.scale(%v, %k) : (!hal.buffer_view, f32) -> !hal.buffer_view
  %t = hal.tensor.import %r : !hal.buffer_view -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

func.func @byte_sum(%x: tensor<5xi8>) -> i64 {
  %v = hal.tensor.export %x : tensor<5xi8> -> !hal.buffer_view
  %b = hal.buffer_view.buffer<%v : !hal.buffer_view> : !hal.buffer
  %s = util.call @mymod.byte_sum(%b) : (!hal.buffer) -> i64
  return %s : i64
}
