#include "kernels/fast_math.h"
#include "kernels/fast_math_vector.h"

#include <immintrin.h>

#include "kernels/cpu_isa.h"

namespace sluice {
namespace {

// One copy per instruction set, picked for the machine on first use. The library builds with
// -O3 -fno-trapping-math, where GCC vectorizes these loops, selects included (bazel build -s
// shows the flags; -fopt-info-vec says what vectorized). The dispatch is written out rather
// than left to target_clones: clang 14 accepts that attribute but emits only the first
// clone's code (AVX-512) under the plain name, which dies of SIGILL on CPUs without it.
#define SL_ARRAY_CLONES(name, params, loop)                                   \
  __attribute__((target("avx512f"))) void name##Avx512 params { loop }        \
  __attribute__((target("avx2,fma"))) void name##Avx2 params { loop }         \
  void name##Baseline params { loop }                                         \
  SL_ISA_PICK(name, params)
// Pick##name(): whichever of name##Avx512, name##Avx2 and name##Baseline this machine runs.
#define SL_ISA_PICK(name, params)                                             \
  using name##Fn = void(*) params;                                            \
  name##Fn Pick##name() {                                                     \
    switch (MaxCpuIsa()) {                                                    \
      case CpuIsa::kAvx512:                                                   \
        return name##Avx512;                                                  \
      case CpuIsa::kAvx2:                                                     \
        return name##Avx2;                                                    \
      default:                                                                \
        return name##Baseline;                                                \
    }                                                                         \
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
SL_ARRAY_CLONES(AddInto, (float* out, const float* x, int64_t n), for (int64_t i = 0; i < n; ++i) out[i] += x[i];)
SL_ARRAY_CLONES(Affine, (const float* x, const float* s, const float* b, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i] + b[i];)
SL_ARRAY_CLONES(AffineRelu, (const float* x, const float* s, const float* b, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * s[i] + b[i], 0.0f);)
SL_ARRAY_CLONES(Mul, (const float* x, const float* s, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i];)
SL_ARRAY_CLONES(Blend, (const float* a, float wa, const float* b, float wb, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = wa * a[i] + wb * b[i];)
SL_ARRAY_CLONES(Add, (const float* x, const float* s, float* y, int64_t n),
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] + s[i];)

// One output pixel of a 2-D NHWC pool: the max (or the sum times `scale`) over `rows` x `cols`
// taps, the first at x, rows row_stride floats apart and columns col_stride. Channels go 16 at a
// time in a GCC vector (one zmm register on AVX-512, two ymm on AVX2), kept in registers across
// the taps (plain arrays got scalarized), then 8 at a time (24 channels: 16 + 8, not 16 + 8
// scalar ones), then one at a time.
typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));
#define SL_POOL_CHANNELS(Vec, width, combine, finish)                                   \
  for (; ch + (width) <= c; ch += (width)) {                                            \
    Vec acc;                                                                            \
    std::memcpy(&acc, x + ch, sizeof(acc));                                             \
    for (int64_t a = 0; a < rows; ++a) {                                                \
      for (int64_t k = a == 0 ? 1 : 0; k < cols; ++k) {                                 \
        Vec v;                                                                          \
        std::memcpy(&v, x + a * row_stride + k * col_stride + ch, sizeof(v));           \
        acc = combine(acc, v);                                                          \
      }                                                                                 \
    }                                                                                   \
    const Vec result = finish(acc);                                                     \
    std::memcpy(out + ch, &result, sizeof(result));                                     \
  }
#define SL_POOL_PIXEL(name, combine, finish)                                                           \
  SL_ARRAY_CLONES(name, (const float* x, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, \
                         int64_t c, float scale, float* out),                                         \
                  int64_t ch = 0;                                                                      \
                  SL_POOL_CHANNELS(Floats16, 16, combine, finish)                                      \
                  SL_POOL_CHANNELS(Floats8, 8, combine, finish)                                        \
                  SL_POOL_CHANNELS(float, 1, combine, finish))
#define SL_MAX(a, b) ((a) < (b) ? (b) : (a))
#define SL_SUM(a, b) ((a) + (b))
#define SL_AS_IS(v) (v)
#define SL_SCALED(v) ((v) * scale)
SL_POOL_PIXEL(MaxPoolPixelLoop, SL_MAX, SL_AS_IS)
SL_POOL_PIXEL(AvgPoolPixelLoop, SL_SUM, SL_SCALED)
#undef SL_MAX
#undef SL_SUM
#undef SL_AS_IS
#undef SL_SCALED
#undef SL_POOL_PIXEL
#undef SL_POOL_CHANNELS

