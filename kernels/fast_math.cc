#include "kernels/fast_math.h"

namespace sluice {
namespace {

// One copy per instruction set, picked for the machine on first use. The library builds with
// -O3 -fno-trapping-math, where GCC vectorizes these loops, selects included (bazel build -s
// shows the flags; -fopt-info-vec says what vectorized). The dispatch is written out rather
// than left to target_clones: clang 14 accepts that attribute but emits only the first
// clone's code (AVX-512) under the plain name, which dies of SIGILL on CPUs without it.
#define SL_ARRAY_CLONES(name, params, loop)                                   \
  __attribute__((target("avx512f"))) void name##Avx512 params { loop }        \
  __attribute__((target("avx2"))) void name##Avx2 params { loop }             \
  void name##Baseline params { loop }                                         \
  using name##Fn = void(*) params;                                            \
  name##Fn Pick##name() {                                                     \
    __builtin_cpu_init();                                                     \
    if (__builtin_cpu_supports("avx512f")) return name##Avx512;               \
    if (__builtin_cpu_supports("avx2")) return name##Avx2;                    \
    return name##Baseline;                                                    \
  }

SL_ARRAY_CLONES(Exp, (float* v, int64_t n), for (int64_t i = 0; i < n; ++i) v[i] = FastExp(v[i]);)
SL_ARRAY_CLONES(Sigmoid, (float* v, int64_t n),
                for (int64_t i = 0; i < n; ++i) v[i] = FastSigmoid(v[i]);)
SL_ARRAY_CLONES(Tanh, (float* v, int64_t n), for (int64_t i = 0; i < n; ++i) v[i] = FastTanh(v[i]);)
SL_ARRAY_CLONES(Erf, (const float* x, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = FastErf(x[i]);)
SL_ARRAY_CLONES(Gelu, (const float* x, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = FastGelu(x[i]);)
SL_ARRAY_CLONES(GeluTanh, (const float* x, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = FastGeluTanh(x[i]);)

// The per-channel loops of the NHWC kernels (pools, normalizations, channel scales).
SL_ARRAY_CLONES(MaxInto, (float* out, const float* x, int64_t n),
                for (int64_t i = 0; i < n; ++i) out[i] = out[i] < x[i] ? x[i] : out[i];)
SL_ARRAY_CLONES(AddInto, (float* out, const float* x, int64_t n), for (int64_t i = 0; i < n; ++i) out[i] += x[i];)
SL_ARRAY_CLONES(Scale, (float* v, float s, int64_t n), for (int64_t i = 0; i < n; ++i) v[i] *= s;)
SL_ARRAY_CLONES(Affine, (const float* x, const float* s, const float* b, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i] + b[i];)
SL_ARRAY_CLONES(AffineRelu, (const float* x, const float* s, const float* b, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * s[i] + b[i], 0.0f);)
SL_ARRAY_CLONES(Mul, (const float* x, const float* s, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i];)
SL_ARRAY_CLONES(Add, (const float* x, const float* s, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] + s[i];)

#undef SL_ARRAY_CLONES

}  // namespace

void ExpInPlace(float* v, int64_t n) {
  static const ExpFn fn = PickExp();
  fn(v, n);
}

void SigmoidInPlace(float* v, int64_t n) {
  static const SigmoidFn fn = PickSigmoid();
  fn(v, n);
}

void TanhInPlace(float* v, int64_t n) {
  static const TanhFn fn = PickTanh();
  fn(v, n);
}

void ErfArray(const float* x, float* y, int64_t n) {
  static const ErfFn fn = PickErf();
  fn(x, y, n);
}

void GeluArray(const float* x, float* y, int64_t n) {
  static const GeluFn fn = PickGelu();
  fn(x, y, n);
}

void GeluTanhArray(const float* x, float* y, int64_t n) {
  static const GeluTanhFn fn = PickGeluTanh();
  fn(x, y, n);
}

void MaxInto(float* out, const float* x, int64_t n) {
  static const MaxIntoFn fn = PickMaxInto();
  fn(out, x, n);
}

void AddInto(float* out, const float* x, int64_t n) {
  static const AddIntoFn fn = PickAddInto();
  fn(out, x, n);
}

void ScaleInPlace(float* v, float s, int64_t n) {
  static const ScaleFn fn = PickScale();
  fn(v, s, n);
}

void AffineArray(const float* x, const float* scale, const float* shift, float* y, int64_t n) {
  static const AffineFn fn = PickAffine();
  fn(x, scale, shift, y, n);
}

void AffineReluArray(const float* x, const float* scale, const float* shift, float* y, int64_t n) {
  static const AffineReluFn fn = PickAffineRelu();
  fn(x, scale, shift, y, n);
}

void MulArrays(const float* x, const float* s, float* y, int64_t n) {
  static const MulFn fn = PickMul();
  fn(x, s, y, n);
}

void AddArrays(const float* x, const float* s, float* y, int64_t n) {
  static const AddFn fn = PickAdd();
  fn(x, s, y, n);
}

}  // namespace sluice
