// Row-major matrix products through OpenBLAS for float and double, with a plain loop for
// other types. C = alpha * op(A) * op(B) + beta * C.
#ifndef SLUICE_KERNELS_BLAS_H_
#define SLUICE_KERNELS_BLAS_H_

#include <cblas.h>
#include <omp.h>

#include <cstdint>
#include <type_traits>

namespace sluice {

// OpenBLAS and oneDNN (OpenMP) keep process-wide thread pools; workers size them to their
// intra-op threads.
inline void SetBlasThreads(int threads) {
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
}

template <typename T>
void GemmRowMajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
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

}  // namespace sluice

#endif  // SLUICE_KERNELS_BLAS_H_
