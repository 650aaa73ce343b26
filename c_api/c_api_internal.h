// The structs behind the C API's opaque handles, and the C++ helpers c_api.cc builds on. Only
// c_api.cc and its C++ tests include this; C programs see the handles as opaque.
//
//   TF_Graph* g = TF_NewGraph();
//   ...                                      // TF_NewOperation / TF_FinishOperation
//   absl::ReaderMutexLock lock(&g->mu);
//   for (const auto& op : g->ops) op->node_def.name();
#ifndef SLUICE_C_API_C_API_INTERNAL_H_
#define SLUICE_C_API_C_API_INTERNAL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api.h"
#include "framework/tensor.h"
#include "framework/tensor_shape.h"
#include "framework/types.h"
#include "master/session.h"
#include "ops/op_registry.h"
#include "proto/device_attributes.pb.h"
#include "proto/graph.pb.h"

struct TF_Status {
  absl::Status status;
  // A copy of the message, because TF_Message hands out a NUL-terminated string and
  // absl::Status only promises a string_view.
  std::string message;

  void Set(const absl::Status& s) {
    status = s;
    message = std::string(s.message());
  }
};

struct TF_Tensor {
  sluice::Tensor tensor;  // Shares its buffer with session values; never a DT_STRING tensor.
};

struct TF_SessionOptions {
  sluice::SessionOptions options;
};

struct TF_ImportGraphDefOptions {
  std::string prefix;  // As given; a trailing '/' is added when importing.
};

// Immutable once in a graph, so accessors read it without the graph's lock.
struct TF_Operation {
  sluice::NodeDef node_def;  // Inputs as "node", "node:k" and "^node"; every attr set.
  const sluice::OpRegistrationData* op = nullptr;
  sluice::DataTypeVector input_types;
  sluice::DataTypeVector output_types;
  std::vector<TF_Output> inputs;  // One per data input, in order.
  std::vector<TF_Operation*> control_inputs;
  // From the op's shape function; unknown rank or -1 dims where it could not tell.
  std::vector<sluice::PartialShape> output_shapes;
  // The value of a Const, so shape functions of its consumers can read it.
  std::optional<sluice::Tensor> const_value;
};

struct TF_Graph {
  mutable absl::Mutex mu;
  // Insertion order; never shrinks, so sessions extend with the suffix they have not seen
  // and TF_Operation pointers stay valid.
  std::vector<std::unique_ptr<TF_Operation>> ops ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::string, TF_Operation*> by_name ABSL_GUARDED_BY(mu);
  // TF_DeleteGraph frees the graph only once the last session over it is deleted.
  int num_sessions ABSL_GUARDED_BY(mu) = 0;
  bool delete_requested ABSL_GUARDED_BY(mu) = false;
  // Functions imported with GraphDefs and ONNX models (bodies of If, Loop, Scan). Only grows.
  sluice::FunctionDefLibrary library ABSL_GUARDED_BY(mu);
};

struct TF_OperationDescription {
  TF_Graph* graph = nullptr;
  sluice::NodeDef node_def;  // Name, op, device and attrs set so far; no inputs.
  // Inputs grouped per input arg: TF_AddInput adds a group of one, TF_AddInputList a group.
  std::vector<std::vector<TF_Output>> input_args;
  std::vector<TF_Operation*> control_inputs;
  // The first misuse seen while describing (null pointers, bad attr protos); reported by
  // TF_FinishOperation, because the TF_SetAttr* calls have no status of their own.
  absl::Status deferred;
};

struct TF_Session {
  std::unique_ptr<sluice::Session> session;
  TF_Graph* graph = nullptr;
  // Serializes extending the session with the graph's new operations; runs themselves go on
  // concurrently.
  absl::Mutex mu;
  bool created ABSL_GUARDED_BY(mu) = false;
  bool closed ABSL_GUARDED_BY(mu) = false;
  size_t num_ops_sent ABSL_GUARDED_BY(mu) = 0;
  int num_functions_sent ABSL_GUARDED_BY(mu) = 0;
};

struct TF_DeviceList {
  std::vector<sluice::DeviceAttributes> devices;
};

namespace sluice {

// Completes `node_def` (name and op set, attrs inferred or given) with `inputs` and
// `control_inputs`: fills defaults, validates it against the OpDef, type-checks the inputs and
// runs the shape function. Every error names the node. Callers hold the graph's lock.
absl::StatusOr<std::unique_ptr<TF_Operation>> BuildOperation(
    NodeDef node_def, const std::vector<TF_Output>& inputs,
    const std::vector<TF_Operation*>& control_inputs);

// "node:k" for a graph output.
std::string OutputName(const TF_Output& output);

// Adds `def`'s nodes (renamed under `prefix`) and functions to `graph`, all or nothing.
absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def, std::string prefix)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu);

}  // namespace sluice

#endif  // SLUICE_C_API_C_API_INTERNAL_H_
