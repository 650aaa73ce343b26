#include "tools/error_hints.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/status.h"

namespace sluice {
namespace {

// The name quoted right after `prefix` in `message` ("... tensor 'x' ..." -> "x"); "" if none.
std::string QuotedAfter(absl::string_view message, absl::string_view prefix) {
  size_t at = message.find(prefix);
  if (at == absl::string_view::npos) return "";
  at += prefix.size();
  const size_t end = message.find('\'', at);
  return end == absl::string_view::npos ? "" : std::string(message.substr(at, end - at));
}

std::string InputList(const ErrorHintContext& context) {
  if (context.input_names.empty()) return "";
  return absl::StrCat("the model's inputs are: ", absl::StrJoin(context.input_names, ", "));
}

}  // namespace

std::vector<std::string> ErrorHints(const absl::Status& status, const ErrorHintContext& context) {
  std::vector<std::string> hints;
  const absl::string_view message = status.message();
  // A Placeholder that ran unfed (kernels/constant_op.cc), or an ONNX training input
  // without a value (training/).
  std::string missing = QuotedAfter(message, "You must feed a value for placeholder tensor '");
  if (missing.empty()) missing = QuotedAfter(message, "no value for input '");
  if (!missing.empty()) {
    hints.push_back(absl::StrCat("pass it with ", context.input_flag, " ", missing, "=FILE.pb"));
    return hints;
  }
  // An input name that is not the model's: run's ONNX and GraphDef paths (the master's feed
  // check), bench, and more positional inputs than the model takes.
  if (absl::StrContains(message, "has no input named '") ||
      absl::StrContains(message, "no model input for '") ||
      absl::StrContains(message, absl::StrCat("more ", context.input_flag, " files than")) ||
      (absl::StartsWith(message, "feed '") && absl::StrContains(message, "which is not in the graph"))) {
    if (std::string inputs = InputList(context); !inputs.empty()) hints.push_back(inputs);
    return hints;
  }
  if (status.code() == absl::StatusCode::kUnavailable && !context.target.empty()) {
    hints.push_back(absl::StrCat("check the address in --target ", context.target,
                                 " and that `sluice serve` is running there (and on the",
                                 " cluster's other tasks)"));
  } else if (status.code() == absl::StatusCode::kUnauthenticated) {
    hints.push_back(
        "every task and client needs the cluster's secret: SLUICE_CLUSTER_SECRET=VALUE or "
        "SLUICE_CLUSTER_SECRET_FILE=FILE for clients, as for the `sluice serve` tasks");
  }
  return hints;
}

int ReportFailure(absl::string_view verb, const absl::Status& status, const ErrorHintContext& context) {
  std::fprintf(stderr, "sluice %.*s: %s\n", static_cast<int>(verb.size()), verb.data(),
               StatusToString(status).c_str());
  for (const std::string& hint : ErrorHints(status, context)) {
    std::fprintf(stderr, "hint: %s\n", hint.c_str());
  }
  return 1;
}

}  // namespace sluice
