// The process-wide thread settings of the math libraries kernels call: OpenBLAS's pool and
// the OpenMP team oneDNN uses. A worker sets them from its intra-op thread count without
// linking any kernel.
//
//   SetBlasThreads(options.intra_op_threads);   // Once, when a worker starts.
//   UseOmpThreads(ctx->intra_op_threads());     // Before each oneDNN call on a pool thread.
#ifndef SLUICE_KERNELS_THREADING_H_
#define SLUICE_KERNELS_THREADING_H_

#include <cstdint>
#include <functional>

namespace sluice {

// The OpenMP team size of the calling thread (the worker's own); workers set it to their
// intra-op threads when they start. OpenBLAS's pool is not touched here: sizing it starts its
// threads, which then spin (sched_yield) for ~0.1 s, and on two cores that took a core from
// the first runs of every session (MobileNetV3 at 2 threads: 19 ms median instead of 2.3).
void SetBlasThreads(int threads);

// Sizes OpenBLAS's process-wide pool before a call into it (double GEMMs, float fallbacks), so
// its threads start only when something uses them.
void UseOpenBlasThreads(int threads);

// OpenMP's team size is per calling thread: oneDNN calls set it to the intra-op thread count
// of the kernel's device before each call (cheap when it is already right).
void UseOmpThreads(int threads);

// The threads a kernel of `multiply_adds` (or element operations) should use out of `threads`:
// one below a floor where waking the team costs more than it saves: 100k multiply-adds. On a
// 2-vCPU VM a fork and join of the OpenMP team costs a few microseconds; with the floor at 0
// Silero VAD and PaddleOCR's classifier run 5-10% slower at 2 threads than with it at 50-150k.
// A million (the floor until then) kept convolutions of 20 us on one core where their shapes
// are awkward for the vector kernels (openWakeWord's 96-channel 3x1 convolutions on 16 rows,
// 21 GMAC/s on AVX2): at 2 threads openWakeWord's embedding model 0.60 -> 0.57 ms on AVX2,
// MobileNetV3-Small 0.58 -> 0.54 ms on AVX-512. SLUICE_MIN_PARALLEL_MACS overrides the floor
// (0: always the full team). The answer depends only on its arguments, so a kernel that keys
// prepared primitives by shape gets the same team for the same shape.
int ThreadsForWork(double multiply_adds, int threads);

// Runs fn(begin, end) over [0, n) in at most `threads` blocks of at least `min_block` items on
// the calling thread's OpenMP team: the team oneDNN's primitives run on. Sluice's own loops
// used to go to a second pool, whose threads then waited for the cores that OpenMP's workers
// spin on for a while after each primitive; at two threads ShuffleNet ran 3x slower than at
// one. fn must not throw.
void OmpParallelFor(int64_t n, int64_t min_block, int threads, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace sluice

#endif  // SLUICE_KERNELS_THREADING_H_