// GCC lowers the 16-float vector's compare-and-select (SL_MAX) under target("avx2") to scalar
// code, one channel at a time (objdump shows vmaxss and cmov), which made every NHWC max pool
// 8-17x slower with SLUICE_MAX_ISA=avx2 than on AVX-512. The AVX2 pixel is written with
// intrinsics instead: two ymm accumulators for 16 channels, then 8, then one at a time.
// _mm256_max_ps(v, acc) keeps acc unless v > acc, as SL_MAX(acc, v) does (NaN in acc stays, a
// NaN tap is skipped).
template <bool kMax>
__attribute__((target("avx2,fma"))) inline __m256 PoolCombine8(__m256 acc, __m256 v) {
  return kMax ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
}

template <bool kMax>
__attribute__((target("avx2,fma"))) void PoolPixelAvx2(const float* x, int64_t rows, int64_t cols,
                                                       int64_t row_stride, int64_t col_stride, int64_t c,
                                                       float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t ch = 0;
  for (; ch + 16 <= c; ch += 16) {
    __m256 a0 = _mm256_loadu_ps(x + ch), a1 = _mm256_loadu_ps(x + ch + 8);
    for (int64_t a = 0; a < rows; ++a) {
      for (int64_t k = a == 0 ? 1 : 0; k < cols; ++k) {
        const float* p = x + a * row_stride + k * col_stride + ch;
        a0 = PoolCombine8<kMax>(a0, _mm256_loadu_ps(p));
        a1 = PoolCombine8<kMax>(a1, _mm256_loadu_ps(p + 8));
      }
    }
    _mm256_storeu_ps(out + ch, kMax ? a0 : _mm256_mul_ps(a0, s));
    _mm256_storeu_ps(out + ch + 8, kMax ? a1 : _mm256_mul_ps(a1, s));
  }
  for (; ch + 8 <= c; ch += 8) {
    __m256 acc = _mm256_loadu_ps(x + ch);
    for (int64_t a = 0; a < rows; ++a) {
      for (int64_t k = a == 0 ? 1 : 0; k < cols; ++k) acc = PoolCombine8<kMax>(acc, _mm256_loadu_ps(x + a * row_stride + k * col_stride + ch));
    }
    _mm256_storeu_ps(out + ch, kMax ? acc : _mm256_mul_ps(acc, s));
  }
  for (; ch < c; ++ch) {
    float acc = x[ch];
    for (int64_t a = 0; a < rows; ++a) {
      for (int64_t k = a == 0 ? 1 : 0; k < cols; ++k) {
        const float v = x[a * row_stride + k * col_stride + ch];
        acc = kMax ? (acc < v ? v : acc) : acc + v;
      }
    }
    out[ch] = kMax ? acc : acc * scale;
  }
}

using PoolPixelFn = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, int64_t, float, float*);
PoolPixelFn PickPoolPixel(bool max) {
  switch (MaxCpuIsa()) {
    case CpuIsa::kAvx512:
      return max ? MaxPoolPixelLoopAvx512 : AvgPoolPixelLoopAvx512;
    case CpuIsa::kAvx2:
      return max ? PoolPixelAvx2<true> : PoolPixelAvx2<false>;
    default:
      return max ? MaxPoolPixelLoopBaseline : AvgPoolPixelLoopBaseline;
  }
}

SL_ARRAY_CLONES(SiluLoop, (float* v, int64_t n), for (int64_t i = 0; i < n; ++i) v[i] *= FastSigmoid(v[i]);)

// GCC 12's AVX-512 headers leave the unused pass-through operand of some unmasked intrinsics
// undefined on purpose, which -Wmaybe-uninitialized reports where they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// x * sigmoid(x): exp(-x) with -x clamped to +-87 (only so that 1 + e stays finite), then
// 1 / (1 + e) from a 14-bit estimate and one Newton step. -x below -87 gives e ~ 1.6e-38, above
// 87 the product of x and ~1.6e-38; NaN stays NaN.
__attribute__((target("avx512f"))) void SiluAvx512Intrinsics(float* v, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  const __m512 lo = _mm512_set1_ps(-87.0f), hi = _mm512_set1_ps(87.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    // max/min return their second operand for NaN: t is finite, and x * ... keeps the NaN.
    const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), x), lo), hi);
    const __m512 d = _mm512_add_ps(one, ExpInRange16(t));  // 1 + exp(-x)
    __m512 inv = _mm512_rcp14_ps(d);
    inv = _mm512_mul_ps(inv, _mm512_fnmadd_ps(d, inv, two));
    _mm512_storeu_ps(v + i, _mm512_mul_ps(x, inv));
  }
  for (; i < n; ++i) v[i] *= FastSigmoid(v[i]);
}

