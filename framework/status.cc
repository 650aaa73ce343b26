#include "framework/status.h"

namespace sluice {

absl::Status AddContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload([&out](absl::string_view type_url, const absl::Cord& payload) {
    out.SetPayload(type_url, payload);
  });
  return out;
}

std::string StatusToString(const absl::Status& status) {
  if (status.ok()) return "OK";
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message());
}

}  // namespace sluice
