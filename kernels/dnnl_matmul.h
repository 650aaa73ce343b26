// Products with a constant right-hand side through oneDNN's matmul primitive: B is reordered
// once into the layout oneDNN's kernels read directly, where a plain sgemm packs it again on
// every call (which dominated the small per-step products of an RNN). Prepared products are
// cached per shape and B; safe to call from several threads.
//
//   DnnlConstMatmul matmul;   // one per kernel
//   auto prepared = matmul.Prepare(m, n, k, r_tensor, r_rows, threads);   // null: use a GEMM
//   DnnlConstMatmul::Call call(*prepared);    // per thread, reused across calls
//   if (!call.Run(a, c)) { /* a GEMM */ }      // c[m, n] = a[m, k] * b[n, k]^T
#ifndef SLUICE_KERNELS_DNNL_MATMUL_H_
#define SLUICE_KERNELS_DNNL_MATMUL_H_

#include <cstdint>
#include <memory>

#include "framework/tensor.h"

namespace sluice {

class DnnlConstMatmul {
 public:
  struct Prepared;

  // Runs one prepared product many times, on the thread that made it.
  class Call {
   public:
    explicit Call(const Prepared& prepared);
    ~Call();
    // c[m, n] = a[m, k] * b[n, k]^T, both row-major and dense. False when oneDNN failed (c
    // may be partly written; the caller computes it another way).
    bool Run(const float* a, float* c);

   private:
    struct State;
    std::unique_ptr<State> state_;
  };

  DnnlConstMatmul();
  ~DnnlConstMatmul();
  // The product of an [m, k] matrix with b^T, b: the [n, k] row-major matrix at `b` inside
  // `owner`'s buffer (which must not change while the buffer lives, as weights). Null when
  // oneDNN does not take it. `threads`: the OpenMP team the product may use, set for this
  // thread's runs that follow.
  std::shared_ptr<const Prepared> Prepare(int64_t m, int64_t n, int64_t k, const Tensor& owner, const float* b,
                                          int threads) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_MATMUL_H_