// exp(t) for t <= 0 (NaN stays NaN); below FLT_MIN's logarithm it is 0, as FastExp's.
__attribute__((target("avx512f"))) inline __m512 ExpNonPositive16(__m512 t) {
  const __m512 lo = _mm512_set1_ps(-87.33654475f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(t, lo, _CMP_LT_OQ);
  t = _mm512_max_ps(lo, t);  // NaN is the second operand: kept.
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~underflow), ExpInRange16(t));
}

__attribute__((target("avx512f"))) void SoftmaxRowAvx512(const float* in, float* out, int64_t n) {
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t full = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - full)) - 1u);
  __m512 top = minus_inf;
  for (int64_t i = 0; i < full; i += 16) top = _mm512_max_ps(top, _mm512_loadu_ps(in + i));
  if (tail != 0) top = _mm512_max_ps(top, _mm512_mask_loadu_ps(minus_inf, tail, in + full));
  const __m512 best = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < full; i += 16) {
    const __m512 e = ExpNonPositive16(_mm512_sub_ps(_mm512_loadu_ps(in + i), best));
    _mm512_storeu_ps(out + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (tail != 0) {
    const __m512 e = ExpNonPositive16(_mm512_sub_ps(_mm512_mask_loadu_ps(minus_inf, tail, in + full), best));
    _mm512_mask_storeu_ps(out + full, tail, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(tail, e));
  }
  // NaN anywhere (an input NaN, or +inf - +inf) made its exp NaN and so the sum.
  const __m512 scale = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(out + i), scale));
  if (tail != 0) _mm512_mask_storeu_ps(out + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, out + full), scale));
}

__attribute__((target("avx2,fma"))) void SiluAvx2Intrinsics(float* v, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 lo = _mm256_set1_ps(-87.0f), hi = _mm256_set1_ps(87.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(v + i);
    // max/min return their second operand for NaN: t is finite, and x * ... keeps the NaN.
    const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), x), lo), hi);
    // x / (1 + exp(-x)): AVX2's reciprocal estimate has 12 bits, one Newton step left x = 1e30
    // an ulp off, so it divides (the polynomial's FMAs cost more than the division).
    _mm256_storeu_ps(v + i, _mm256_div_ps(x, _mm256_add_ps(one, ExpInRange8(t))));
  }
  for (; i < n; ++i) v[i] *= FastSigmoid(v[i]);
}

__attribute__((target("avx2,fma"))) inline __m256 ExpNonPositive8(__m256 t) {
  const __m256 lo = _mm256_set1_ps(-87.33654475f);
  const __m256 underflow = _mm256_cmp_ps(t, lo, _CMP_LT_OQ);
  t = _mm256_max_ps(lo, t);  // NaN is the second operand: kept.
  return _mm256_andnot_ps(underflow, ExpInRange8(t));
}

__attribute__((target("avx2,fma"))) inline float HorizontalMax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

__attribute__((target("avx2,fma"))) inline float HorizontalSum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) void SoftmaxRowAvx2(const float* in, float* out, int64_t n) {
  const int64_t full = n / 8 * 8;
  __m256 top = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  // NaN: max returns its second operand, so a NaN input is kept in `top` (and `best`).
  for (int64_t i = 0; i < full; i += 8) top = _mm256_max_ps(_mm256_loadu_ps(in + i), top);
  float best = HorizontalMax8(top);
  for (int64_t i = full; i < n; ++i) best = in[i] > best || in[i] != in[i] ? in[i] : best;
  const __m256 best8 = _mm256_set1_ps(best);
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 e = ExpNonPositive8(_mm256_sub_ps(_mm256_loadu_ps(in + i), best8));
    _mm256_storeu_ps(out + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = HorizontalSum8(sum);
  for (int64_t i = full; i < n; ++i) {
    out[i] = FastExp(in[i] - best);
    total += out[i];
  }
  // NaN anywhere (an input NaN, or +inf - +inf) made its exp NaN and so the sum.
  const float inv = 1.0f / total;
  const __m256 scale = _mm256_set1_ps(inv);
  for (int64_t i = 0; i < full; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(out + i), scale));
  for (int64_t i = full; i < n; ++i) out[i] *= inv;
}

