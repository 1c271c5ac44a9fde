// Identity functions: what comes back is the input's own buffer view (element type and all), so
// `ireeabi run` and iree-run-module print exactly what their --input parsers made of the text.
// Typed per element kind for readability; a passthrough does not assert the element type.
func.func @tf32(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }
func.func @tf64(%x: tensor<?xf64>) -> tensor<?xf64> { return %x : tensor<?xf64> }
func.func @tf16(%x: tensor<?xf16>) -> tensor<?xf16> { return %x : tensor<?xf16> }
func.func @tbf16(%x: tensor<?xbf16>) -> tensor<?xbf16> { return %x : tensor<?xbf16> }
func.func @tf8(%x: tensor<?xf8E4M3FN>) -> tensor<?xf8E4M3FN> { return %x : tensor<?xf8E4M3FN> }
func.func @ti1(%x: tensor<?xi1>) -> tensor<?xi1> { return %x : tensor<?xi1> }
func.func @ti8(%x: tensor<?xi8>) -> tensor<?xi8> { return %x : tensor<?xi8> }
func.func @tsi8(%x: tensor<?xsi8>) -> tensor<?xsi8> { return %x : tensor<?xsi8> }
func.func @tui8(%x: tensor<?xui8>) -> tensor<?xui8> { return %x : tensor<?xui8> }
func.func @tsi16(%x: tensor<?xsi16>) -> tensor<?xsi16> { return %x : tensor<?xsi16> }
func.func @tui16(%x: tensor<?xui16>) -> tensor<?xui16> { return %x : tensor<?xui16> }
func.func @tsi32(%x: tensor<?xsi32>) -> tensor<?xsi32> { return %x : tensor<?xsi32> }
func.func @tui32(%x: tensor<?xui32>) -> tensor<?xui32> { return %x : tensor<?xui32> }
func.func @ti64(%x: tensor<?xi64>) -> tensor<?xi64> { return %x : tensor<?xi64> }
func.func @tsi64(%x: tensor<?xsi64>) -> tensor<?xsi64> { return %x : tensor<?xsi64> }
func.func @tui64(%x: tensor<?xui64>) -> tensor<?xui64> { return %x : tensor<?xui64> }
func.func @tc64(%x: tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>> {
  return %x : tensor<?xcomplex<f32>>
}
func.func @tc128(%x: tensor<?xcomplex<f64>>) -> tensor<?xcomplex<f64>> {
  return %x : tensor<?xcomplex<f64>>
}
func.func @t0d(%x: tensor<i32>) -> tensor<i32> { return %x : tensor<i32> }
func.func @t2d(%x: tensor<?x?xf32>) -> tensor<?x?xf32> { return %x : tensor<?x?xf32> }
func.func @t4d(%x: tensor<?x?x?x?xi32>) -> tensor<?x?x?x?xi32> { return %x : tensor<?x?x?x?xi32> }
func.func @f32s(%x: f32) -> f32 { return %x : f32 }
func.func @f64s(%x: f64) -> f64 { return %x : f64 }
func.func @i32s(%x: i32) -> i32 { return %x : i32 }
func.func @i64s(%x: i64) -> i64 { return %x : i64 }
// Arguments of every kind, results in another order.
func.func @mixed(%a: i32, %b: f32, %c: tensor<?xf32>, %d: i64, %e: f64)
    -> (f64, tensor<?xf32>, i64, f32, i32) {
  return %e, %c, %d, %b, %a : f64, tensor<?xf32>, i64, f32, i32
}
// Several tensors in a row: `@f.npy` / `+f.npy` / `*f.npy` streams.
func.func @pair(%a: tensor<?xf32>, %b: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  return %a, %b : tensor<?xf32>, tensor<?x?xf32>
}
func.func @triple(%a: tensor<?xf32>, %b: tensor<?x?xf32>, %c: tensor<i1>)
    -> (tensor<?xf32>, tensor<?x?xf32>, tensor<i1>) {
  return %a, %b, %c : tensor<?xf32>, tensor<?x?xf32>, tensor<i1>
}
