// One error model: absl::Status / absl::StatusOr, with macros that add context on the way up.
//
//   SL_RETURN_IF_ERROR(ValidateNodeDef(node, op_def));
//   SL_RETURN_IF_ERROR_CTX(kernel->Init(&ctx), "building kernel for node '", node.name(), "'");
//   SL_ASSIGN_OR_RETURN(auto graph, Graph::FromGraphDef(def, registry));
#ifndef SLUICE_FRAMEWORK_STATUS_H_
#define SLUICE_FRAMEWORK_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sluice {

// Returns `status` with `context` prefixed to its message ("context: message"); OK stays OK.
absl::Status AddContext(const absl::Status& status, absl::string_view context);

// The message of an error status together with its code name, for logs and the command line.
std::string StatusToString(const absl::Status& status);

}  // namespace sluice

#define SL_STATUS_CONCAT_INNER_(a, b) a##b
#define SL_STATUS_CONCAT_(a, b) SL_STATUS_CONCAT_INNER_(a, b)

#define SL_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    ::absl::Status sl_status_ = (expr);             \
    if (!sl_status_.ok()) return sl_status_;        \
  } while (0)

#define SL_RETURN_IF_ERROR_CTX(expr, ...)                                            \
  do {                                                                               \
    ::absl::Status sl_status_ = (expr);                                              \
    if (!sl_status_.ok())                                                            \
      return ::sluice::AddContext(sl_status_, ::absl::StrCat(__VA_ARGS__));          \
  } while (0)

#define SL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define SL_ASSIGN_OR_RETURN(lhs, expr) \
  SL_ASSIGN_OR_RETURN_IMPL_(SL_STATUS_CONCAT_(sl_statusor_, __LINE__), lhs, expr)

#endif  // SLUICE_FRAMEWORK_STATUS_H_