// FastErf on whole registers, lane for lane the scalar's arithmetic: below |z| = 0.5 its odd
// series, above 1 - t P(t) exp(-z^2) with t = 1 / (1 + 0.3275911 |z|) and z's sign, both
// computed and one selected. GCC's vectorized clones of the scalar loop spent about 80
// instructions per 8 lanes on NaN-safe clamps and blends of FastExp's general case; -z^2 is
// never positive, so only its lower clamp is needed (NaN stays NaN through max's second operand).
#define SL_ERF_BODY(V, set1, add, sub, mul, div, fmadd, fnmadd, max_, abs_, exp_, select_small, copysign_)  \
  const V z2 = mul(z, z);                                                                                  \
  V series = fmadd(z2, set1(-0.0008548327f), set1(0.0052239776f));                                        \
  series = fmadd(series, z2, set1(-0.0268661706f));                                                        \
  series = fmadd(series, z2, set1(0.1128379167f));                                                         \
  series = fmadd(series, z2, set1(-0.3761263890f));                                                        \
  series = mul(z, fmadd(series, z2, set1(1.1283791671f)));                                                 \
  const V a = abs_(z);                                                                                     \
  const V t = div(set1(1.0f), fmadd(a, set1(0.3275911f), set1(1.0f)));                                     \
  V poly = fmadd(t, set1(1.061405429f), set1(-1.453152027f));                                              \
  poly = fmadd(poly, t, set1(1.421413741f));                                                               \
  poly = fmadd(poly, t, set1(-0.284496736f));                                                              \
  poly = mul(t, fmadd(poly, t, set1(0.254829592f)));                                                       \
  const V e = exp_(max_(set1(-86.64f), sub(set1(0.0f), z2)));                                              \
  const V far = copysign_(fnmadd(poly, e, set1(1.0f)), z);                                                 \
  const V erf = select_small(a, series, far);

__attribute__((target("avx512f"))) inline __m512 Abs16(__m512 v) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}
// magnitude's bits but the sign bit, which comes from sign.
__attribute__((target("avx512f"))) inline __m512 CopySign16(__m512 magnitude, __m512 sign) {
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(magnitude), _mm512_castps_si512(sign),
                                                       _mm512_set1_epi32(0x7fffffff), 0xe4));
}
// small where a < 0.5, big elsewhere (NaN included).
__attribute__((target("avx512f"))) inline __m512 SelectSmall16(__m512 a, __m512 small, __m512 big) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.5f), _CMP_LT_OQ), big, small);
}

__attribute__((target("avx512f"))) inline __m512 ErfVector16(__m512 z) {
  SL_ERF_BODY(__m512, _mm512_set1_ps, _mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_div_ps, _mm512_fmadd_ps,
              _mm512_fnmadd_ps, _mm512_max_ps, Abs16, ExpInRange16, SelectSmall16, CopySign16)
  return erf;
}

__attribute__((target("avx2,fma"))) inline __m256 Abs8(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
__attribute__((target("avx2,fma"))) inline __m256 CopySign8(__m256 magnitude, __m256 sign) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(sign_bit, magnitude), _mm256_and_ps(sign_bit, sign));
}
__attribute__((target("avx2,fma"))) inline __m256 SelectSmall8(__m256 a, __m256 small, __m256 big) {
  return _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
}

__attribute__((target("avx2,fma"))) inline __m256 ErfVector8(__m256 z) {
  SL_ERF_BODY(__m256, _mm256_set1_ps, _mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_div_ps, _mm256_fmadd_ps,
              _mm256_fnmadd_ps, _mm256_max_ps, Abs8, ExpInRange8, SelectSmall8, CopySign8)
  return erf;
}
#undef SL_ERF_BODY

