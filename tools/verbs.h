// The verbs of the `sluice` command line. Each takes the arguments after the verb and returns
// the process exit code (0 ok, 1 failure, 2 usage error).
#ifndef SLUICE_TOOLS_VERBS_H_
#define SLUICE_TOOLS_VERBS_H_

#include "tools/cli.h"
#include "tools/model_inputs.h"  // RandomTensor, OnnxInputs: run, bench and convert --dot

namespace sluice {

int RunVerb(Args& args);
int TestOnnxVerb(Args& args);
int ConvertVerb(Args& args);
int BenchVerb(Args& args);
int TrainVerb(Args& args);
int ServeVerb(Args& args);  // `sluice serve`: one task of a cluster.
int OnnxToolVerb(Args& args);  // `sluice onnx SUBVERB`: model utilities.

}  // namespace sluice

#endif  // SLUICE_TOOLS_VERBS_H_
