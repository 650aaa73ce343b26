#include "kernels/threading.h"

#include <cblas.h>
#include <omp.h>

namespace sluice {

void SetBlasThreads(int threads) {
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
}

void UseOmpThreads(int threads) {
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

}  // namespace sluice
