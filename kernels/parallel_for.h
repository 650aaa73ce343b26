// Splitting a kernel's element loop over the intra-op threads (the calling thread's OpenMP
// team, which oneDNN uses too: threading.h) once the work is large
// enough to pay for it, stopping between slices once the step is cancelled. One threshold and
// one loop for every kernel family (array_kernel_util.h, cwise_ops.h).
#ifndef SLUICE_KERNELS_PARALLEL_FOR_H_
#define SLUICE_KERNELS_PARALLEL_FOR_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/op_kernel.h"
#include "kernels/threading.h"

namespace sluice {

// Work of this many element moves or more is split over the device's compute pool.
inline constexpr int64_t kParallelElements = int64_t{1} << 15;

// Runs fn(begin, end) over [0, n), in parallel when `cost` (elements moved in all) is large;
// stops between slices of work once the step is cancelled (ForEachCancellableSlice).
template <typename Fn>
void ParallelForIfLarge(OpKernelContext* ctx, int64_t n, int64_t cost, Fn&& fn) {
  if (n <= 0) return;
  const int64_t per_item = std::max<int64_t>(1, cost / n);
  const int threads = ctx != nullptr ? ctx->intra_op_threads() : 1;
  const int64_t min_block = std::max<int64_t>(1, kParallelElements / 4 / per_item);
  ForEachCancellableSlice(ctx, n, per_item, [&](int64_t begin, int64_t end) {
    if (end - begin <= 1 || (end - begin) * per_item < kParallelElements || threads <= 1) {
      fn(begin, end);
    } else {
      OmpParallelFor(end - begin, min_block, threads, [&](int64_t b, int64_t e) { fn(begin + b, begin + e); });
    }
  });
}

// The same with the cost given per element (saturating at int64's largest).
template <typename Fn>
void ParallelForElements(OpKernelContext* ctx, int64_t n, int64_t cost_per_element, Fn&& fn) {
  const int64_t per = std::max<int64_t>(1, cost_per_element);
  const int64_t cost =
      n > std::numeric_limits<int64_t>::max() / per ? std::numeric_limits<int64_t>::max() : n * per;
  ParallelForIfLarge(ctx, n, cost, std::forward<Fn>(fn));
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_PARALLEL_FOR_H_
