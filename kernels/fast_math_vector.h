// exp on whole vector registers, for Sluice's own AVX-512 and AVX2 kernels (fast_math.cc's
// array loops, lstm_fast.cc's cells): FastExp's Cody-Waite reduction and polynomial, for
// arguments already in range. Callers clamp first. Under GCC 12, code that inlines
// ExpInRange16 silences -Wmaybe-uninitialized around itself: the warning about the AVX-512
// headers' undefined pass-through operands is reported where they are inlined.
//
//   const __m256 e = ExpInRange8(_mm256_min_ps(hi, _mm256_max_ps(lo, x)));  // NaN kept
#ifndef SLUICE_KERNELS_FAST_MATH_VECTOR_H_
#define SLUICE_KERNELS_FAST_MATH_VECTOR_H_

#include <immintrin.h>

namespace sluice {

// exp(t) on 16 lanes for t in [-87.34, 88.7] (NaN stays NaN): FastExp's Cody-Waite reduction
// and polynomial, scalef for the power of two.
__attribute__((target("avx512f"))) inline __m512 ExpInRange16(__m512 t) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), t);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, k);
}

// The same on 8 lanes (AVX2 with FMA): the power of two built in the exponent bits.
__attribute__((target("avx2,fma"))) inline __m256 ExpInRange8(__m256 t) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), t);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500e-4f), r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^k for k in [-126, 128]: k = 128 (t near 88.7) as 2 * 2^127, so the exponent field stays
  // in range. NaN: k's conversion gives INT_MIN, the result is NaN through p.
  const __m256i ki = _mm256_cvtps_epi32(k);
  const __m256i half = _mm256_srai_epi32(ki, 1);
  const __m256 a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23));
  const __m256 b = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ki, half), _mm256_set1_epi32(127)), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, a), b);
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_FAST_MATH_VECTOR_H_
