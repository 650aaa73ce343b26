// The ONNX library reports errors by throwing; Sluice reports them as statuses. Every call
// into it that may throw goes through this one adaptor.
//
//   SL_RETURN_IF_ERROR(CallOnnx("the ONNX checker rejects the model",
//                               [&] { onnx::checker::check_model(model); }));
#ifndef SLUICE_FRONTEND_ONNX_ONNX_ERRORS_H_
#define SLUICE_FRONTEND_ONNX_ONNX_ERRORS_H_

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice {

// Runs `fn`. An exception becomes INVALID_ARGUMENT "what: its message" (the library throws on
// bad models), or INTERNAL for one that is not a std::exception.
template <typename Fn>
absl::Status CallOnnx(absl::string_view what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown exception"));
  }
  return absl::OkStatus();
}

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_ONNX_ERRORS_H_
