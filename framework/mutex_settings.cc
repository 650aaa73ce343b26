#include "framework/mutex_settings.h"

#include <cstdlib>
#include <cstring>

#include "absl/synchronization/mutex.h"

namespace sluice {

void ConfigureMutexDeadlockDetection() {
  static const bool configured = [] {
    const char* env = std::getenv("SLUICE_MUTEX_DEADLOCK_DETECTION");
    if (env == nullptr || std::strcmp(env, "1") != 0) {
      absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    }
    return true;
  }();
  (void)configured;
}

}  // namespace sluice
