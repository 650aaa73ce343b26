// TF_Status, and the status helpers the other C API files share. TF_Code's numbers are
// absl::StatusCode's, so conversions are casts.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "build_defs/version.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"

namespace sluice {

absl::Status NullArgument(absl::string_view function, absl::string_view arg) {
  return absl::InvalidArgumentError(absl::StrCat(function, ": '", arg, "' is null"));
}

absl::Status NameNode(const absl::Status& s, const NodeDef& node) {
  if (s.ok() || absl::StrContains(s.message(), absl::StrCat("'", node.name(), "'"))) return s;
  return AddContext(s, absl::StrCat("node '", node.name(), "' (op '", node.op(), "')"));
}

}  // namespace sluice

extern "C" {

const char* TF_Version(void) { return SLUICE_VERSION; }

TF_Status* TF_NewStatus(void) { return new TF_Status; }

void TF_DeleteStatus(TF_Status* s) { delete s; }

void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg) {
  if (s == nullptr) return;
  if (code == TF_OK) {
    s->Set(absl::OkStatus());
    return;
  }
  int c = static_cast<int>(code);
  if (c < 0 || c > static_cast<int>(absl::StatusCode::kUnauthenticated)) c = TF_UNKNOWN;
  s->Set(absl::Status(static_cast<absl::StatusCode>(c), msg != nullptr ? msg : ""));
}

TF_Code TF_GetCode(const TF_Status* s) {
  return s == nullptr ? TF_OK : static_cast<TF_Code>(s->status.code());
}

const char* TF_Message(const TF_Status* s) { return s == nullptr ? "" : s->message.c_str(); }

}  // extern "C"
