// Row-major matrix products: float through oneDNN's sgemm, double through OpenBLAS, a plain
// loop for other types. C = alpha * op(A) * op(B) + beta * C.
//
//   GemmRowMajor<float>(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n, ctx->intra_op_threads());
//
// Float goes to oneDNN so that products and convolutions share one pool of threads (the
// calling thread's OpenMP team): OpenBLAS's own threads spin for ~0.1 s after each call,
// which with two cores took one away from every convolution that followed.
#ifndef SLUICE_KERNELS_BLAS_H_
#define SLUICE_KERNELS_BLAS_H_

#include <cblas.h>
#include <omp.h>

#include "oneapi/dnnl/dnnl.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "framework/cancellation.h"
#include "kernels/fast_math.h"
#include "kernels/threading.h"

namespace sluice {

// One row times a transposed matrix of at least this many floats (1 MB: a classifier's last
// layer, 1000 x 400..2048) goes to DotRows: in a model such weights come from L3, where
// oneDNN's sgemm read them 25-40% slower, and it ran RegNet-X's 1000 x 400 on one thread of
// two (70 us on AVX2, against 37-45 us for DotRows' rows split between the two); smaller ones
// stay in cache between runs, where oneDNN is as fast or faster.
inline constexpr int64_t kRowVectorGemvMinWeights = int64_t{1} << 18;
// With two or more threads, from half that (512 KB): split between the cores, such weights take
// half the time to stream, where oneDNN's sgemm kept them on one thread below its floor
// (ThreadsForWork). openWakeWord's wake-word head (1536 x 128 weights, 768 KB) at 2 threads:
// 23 -> 19-20 us a run, against ONNX Runtime's 21; at 1 thread both paths take the same time.
inline constexpr int64_t kRowVectorGemvMinWeightsOnTeam = int64_t{1} << 17;

// c[0..n) = alpha * (x . row j of b) + beta * c[j], the rows split among `threads`.
inline void RowVectorTimesTransposed(int64_t n, int64_t k, float alpha, const float* x, const float* b, int64_t ldb,
                                     float beta, float* c, int threads) {
  OmpParallelFor(n, 64, threads, [=](int64_t begin, int64_t end) {
    constexpr int64_t kChunk = 256;
    float dots[kChunk];
    for (int64_t j0 = begin; j0 < end; j0 += kChunk) {
      const int64_t rows = std::min(kChunk, end - j0);
      DotRows(x, b + j0 * ldb, rows, k, ldb, dots);
      for (int64_t j = 0; j < rows; ++j) {
        c[j0 + j] = beta == 0.0f ? alpha * dots[j] : alpha * dots[j] + beta * c[j0 + j];  // BLAS: beta 0 reads no c
      }
    }
  });
}

// Float products of at least this many multiply-adds run on whichever of oneDNN's sgemm and
// OpenBLAS's ran them faster on this machine (SgemmOnOpenBlas); smaller ones on oneDNN's.
inline constexpr double kSgemmLibraryChoiceMinMultiplyAdds = 4e6;
// Larger ones stay on oneDNN's too: measuring runs a product six times, and past this many
// multiply-adds (about 10 ms at one thread on an AVX-512 core) that would eat the budget.
inline constexpr double kSgemmLibraryChoiceMaxMultiplyAdds = 1e9;

// Whether C = alpha * op(A) * op(B) + beta * C on `threads` threads should run on OpenBLAS
// (OpenBlasSgemmOnTeam) rather than oneDNN's sgemm: as measured the first time the process
// meets the problem (its shape, strides, threads and the operands' places within 64 bytes),
// once per machine with SLUICE_TUNING_CACHE; false outside kSgemmLibraryChoice*MultiplyAdds,
// with measuring off or its budget spent. Measuring writes a copy of C only. oneDNN 2.6's AVX2
// sgemm is 1.6x slower than OpenBLAS on some aligned right-hand sides (ViT's 768x3072), and
// faster on most products; the table could not say which.
bool SgemmOnOpenBlas(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, const float* c, int64_t ldc, int threads);

class TuningCache;
// SgemmOnOpenBlas against `tuning`, remembering the answer in the process's table only when
// `remember` (tests measure afresh).
bool SgemmOnOpenBlasMeasured(TuningCache& tuning, bool remember, bool trans_a, bool trans_b, int64_t m, int64_t n,
                             int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                             float beta, const float* c, int64_t ldc, int threads);

// OpenBLAS's sgemm on the calling thread's OpenMP team (oneDNN's threads): C's columns in blocks
// of 16 split among `threads`, each block range one single-threaded OpenBLAS call, so no
// second pool of threads spins beside the team.
void OpenBlasSgemmOnTeam(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads);

// `threads`: the intra-op thread count (OpenMP team size for float, OpenBLAS's pool for double).
template <typename T>
void GemmRowMajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
                  int threads) {
  if constexpr (std::is_same_v<T, float>) {
    if (m == 1 && trans_b && (!trans_a || lda == 1) &&
        n * k >= (threads > 1 ? kRowVectorGemvMinWeightsOnTeam : kRowVectorGemvMinWeights)) {
      RowVectorTimesTransposed(n, k, alpha, a, b, ldb, beta, c, threads);
      return;
    }
    const int team = ThreadsForWork(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k), threads);
    if (SgemmOnOpenBlas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, team)) {
      OpenBlasSgemmOnTeam(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, team);
      return;
    }
    UseOmpThreads(team);
    if (dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
        dnnl_success) {
      return;
    }
    // oneDNN refuses only arguments that are out of range for it; OpenBLAS takes the rest.
    UseOpenBlasThreads(threads);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    UseOpenBlasThreads(threads);
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      T* crow = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) crow[j] = beta == T(0) ? T(0) : T(beta * crow[j]);
      for (int64_t p = 0; p < k; ++p) {
        const T av = T(alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]));
        for (int64_t j = 0; j < n; ++j) crow[j] += av * (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      }
    }
  }
}

// Multiply-adds between two cancellation checks of a large product (a few tenths of a second).
inline constexpr int64_t kGemmSliceMultiplyAdds = int64_t{1} << 32;

// GemmRowMajor in slices of rows of C, checking `cancellation` (may be null) between slices,
// so a deadline ends a product of minutes promptly. Returns false when it stopped early (C is
// then partly computed; the caller fails with the step's status).
template <typename T>
bool CancellableGemmRowMajor(const CancellationManager* cancellation, bool trans_a, bool trans_b,
                             int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                             const T* b, int64_t ldb, T beta, T* c, int64_t ldc, int threads) {
  // n * k is at most the element count of B, so it cannot overflow.
  const int64_t rows = std::max<int64_t>(1, kGemmSliceMultiplyAdds / std::max<int64_t>(1, n * k));
  for (int64_t i = 0; i < m;) {
    if (i > 0 && cancellation != nullptr && cancellation->IsCancelled()) return false;
    const int64_t count = std::min(rows, m - i);
    GemmRowMajor<T>(trans_a, trans_b, count, n, k, alpha, trans_a ? a + i : a + i * lda, lda, b, ldb, beta,
                    c + i * ldc, ldc, threads);
    i += count;
  }
  return true;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_BLAS_H_
