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

#include <cstdint>
#include <type_traits>

#include "kernels/threading.h"

namespace sluice {

// `threads`: the intra-op thread count (OpenMP team size) for float; double uses OpenBLAS's.
template <typename T>
void GemmRowMajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
                  int threads) {
  if constexpr (std::is_same_v<T, float>) {
    UseOmpThreads(threads);
    if (dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
        dnnl_success) {
      return;
    }
    // oneDNN refuses only arguments that are out of range for it; OpenBLAS takes the rest.
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
