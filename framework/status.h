// One error model: absl::Status / absl::StatusOr, with macros that add context on the way up.
//
//   SL_RETURN_IF_ERROR(ValidateNodeDef(node, op_def));
//   SL_RETURN_IF_ERROR(kernel->Init(&ctx), "building kernel for node '", node.name(), "'");
//   SL_ASSIGN_OR_RETURN(auto graph, Graph::FromGraphDef(def, registry));
//   SL_ASSIGN_OR_RETURN(Tensor t, ReadTensor(path), "reading ", path);
//
// The optional trailing arguments are absl::StrCat pieces, evaluated only on error; they become
// "context: message" with the code and payloads of the original status kept.
#ifndef SLUICE_FRAMEWORK_STATUS_H_
#define SLUICE_FRAMEWORK_STATUS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sluice {

// Returns `status` with `context` prefixed to its message ("context: message"); OK stays OK.
// The code and every payload are kept.
absl::Status AddContext(const absl::Status& status, absl::string_view context);

// The message of an error status together with its code name, for logs and the command line.
std::string StatusToString(const absl::Status& status);

// The exception now being handled, as a status (call it only inside a catch block):
// RESOURCE_EXHAUSTED for std::bad_alloc and std::length_error (sizes, usually from input data,
// that no allocation can meet), INTERNAL for anything else, with the exception's message.
absl::Status StatusFromCurrentException();

// Runs `fn` (which returns absl::Status) and turns an exception escaping it into a status, as
// StatusFromCurrentException does. The boundary between code that may throw (the standard
// library, oneDNN) and Sluice's callers: the executor's call to a kernel, the importer's call
// to a converter. Costs nothing unless something throws.
//
//   absl::Status s = CatchExceptions([&] { return kernel->Compute(&ctx); });
template <typename Fn>
absl::Status CatchExceptions(Fn&& fn) {
  try {
    return fn();
  } catch (...) {
    return StatusFromCurrentException();
  }
}

namespace status_internal {

inline const absl::Status& AsStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// No context pieces: the status as it is.
inline absl::Status WithContext(absl::Status s) { return s; }
template <typename... Args>
absl::Status WithContext(absl::Status s, const Args&... context) {
  return AddContext(s, absl::StrCat(context...));
}

}  // namespace status_internal
}  // namespace sluice

#define SL_STATUS_CONCAT_INNER_(a, b) a##b
#define SL_STATUS_CONCAT_(a, b) SL_STATUS_CONCAT_INNER_(a, b)

// SL_RETURN_IF_ERROR(expr [, context pieces...]): returns the error of `expr`, with context.
#define SL_RETURN_IF_ERROR(expr, ...)                                                 \
  do {                                                                                \
    ::absl::Status sl_status_ = (expr);                                               \
    if (!sl_status_.ok()) {                                                           \
      return ::sluice::status_internal::WithContext(std::move(sl_status_), ##__VA_ARGS__); \
    }                                                                                 \
  } while (0)

#define SL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr, ...)                                   \
  auto tmp = (expr);                                                                     \
  if (!tmp.ok()) {                                                                       \
    return ::sluice::status_internal::WithContext(std::move(tmp).status(), ##__VA_ARGS__); \
  }                                                                                      \
  lhs = std::move(tmp).value()

// SL_ASSIGN_OR_RETURN(lhs, expr [, context pieces...]): assigns the value of a StatusOr or
// returns its error, with context.
#define SL_ASSIGN_OR_RETURN(lhs, expr, ...) \
  SL_ASSIGN_OR_RETURN_IMPL_(SL_STATUS_CONCAT_(sl_statusor_, __LINE__), lhs, expr, ##__VA_ARGS__)

#endif  // SLUICE_FRAMEWORK_STATUS_H_
