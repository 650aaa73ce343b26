// exp, sigmoid and tanh for float in plain arithmetic that compilers vectorize (no calls, no
// branches: selects), to within a few ulp of the C library's; and loops over arrays of them,
// built for AVX-512, AVX2 and the baseline and picked for the machine on first use. They run
// many times faster than loops calling std::exp or std::tanh.
//
//   SigmoidInPlace(values, n);
//   y = FastTanh(x);   // One value (inlined; vectorized where the caller's loop is).
//
// Special values as the C library: exp(-inf) = 0, exp(inf) = inf, NaN stays NaN. Results
// below FLT_MIN (subnormal) are 0, and those below 2.4e-38 lose precision.
#ifndef SLUICE_KERNELS_FAST_MATH_H_
#define SLUICE_KERNELS_FAST_MATH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace sluice {

inline float FastExp(float x) {
  const bool nan = x != x;
  const float xc = std::min(std::max(nan ? 0.0f : x, -86.64f), 88.72283905f);
  // x = n ln2 + r with |r| <= ln2 / 2; ln2 in two parts (Cody and Waite) keeps r exact.
  const float n = std::floor(xc * 1.44269504088896341f + 0.5f);  // In [-125, 128].
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // exp(r) on [-ln2/2, ln2/2]: a degree-7 polynomial (Cephes' expf coefficients).
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^(n-1) in the exponent bits, times 2: 2^128 itself is not a float.
  const int32_t bits = (static_cast<int32_t>(n) + 126) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  float y = p * scale * 2.0f;
  y = x > 88.72283905f ? std::numeric_limits<float>::infinity() : y;  // Beyond FLT_MAX.
  y = x < -87.33654475f ? 0.0f : y;                                   // Below FLT_MIN.
  return nan ? x : y;
}

inline float FastSigmoid(float x) { return 1.0f / (1.0f + FastExp(-x)); }

inline float FastTanh(float x) {
  const float a = std::fabs(x);
  // Near 0, its series (the next term is below 2e-9 of the value for |x| < 0.125); else
  // (1 - e) / (1 + e) with e = exp(-2|x|), which has no cancellation there.
  const float x2 = x * x;
  const float series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
  const float e = FastExp(-2.0f * a);
  const float far = std::copysign((1.0f - e) / (1.0f + e), x);
  return a < 0.125f ? series : far;
}

// erf: below |x| = 0.5 its Taylor series (relative error under 4e-7); above, Abramowitz and
// Stegun's 7.1.26 (absolute error under 1.5e-7 exactly, 4e-7 in float arithmetic).
inline float FastErf(float x) {
  const float a = std::fabs(x);
  const float x2 = x * x;
  const float series =
      x * (1.1283791671f +
           x2 * (-0.3761263890f + x2 * (0.1128379167f + x2 * (-0.0268661706f + x2 * (0.0052239776f + x2 * -0.0008548327f)))));
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float far = std::copysign(1.0f - poly * FastExp(-x2), x);
  return a < 0.5f ? series : far;
}

// GELU, x * Phi(x): 0.5 x (1 + erf(x / sqrt 2)), and its tanh fit
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
inline float FastGelu(float x) { return 0.5f * x * (1.0f + FastErf(x * 0.70710678118654752f)); }
inline float FastGeluTanh(float x) {
  return 0.5f * x * (1.0f + FastTanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

// v[i] = f(v[i]) for i < n.
void ExpInPlace(float* v, int64_t n);
void SigmoidInPlace(float* v, int64_t n);
// v[i] * sigmoid(v[i]) (SiLU, Swish with beta 1), relative error under 1e-6; on AVX-512 with
// a reciprocal estimate and one Newton step instead of a division (about 2.5x oneDNN 2.6's
// swish post-op, which took longer than the convolutions it followed in EfficientNet).
void SiluInPlace(float* v, int64_t n);
void TanhInPlace(float* v, int64_t n);
// y[i] = erf(x[i]) for i < n; x and y may be the same.
void ErfArray(const float* x, float* y, int64_t n);
// y[i] = FastGelu(x[i]) or FastGeluTanh(x[i]) for i < n; x and y may be the same.
void GeluArray(const float* x, float* y, int64_t n);
void GeluTanhArray(const float* x, float* y, int64_t n);

// Element-wise loops of the NHWC kernels, one call per pixel's channels. out and x (or y and
// x) may be the same array; other arguments do not overlap y.
void AddInto(float* out, const float* x, int64_t n);  // out[i] += x[i]
// out[0..n) = softmax of in[0..n) (n >= 1): exp(in - max) / sum. A NaN or +inf anywhere makes
// the row NaN; -inf gives 0. On AVX-512 one pass for the max, one for exp and the (float) sum,
// one to scale (attention's rows of 197: ~3x the three-loop form).
void SoftmaxRow(const float* in, float* out, int64_t n);
// NCHW images of c <= 4 channels (a network's RGB input) to NHWC: n images of hw pixels. The
// channels of each pixel interleave in vector permutes (224x224x3: ~9 us, oneDNN's reorder 40).
void NchwToNhwcFewChannels(const float* x, int64_t n, int64_t c, int64_t hw, float* y);
// out[r] = the dot product of x[0..k) with row r of w (rows `ldw` floats apart), r < rows: a
// row vector times a transposed matrix, 8 rows at a time against each 16 floats of x.
void DotRows(const float* x, const float* w, int64_t rows, int64_t k, int64_t ldw, float* out);
void AffineArray(const float* x, const float* scale, const float* shift, float* y, int64_t n);  // x*scale+shift
void AffineReluArray(const float* x, const float* scale, const float* shift, float* y, int64_t n);  // max(0, ..)
void MulArrays(const float* x, const float* s, float* y, int64_t n);  // y[i] = x[i] * s[i]
void AddArrays(const float* x, const float* s, float* y, int64_t n);  // y[i] = x[i] + s[i]
void BlendArrays(const float* a, float wa, const float* b, float wb, float* y, int64_t n);  // wa a + wb b

// One output pixel of a 2-D pool over N,H,W,C values: out[ch] = max over the rows x cols taps
// (rows, cols >= 1; the first tap at x, the others row_stride and col_stride floats on), or,
// without max, their sum times scale. out must not overlap x.
void PoolPixelNhwc(bool max, const float* x, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                   int64_t c, float scale, float* out);

}  // namespace sluice

#endif  // SLUICE_KERNELS_FAST_MATH_H_
