// The verbs of the `sluice` command line. Each takes the arguments after the verb and returns
// the process exit code (0 ok, 1 failure, 2 usage error).
#ifndef SLUICE_TOOLS_VERBS_H_
#define SLUICE_TOOLS_VERBS_H_

#include "tools/cli.h"

namespace sluice {

int RunVerb(Args& args);

}  // namespace sluice

#endif  // SLUICE_TOOLS_VERBS_H_
