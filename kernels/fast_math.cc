#include "kernels/fast_math.h"

namespace sluice {

// One copy per instruction set; the loader's resolver picks the widest the CPU has. The
// library builds with -O3 -fno-trapping-math, where GCC vectorizes these loops, selects
// included (bazel build -s shows the flags; -fopt-info-vec says what vectorized).
#define SL_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

SL_VECTOR_CLONES void ExpInPlace(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = FastExp(v[i]);
}

SL_VECTOR_CLONES void SigmoidInPlace(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = FastSigmoid(v[i]);
}

SL_VECTOR_CLONES void TanhInPlace(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = FastTanh(v[i]);
}

SL_VECTOR_CLONES void ErfArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FastErf(x[i]);
}

#undef SL_VECTOR_CLONES

}  // namespace sluice
