// inv(L11) of a device-factored panel on its GPU, so that U12 = inv(L11) A12
// is one product (form_u12's inverse path) instead of cuBLAS's TRSM: its
// chain of small kernels takes 0.3 ms alone and 2.5-3.9 ms beside an update
// for a 1024-wide panel (H100), on the critical path of every step on
// several GPUs, and 0.23 ms of the host's time to issue.
#ifndef TANDEM_GPU_INVERT_LOWER_HPP
#define TANDEM_GPU_INVERT_LOWER_HPP

#include <cstdint>

#include "gpu/gemm.hpp"

namespace tandem::gpu {

// Whether invert_unit_lower takes a width: w halves to a diagonal block of
// at most 64 (w = b * 2^p, b <= 64), each level of the recursion being one
// batched product.
bool unit_lower_inverse_fits(int width);

// Floats of device scratch invert_unit_lower needs for `width`.
int64_t unit_lower_inverse_scratch_floats(int width);

// inv = inverse of the unit lower triangle of l (row-major, width x width,
// leading dimension ldl; its upper part is not read), row-major with leading
// dimension ldi, zero above the diagonal. *norm (memory the device writes,
// e.g. pinned host memory) receives ||inv||_1, NaN if inv holds a NaN, once
// the queue has passed this point. Diagonal blocks are inverted by forward
// substitution, then each level of the recursion joins pairs of inverted
// blocks [A 0; L21 C] into [A 0; -C L21 A C] with two batched products.
// unit_lower_inverse_fits(width) must hold.
void invert_unit_lower(const BlasQueue& queue, int width, const float* l, int64_t ldl,
                       float* inv, int64_t ldi, float* scratch, float* norm);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_INVERT_LOWER_HPP
