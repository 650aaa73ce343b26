// The body of a library function as the executor runs it: a GraphDef whose _Arg nodes take the
// call's arguments and whose _Retval nodes give its results.
//
//   SL_ASSIGN_OR_RETURN(GraphDef body, FunctionBodyGraph(fdef, library));
//   auto exec = Executor::Create(body, device);
//
// Two forms of FunctionDef arrive: Sluice's own (its ONNX importer and TF_GraphToFunction write
// _Arg and _Retval nodes into node_def, tensors named "node:k"), returned as they are, and
// TensorFlow's (SavedModels, TFE_ContextAddFunctionDef, TF_FunctionImportFunctionDef): the
// signature's input args named directly as inputs, tensors named "node:output_arg:index", the
// results in the `ret` map. TensorFlow's form is rewritten into the first: an _Arg node per input
// arg (named as the arg), flat output indices from each node's OpDef (list args sized by their
// number or type-list attrs), a _Retval node per output arg.
#ifndef SLUICE_WORKER_FUNCTION_BODY_H_
#define SLUICE_WORKER_FUNCTION_BODY_H_

#include "absl/status/statusor.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"

namespace sluice {

// INVALID_ARGUMENT naming the function and node for a reference to a node or output arg that
// does not exist; UNIMPLEMENTED for a generic function (an arg typed by an attr).
absl::StatusOr<GraphDef> FunctionBodyGraph(const FunctionDef& fdef, const FunctionDefLibrary& library);

}  // namespace sluice

#endif  // SLUICE_WORKER_FUNCTION_BODY_H_
