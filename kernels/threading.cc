#include "kernels/threading.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

namespace sluice {

void SetBlasThreads(int threads) { omp_set_num_threads(threads); }

void UseOpenBlasThreads(int threads) {
  if (threads > 0 && openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
}

void UseOmpThreads(int threads) {
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

void OmpParallelFor(int64_t n, int64_t min_block, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>(std::max(threads, 1), std::max<int64_t>(1, n / std::max<int64_t>(1, min_block)));
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  const int64_t per = (n + blocks - 1) / blocks;
#pragma omp parallel num_threads(static_cast<int>(blocks))
  {
    const int64_t begin = omp_get_thread_num() * per, end = std::min(n, begin + per);
    if (begin < end) fn(begin, end);
  }
}

}  // namespace sluice
