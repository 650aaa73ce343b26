// A hint under an error whose fix is known: the verbs print the status as it is (its code
// name first), then "hint: ..." lines.
//
//   ErrorHintContext context;
//   context.input_names = {"x", "mask"};          // the model's, listed for a misnamed input
//   return ReportFailure("run", status, context);  // stderr; returns exit status 1
#ifndef SLUICE_TOOLS_ERROR_HINTS_H_
#define SLUICE_TOOLS_ERROR_HINTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {

struct ErrorHintContext {
  // How the verb takes a value for an input: "--input" (run, bench) or "--feed" (train).
  std::string input_flag = "--input";
  // The model's inputs, listed when an input name matches none of them. Empty: not listed.
  std::vector<std::string> input_names;
  // The session's --target; empty for an embedded session.
  std::string target;
};

// The hints for `status` (none for most errors). They are recognised by the status's code
// and the messages of the layers below, which this file names.
std::vector<std::string> ErrorHints(const absl::Status& status, const ErrorHintContext& context);

// Prints "sluice VERB: CODE: message" and then each hint as "hint: ..." on stderr. Returns 1,
// the exit status of a failed verb.
int ReportFailure(absl::string_view verb, const absl::Status& status,
                  const ErrorHintContext& context = {});

}  // namespace sluice

#endif  // SLUICE_TOOLS_ERROR_HINTS_H_
