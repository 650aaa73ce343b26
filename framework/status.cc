#include "framework/status.h"

#include <exception>
#include <new>
#include <stdexcept>

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

absl::Status StatusFromCurrentException() {
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory (", e.what(), ")"));
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat("size too large (", e.what(), ")"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("exception of unknown type");
  }
}

}  // namespace sluice
