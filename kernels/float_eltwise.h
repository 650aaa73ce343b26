// Float exp, tanh and sigmoid over arrays, for the unary kernels whose scalar libm loop is an
// order of magnitude slower: fast_math.h's vectorized loops (within 4 ulps of libm, on the
// instruction set MaxCpuIsa picks). They replaced oneDNN 2.6's eltwise primitives, which cost
// about a microsecond per call (memory objects, execute, stream wait: a 240-node model with 120
// Tanhs of 64 floats ran in 0.140 ms, 0.054 without) and were slower on long arrays too (50
// Tanh/Sigmoid over 1M floats, 1 thread: 35.5 ms vs 23.0 on AVX-512, 90 vs 40 on AVX2).
//
//   if (!FloatEltwise(EltwiseAlgo::kTanh, x, y, n)) { /* scalar loop */ }
//
// Runs on the calling thread only (callers already split work over the compute pool). Safe to
// call from several threads; x and y may be the same buffer. NaN stays NaN, +-inf map as libm.
#ifndef SLUICE_KERNELS_FLOAT_ELTWISE_H_
#define SLUICE_KERNELS_FLOAT_ELTWISE_H_

#include <cstdint>

namespace sluice {

enum class EltwiseAlgo { kNone, kExp, kTanh, kSigmoid };

// y = algo(x); false (nothing written) for kNone.
bool FloatEltwise(EltwiseAlgo algo, const float* x, float* y, int64_t n);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FLOAT_ELTWISE_H_
