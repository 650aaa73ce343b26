// Handles and ids that grant access (a session handle, a registered graph, a step whose
// tensors RecvTensor hands out) must not be guessable from others or repeat after a restart:
// they come from the kernel's random source, not from counters.
//
//   std::string handle = NewRandomHandle("session");  // "session_" + 32 hex digits.
//   int64_t step_id = NewRandomStepId();              // In [1, 2^63).
#ifndef SLUICE_FRAMEWORK_RANDOM_IDS_H_
#define SLUICE_FRAMEWORK_RANDOM_IDS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice {

// `prefix` + "_" + 128 random bits as 32 lowercase hex digits.
std::string NewRandomHandle(absl::string_view prefix);
// 63 random bits, never 0.
int64_t NewRandomStepId();

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_RANDOM_IDS_H_
