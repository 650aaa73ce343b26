// The process-wide thread settings of the math libraries kernels call: OpenBLAS's pool and
// the OpenMP team oneDNN uses. A worker sets them from its intra-op thread count without
// linking any kernel.
//
//   SetBlasThreads(options.intra_op_threads);   // Once, when a worker starts.
//   UseOmpThreads(ctx->intra_op_threads());     // Before each oneDNN call on a pool thread.
#ifndef SLUICE_KERNELS_THREADING_H_
#define SLUICE_KERNELS_THREADING_H_

namespace sluice {

// OpenBLAS keeps a process-wide thread pool; workers size it to their intra-op threads.
void SetBlasThreads(int threads);

// OpenMP's team size is per calling thread: oneDNN calls set it to the intra-op thread count
// of the kernel's device before each call (cheap when it is already right).
void UseOmpThreads(int threads);

}  // namespace sluice

#endif  // SLUICE_KERNELS_THREADING_H_
