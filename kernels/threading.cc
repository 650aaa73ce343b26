#include "kernels/threading.h"

#include <cblas.h>
#include <omp.h>

namespace sluice {

void SetBlasThreads(int threads) { omp_set_num_threads(threads); }

void UseOpenBlasThreads(int threads) {
  if (threads > 0 && openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
}

void UseOmpThreads(int threads) {
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

}  // namespace sluice
