#include "framework/status.h"

namespace sluice {

absl::Status AddContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

std::string StatusToString(const absl::Status& status) {
  if (status.ok()) return "OK";
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message());
}

}  // namespace sluice
