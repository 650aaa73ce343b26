#include "kernels/threading.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

// libgomp's ABI (libgomp.so, which oneDNN links): runs fn(data) on a team of num_threads
// threads, the caller among them, and returns when all have.
extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);

namespace sluice {

// Measured on a 2-vCPU AMD EPYC VM: see ThreadsForWork in threading.h.
constexpr double kDefaultMinParallelMultiplyAdds = 1e5;

void SetBlasThreads(int threads) { omp_set_num_threads(threads); }

void UseOpenBlasThreads(int threads) {
  if (threads > 0 && openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
}

void UseOmpThreads(int threads) {
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

namespace {

double MinParallelMultiplyAdds() {
  static const double floor = [] {
    const char* env = std::getenv("SLUICE_MIN_PARALLEL_MACS");
    if (env != nullptr && *env != '\0') {
      char* end = nullptr;
      const double v = std::strtod(env, &end);
      if (end != env && v >= 0) return v;
      std::fprintf(stderr, "sluice: SLUICE_MIN_PARALLEL_MACS='%s' is not a number; ignored\n", env);
    }
    return kDefaultMinParallelMultiplyAdds;
  }();
  return floor;
}

}  // namespace

int ThreadsForWork(double multiply_adds, int threads) {
  return threads > 1 && multiply_adds < MinParallelMultiplyAdds() ? 1 : threads;
}

namespace {

// One block of an OmpParallelFor, run by each thread of the team.
struct ParallelWork {
  int64_t n, per;
  const std::function<void(int64_t, int64_t)>* fn;
};

void RunBlock(void* data) {
  const auto* work = static_cast<const ParallelWork*>(data);
  const int64_t begin = omp_get_thread_num() * work->per, end = std::min(work->n, begin + work->per);
  if (begin < end) (*work->fn)(begin, end);
}

}  // namespace

void OmpParallelFor(int64_t n, int64_t min_block, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>(std::max(threads, 1), std::max<int64_t>(1, n / std::max<int64_t>(1, min_block)));
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  ParallelWork work{n, (n + blocks - 1) / blocks, &fn};
  // libgomp's own entry point, which `#pragma omp parallel` compiles to under gcc: called
  // directly, the team is libgomp's (oneDNN's) whichever compiler built this file; clang's
  // pragma would bring in LLVM's runtime, a second set of threads.
  GOMP_parallel(RunBlock, &work, static_cast<unsigned>(blocks), 0);
}

}  // namespace sluice