// y = erf(x) and y = 0.5 x (1 + erf(x / sqrt 2)) over arrays, as FastErf and FastGelu compute
// them. ConvNeXt-T's 18 GELUs (8.6M values a run) at 1 thread: 7.7 -> 5.7 ms on AVX2, 3.9 ->
// 2.5 ms on AVX-512, against the vectorized clones of the scalar loop.
__attribute__((target("avx512f"))) void ErfAvx512Intrinsics(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, ErfVector16(_mm512_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = FastErf(x[i]);
}

__attribute__((target("avx2,fma"))) void ErfAvx2Intrinsics(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, ErfVector8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = FastErf(x[i]);
}

__attribute__((target("avx512f"))) void GeluAvx512Intrinsics(const float* x, float* y, int64_t n) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f), scale = _mm512_set1_ps(0.70710678118654752f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 erf = ErfVector16(_mm512_mul_ps(v, scale));
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, erf)));
  }
  for (; i < n; ++i) y[i] = FastGelu(x[i]);
}

__attribute__((target("avx2,fma"))) void GeluAvx2Intrinsics(const float* x, float* y, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), scale = _mm256_set1_ps(0.70710678118654752f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 erf = ErfVector8(_mm256_mul_ps(v, scale));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf)));
  }
  for (; i < n; ++i) y[i] = FastGelu(x[i]);
}

// The same in three loops GCC vectorizes for the other instruction sets.
void SoftmaxRowGeneric(const float* in, float* out, int64_t n) {
  float best = in[0];
  for (int64_t i = 1; i < n; ++i) best = std::max(best, in[i]);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] - best;
  ExpInPlace(out, n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += out[i];
  const float scale = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) out[i] *= scale;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif


// Rows in eights, each with its own accumulator of a vector register's width, x loaded once
// per vector for all eight: weights stream from eight places at once, which keeps ~45 GB/s
// from L3 where oneDNN's sgemm with one row of A read them at ~33 GB/s (a classifier's last
// Gemm, 1000x1280). AVX2 takes 8-lane accumulators: 16-lane ones are two registers each
// there, and eight rows of them spilled (25% slower than oneDNN's sgemm on RegNet's 1000x400).
#define SL_DOT_ROWS(V, L, R)                                                        \
  for (; r + (R) <= rows; r += (R)) {                                             \
    V acc[R] = {};                                                                \
    const float* wr = w + r * ldw;                                                \
    int64_t i = 0;                                                                \
    for (; i + (L) <= k; i += (L)) {                                              \
      V xv;                                                                       \
      std::memcpy(&xv, x + i, sizeof(xv));                                        \
      for (int j = 0; j < (R); ++j) {                                             \
        V wv;                                                                     \
        std::memcpy(&wv, wr + j * ldw + i, sizeof(wv));                           \
        acc[j] += xv * wv;                                                        \
      }                                                                           \
    }                                                                             \
    for (int j = 0; j < (R); ++j) {                                               \
      float sum = 0;                                                              \
      for (int l = 0; l < (L); ++l) sum += acc[j][l];                             \
      for (int64_t t = i; t < k; ++t) sum += x[t] * wr[j * ldw + t];              \
      out[r + j] = sum;                                                           \
    }                                                                             \
  }
__attribute__((target("avx512f"))) void DotRowsLoopAvx512(const float* x, const float* w, int64_t rows, int64_t k,
                                                           int64_t ldw, float* out) {
  int64_t r = 0;
  SL_DOT_ROWS(Floats16, 16, 8)
  SL_DOT_ROWS(Floats16, 16, 1)
}
__attribute__((target("avx2,fma"))) void DotRowsLoopAvx2(const float* x, const float* w, int64_t rows, int64_t k,
                                                          int64_t ldw, float* out) {
  int64_t r = 0;
  SL_DOT_ROWS(Floats8, 8, 8)
  SL_DOT_ROWS(Floats8, 8, 1)
}
void DotRowsLoopBaseline(const float* x, const float* w, int64_t rows, int64_t k, int64_t ldw, float* out) {
  int64_t r = 0;
  SL_DOT_ROWS(Floats8, 8, 4)
  SL_DOT_ROWS(Floats8, 8, 1)
}
SL_ISA_PICK(DotRowsLoop, (const float* x, const float* w, int64_t rows, int64_t k, int64_t ldw, float* out))
#undef SL_DOT_ROWS

SL_ARRAY_CLONES(Interleave2, (const float* a, const float* b, float* y, int64_t hw),
                for (int64_t p = 0; p < hw; ++p) {
                  y[2 * p] = a[p];
                  y[2 * p + 1] = b[p];
                })
SL_ARRAY_CLONES(Interleave3, (const float* a, const float* b, const float* c, float* y, int64_t hw),
                for (int64_t p = 0; p < hw; ++p) {
                  y[3 * p] = a[p];
                  y[3 * p + 1] = b[p];
                  y[3 * p + 2] = c[p];
                })
