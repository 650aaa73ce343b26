// Float element-wise math through oneDNN's vectorized eltwise primitives, for the unary
// kernels whose scalar libm loop is an order of magnitude slower (exp, tanh, sigmoid). Each
// is within a few float ulps of libm (kernels/math_kernels_test.cc); oneDNN's log is not
// (5e-6 relative, and log(1) != 0), so Log stays scalar.
//
//   if (!DnnlEltwise(EltwiseAlgo::kTanh, x, y, n)) { /* scalar loop */ }
//
// Runs on the calling thread only (callers already split work over the compute pool).
// Safe to call from several threads; x and y may be the same buffer.
#ifndef SLUICE_KERNELS_DNNL_ELTWISE_H_
#define SLUICE_KERNELS_DNNL_ELTWISE_H_

#include <cstdint>

namespace sluice {

enum class EltwiseAlgo { kNone, kExp, kTanh, kSigmoid };

// False (and nothing written) when oneDNN cannot do it; the caller then computes it itself.
bool DnnlEltwise(EltwiseAlgo algo, const float* x, float* y, int64_t n);

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_ELTWISE_H_
