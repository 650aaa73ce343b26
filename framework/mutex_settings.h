// absl::Mutex's lock-order graph (deadlock detection) in processes that run steps. Debian's
// abseil is built without NDEBUG, so the graph is on by default: every Mutex locked gets an
// id in a global graph and every Mutex destroyed is removed from it, a fifth of a tiny
// graph's run (bench/session_overhead_bench). Workers turn it off for their process unless
// SLUICE_MUTEX_DEADLOCK_DETECTION=1 (the test suite sets it, so tests keep the check).
//
//   ConfigureMutexDeadlockDetection();  // Idempotent; the first call decides.
#ifndef SLUICE_FRAMEWORK_MUTEX_SETTINGS_H_
#define SLUICE_FRAMEWORK_MUTEX_SETTINGS_H_

namespace sluice {

void ConfigureMutexDeadlockDetection();

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_MUTEX_SETTINGS_H_