SL_ARRAY_CLONES(Interleave4, (const float* a, const float* b, const float* c, const float* d, float* y, int64_t hw),
                for (int64_t p = 0; p < hw; ++p) {
                  y[4 * p] = a[p];
                  y[4 * p + 1] = b[p];
                  y[4 * p + 2] = c[p];
                  y[4 * p + 3] = d[p];
                })

#undef SL_ARRAY_CLONES
#undef SL_ISA_PICK

}  // namespace

void ExpInPlace(float* v, int64_t n) {
  static const ExpFn fn = PickExp();
  fn(v, n);
}

void SigmoidInPlace(float* v, int64_t n) {
  static const SigmoidFn fn = PickSigmoid();
  fn(v, n);
}


void SoftmaxRow(const float* in, float* out, int64_t n) {
  static const auto fn = [] {
    switch (MaxCpuIsa()) {
      case CpuIsa::kAvx512:
        return SoftmaxRowAvx512;
      case CpuIsa::kAvx2:
        return SoftmaxRowAvx2;
      default:
        return SoftmaxRowGeneric;
    }
  }();
  fn(in, out, n);
}

// The hand-written AVX-512 or AVX2 form this machine runs, else the vectorized clones' pick.
template <typename Fn>
Fn PickIntrinsics(Fn avx512, Fn avx2, Fn (*clones)()) {
  switch (MaxCpuIsa()) {
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kAvx2:
      return avx2;
    default:
      return clones();
  }
}

void SiluInPlace(float* v, int64_t n) {
  static const SiluLoopFn fn = PickIntrinsics<SiluLoopFn>(SiluAvx512Intrinsics, SiluAvx2Intrinsics, PickSiluLoop);
  fn(v, n);
}

void NchwToNhwcFewChannels(const float* x, int64_t n, int64_t c, int64_t hw, float* y) {
  static const Interleave2Fn two = PickInterleave2();
  static const Interleave3Fn three = PickInterleave3();
  static const Interleave4Fn four = PickInterleave4();
  for (int64_t i = 0; i < n; ++i, x += c * hw, y += c * hw) {
    switch (c) {
      case 1:
        std::memcpy(y, x, hw * sizeof(float));
        break;
      case 2:
        two(x, x + hw, y, hw);
        break;
      case 3:
        three(x, x + hw, x + 2 * hw, y, hw);
        break;
      default:  // 4; callers pass at most 4.
        four(x, x + hw, x + 2 * hw, x + 3 * hw, y, hw);
        break;
    }
  }
}

void DotRows(const float* x, const float* w, int64_t rows, int64_t k, int64_t ldw, float* out) {
  static const DotRowsLoopFn fn = PickDotRowsLoop();
  fn(x, w, rows, k, ldw, out);
}

void TanhInPlace(float* v, int64_t n) {
  static const TanhFn fn = PickTanh();
  fn(v, n);
}

void ErfArray(const float* x, float* y, int64_t n) {
  static const ErfFn fn = PickIntrinsics<ErfFn>(ErfAvx512Intrinsics, ErfAvx2Intrinsics, PickErf);
  fn(x, y, n);
}

void GeluArray(const float* x, float* y, int64_t n) {
  static const GeluFn fn = PickIntrinsics<GeluFn>(GeluAvx512Intrinsics, GeluAvx2Intrinsics, PickGelu);
  fn(x, y, n);
}

void GeluTanhArray(const float* x, float* y, int64_t n) {
  static const GeluTanhFn fn = PickGeluTanh();
  fn(x, y, n);
}

void AddInto(float* out, const float* x, int64_t n) {
  static const AddIntoFn fn = PickAddInto();
  fn(out, x, n);
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

void BlendArrays(const float* a, float wa, const float* b, float wb, float* y, int64_t n) {
  static const BlendFn fn = PickBlend();
  fn(a, wa, b, wb, y, n);
}

void AddArrays(const float* x, const float* s, float* y, int64_t n) {
  static const AddFn fn = PickAdd();
  fn(x, s, y, n);
}

void PoolPixelNhwc(bool max, const float* x, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                   int64_t c, float scale, float* out) {
  static const PoolPixelFn max_fn = PickPoolPixel(true);
  static const PoolPixelFn avg_fn = PickPoolPixel(false);
  (max ? max_fn : avg_fn)(x, rows, cols, row_stride, col_stride, c, scale, out);
}

}  // namespace sluice
