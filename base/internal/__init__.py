"""ireeabi.base.internal: runtime/src/iree/base/internal, the parts the model needs.

- `cpu`: host CPU data as IREE exposes it to kernels (internal/cpu.c);
- `fpu_state`: the floating-point state a dispatch runs in, denormals flushed to zero
  (internal/fpu_state.c);
- `math`: IREE's conversions between f32 and its narrow float types (internal/math.h).
"""

__all__ = ["cpu", "fpu_state", "math"]
