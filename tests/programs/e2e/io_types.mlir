// Identity functions over the element types, ranks and scalar kinds iree-run-module parses and
// prints: the round trip checks `parse_input` and `format_results` byte for byte (i8 wraps, f16
// rounds, rank 0 prints without a shape, nested ranks with [...], elision after 1024 elements).
func.func @f32s(%x: f32) -> f32 { return %x : f32 }
func.func @f64s(%x: f64) -> f64 { return %x : f64 }
func.func @i32s(%x: i32) -> i32 { return %x : i32 }
func.func @i64s(%x: i64) -> i64 { return %x : i64 }
func.func @tf32(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }
func.func @tf64(%x: tensor<?xf64>) -> tensor<?xf64> { return %x : tensor<?xf64> }
func.func @ti8(%x: tensor<?xi8>) -> tensor<?xi8> { return %x : tensor<?xi8> }
func.func @ti16(%x: tensor<?xi16>) -> tensor<?xi16> { return %x : tensor<?xi16> }
func.func @ti1(%x: tensor<?xi1>) -> tensor<?xi1> { return %x : tensor<?xi1> }
func.func @tf16(%x: tensor<?xf16>) -> tensor<?xf16> { return %x : tensor<?xf16> }
func.func @t3d(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> { return %x : tensor<?x?x?xf32> }
func.func @t0d(%x: tensor<f32>) -> tensor<f32> { return %x : tensor<f32> }
