// The structs behind the C API's opaque handles, and the helpers its files share. Only the C
// API's own sources include this; C programs see the handles as opaque.
//
//   TF_Graph* g = TF_NewGraph();
//   ...                                      // TF_NewOperation / TF_FinishOperation
//   absl::ReaderMutexLock lock(&g->mu);
//   for (const auto& op : g->ops) op->node->name();
//
// A TF_Graph is a framework Graph (framework/graph.h) plus one TF_Operation per node: the stable
// handle C programs hold, with what only the C API keeps about a node (inferred output shapes,
// a Const's value for its consumers' shape functions).
#ifndef SLUICE_C_API_C_API_INTERNAL_H_
#define SLUICE_C_API_C_API_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api.h"
#include "framework/graph.h"
#include "framework/node_def_util.h"
#include "framework/tensor.h"
#include "framework/tensor_shape.h"
#include "framework/types.h"
#include "google/protobuf/message_lite.h"
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

namespace sluice {

// The elements of a TF_STRING tensor: TF_TStrings in TensorFlow's layout (tf_tstring.h), which C
// programs read and write in place through TF_TensorData. The runtime keeps strings as
// std::string, so they are copied on the way in (ToRuntimeTensor) and out (NewCApiTensor).
class TStringArray {
 public:
  using Deallocator = void (*)(void* data, size_t len, void* arg);

  // `num_elements` empty strings in 64-byte-aligned memory the library owns; deleting the array
  // frees what each element owns (TF_TString_Dealloc: a LARGE string's bytes), then the memory.
  // Null when the size overflows, exceeds kMaxTensorBytes or memory runs out.
  static std::unique_ptr<TStringArray> Allocate(int64_t num_elements);
  // The caller's `len` bytes at `data` (TF_NewTensor); deleting the array calls
  // deallocator(data, len, arg), if any, and leaves the elements alone: as in TensorFlow,
  // freeing what they own is the deallocator's job.
  static std::unique_ptr<TStringArray> Wrap(void* data, size_t len, Deallocator deallocator,
                                            void* deallocator_arg);

  ~TStringArray();
  TStringArray(const TStringArray&) = delete;
  TStringArray& operator=(const TStringArray&) = delete;

  TF_TString* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  TStringArray() = default;

  TF_TString* data_ = nullptr;
  size_t bytes_ = 0;
  int64_t num_owned_ = 0;  // Elements to TF_TString_Dealloc; 0 for wrapped memory.
  bool owns_memory_ = false;
  Deallocator deallocator_ = nullptr;
  void* deallocator_arg_ = nullptr;
};

}  // namespace sluice

// Numbers: `tensor` shares its reference-counted buffer with session values (no copies across
// the API). TF_STRING: `tensor` is a DT_STRING tensor of the right shape without a buffer, only
// for the dtype and shape, and the elements are `strings`. Hand either to the runtime through
// sluice::ToRuntimeTensor, never `tensor` itself.
struct TF_Tensor {
  sluice::Tensor tensor;
  std::unique_ptr<sluice::TStringArray> strings;  // Set exactly when the dtype is DT_STRING.
};

struct TF_SessionOptions {
  sluice::SessionOptions options;
};

// What TF_ImportGraphDefOptions* record; names are the GraphDef's own, before any prefix.
struct TF_ImportGraphDefOptions {
  std::string prefix;  // As given; a trailing '/' is added when importing.
  std::string default_device;
  bool uniquify_names = false;
  bool uniquify_prefix = false;
  // GraphDef tensors (index kControlSlot: control dependencies) read from existing outputs
  // (index kControlSlot: the operation itself) instead; one entry per key, the latest wins.
  std::vector<std::pair<sluice::TensorId, TF_Output>> input_map;
  std::vector<TF_Operation*> control_dependencies;
  std::vector<sluice::TensorId> return_outputs;
  std::vector<std::string> return_operations;
  // The first misuse seen while setting options (null names or operations); reported by the
  // import, because the setters have no status of their own.
  absl::Status deferred;
};

struct TF_ImportGraphDefResults {
  std::vector<TF_Output> return_outputs;
  std::vector<TF_Operation*> return_operations;
  // Input-map keys neither used nor naming a tensor of the GraphDef. The names are copies
  // (a deque, so the pointers in missing_unused_name_ptrs stay valid).
  std::deque<std::string> missing_unused_names;
  std::vector<const char*> missing_unused_name_ptrs;
  std::vector<int> missing_unused_indexes;
};

// Its node's NodeDef and in-edges never change once in a graph (edges are only ever added
// into a new node), so accessors read them without the graph's lock. Out-edges grow as
// consumers are added (and shrink when a failed import is rolled back): read them under it.
struct TF_Operation {
  TF_Graph* graph = nullptr;
  sluice::Node* node = nullptr;  // Owned by graph->graph; its NodeDef has every attr set.
  // From the op's shape function, refined by TF_GraphSetTensorShape; unknown rank or -1 dims
  // where neither could tell. Guarded by graph->mu (only TF_GraphSetTensorShape changes it
  // after the operation is added).
  std::vector<sluice::PartialShape> output_shapes;
  // The value of a Const, so shape functions of its consumers can read it.
  std::optional<sluice::Tensor> const_value;
};

struct TF_Graph {
  mutable absl::Mutex mu;
  // The nodes and edges. Functions imported with GraphDefs and ONNX models (bodies of If,
  // Loop, Scan) go in its library, which only grows.
  sluice::Graph graph ABSL_GUARDED_BY(mu){sluice::OpRegistry::Global()};
  // One handle per node, in insertion order; never shrinks (but for the rollback of a failed
  // import, before anyone saw them), so sessions extend with the suffix they have not seen and
  // TF_Operation pointers stay valid.
  std::vector<std::unique_ptr<TF_Operation>> ops ABSL_GUARDED_BY(mu);
  std::vector<TF_Operation*> op_by_node_id ABSL_GUARDED_BY(mu);  // Null for removed ids.
  // TF_DeleteGraph frees the graph only once the last session over it is deleted.
  int num_sessions ABSL_GUARDED_BY(mu) = 0;
  bool delete_requested ABSL_GUARDED_BY(mu) = false;
  // Set for the cond and body graphs TF_NewWhile makes (and never changed): the graph the
  // loop goes in and the loop's inputs there.
  TF_Graph* while_parent = nullptr;
  std::vector<TF_Output> while_inputs;

  TF_Operation* OperationOf(const sluice::Node* node) const ABSL_SHARED_LOCKS_REQUIRED(mu) {
    return op_by_node_id[node->id()];
  }
  // Null when no operation has that name.
  TF_Operation* OperationByName(absl::string_view name) const ABSL_SHARED_LOCKS_REQUIRED(mu) {
    sluice::Node* node = graph.FindNode(name);
    return node == nullptr ? nullptr : OperationOf(node);
  }
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

namespace sluice {

// One partial run (TF_SessionPRunSetup, then TF_SessionPRun calls): what setup declared and
// what the calls so far have fed, fetched and run. Each call runs a step over everything known
// so far: earlier feeds and earlier fetched values are fed again, so the step recomputes only
// what lies between them and this call's fetches. TF_SessionPRun calls on one handle take
// their turn on mu.
struct PartialRun {
  absl::Mutex mu;
  absl::flat_hash_set<std::string> feeds;    // Declared, by tensor name ("x:0").
  absl::flat_hash_set<std::string> fetches;  // Declared.
  std::vector<TF_Operation*> targets;        // Declared, in setup's order.
  // Fed and fetched values so far, by tensor name.
  absl::flat_hash_map<std::string, Tensor> values ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<std::string> fetched ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<const TF_Operation*> targets_run ABSL_GUARDED_BY(mu);
};

}  // namespace sluice

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
  // Partial runs not finished yet, by handle; one ends once all it declared is fed, fetched
  // and run (or with the session).
  absl::Mutex partial_runs_mu;
  absl::flat_hash_map<std::string, std::shared_ptr<sluice::PartialRun>> partial_runs
      ABSL_GUARDED_BY(partial_runs_mu);
  int64_t next_partial_run ABSL_GUARDED_BY(partial_runs_mu) = 0;
};

struct TF_DeviceList {
  std::vector<sluice::DeviceAttributes> devices;
};

// A handle on a loaded custom-op library: the ops it registered, as a serialized OpList that
// TF_GetOpList hands out without copying.
struct TF_Library {
  void* handle = nullptr;  // From dlopen; never closed (its ops stay registered).
  std::string op_list;
};

namespace sluice {

// ---- Statuses (tf_status.cc) ----

inline void SetStatus(TF_Status* status, const absl::Status& s) {
  if (status != nullptr) status->Set(s);
}

// INVALID_ARGUMENT "function: 'arg' is null".
absl::Status NullArgument(absl::string_view function, absl::string_view arg);

// Prefixes "node 'name' (op 'type'): " unless the message already names the node (most
// validation helpers do), so every graph-building error says which node it is about.
absl::Status NameNode(const absl::Status& s, const NodeDef& node);

// ---- Attrs (c_api_operation_description.cc, c_api_attrs.cc), shared with the eager API ----

// OK, or INVALID_ARGUMENT for a negative length or null values with a positive length.
template <typename T>
absl::Status CheckList(const T* values, int n) {
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("negative list length ", n));
  if (n > 0 && values == nullptr) return absl::InvalidArgumentError("list values are null");
  return absl::OkStatus();
}

// `num_dims` < 0: unknown rank; a negative dim: unknown size. Null dims with num_dims > 0 are
// INVALID_ARGUMENT.
absl::Status ShapeToProto(const int64_t* dims, int num_dims, TensorShapeProto* proto);

// The kind an OpDef attr type string ("list(int)", "shape", ...) names; false for others.
bool KindOfTypeString(absl::string_view type, TF_AttrType* kind);

// ---- Custom-op libraries (c_api_library.cc) ----

// Records a failed TF_RegisterOpDefinition or TF_RegisterKernelBuilder: while TF_LoadLibrary
// loads a library on this thread, the library's registrations failing fail the load.
void NoteRegistrationFailure(const absl::Status& s);

// ---- Buffers (tf_buffer.cc) ----

// Serializes into an empty TF_Buffer; the bytes are released by TF_DeleteBuffer.
absl::Status MessageToBuffer(const google::protobuf::MessageLite& message, TF_Buffer* out);

// Parses `length` bytes at `data` (null only when length is 0); false when they are not a
// valid serialized `message` or too many for protobuf.
bool ParseFromBytes(const void* data, size_t length, google::protobuf::MessageLite* message);

// ---- Tensors (tf_tensor.cc) ----

// Types a TF_Tensor can hold: fixed-size numerics, bool and strings (not resources or
// variants).
bool CanCrossCApi(DataType dt);

// The runtime's value of `t`: numbers share its buffer; TF_STRING elements are copied into a
// DT_STRING tensor (bytes may hold NULs). INVALID_ARGUMENT for a malformed TF_TString (a SMALL
// size over 22, a LARGE size over its capacity, a null pointer with bytes, an OFFSET outside
// the tensor's data); RESOURCE_EXHAUSTED when the bytes add up to more than kMaxTensorBytes.
absl::StatusOr<Tensor> ToRuntimeTensor(const TF_Tensor& t);

// A new TF_Tensor, for the caller to delete, holding a runtime value: numbers share `value`'s
// buffer; DT_STRING elements are copied into TF_TStrings the library owns. UNIMPLEMENTED for a
// type CanCrossCApi refuses, RESOURCE_EXHAUSTED when memory runs out.
absl::StatusOr<TF_Tensor*> NewCApiTensor(Tensor value);

// ---- Graphs (c_api_graph.cc) ----

// "node:k" for a graph output.
std::string OutputName(const TF_Output& output);

// True when `op` is an operation of `graph` (and not null or another graph's).
bool InGraph(const TF_Graph& graph, const TF_Operation* op);

// `out` names an existing output of an operation of `graph`; errors start with `what`.
absl::Status CheckOutput(const TF_Graph& graph, const TF_Output& out, absl::string_view what);

// Checks that data input `i` of `node` may take output `index` of `src`: the output exists and
// has the type the input expects.
absl::Status CheckInput(const Node& node, int i, const Node& src, int index);

// Adds `node_def` (name, op and attrs; its inputs are replaced by `inputs` and
// `control_inputs`, which are operations of `graph`) to the graph: defaults filled, checked
// against its OpDef, type-checked and shape-inferred. On error the graph is unchanged and the
// error names the node.
absl::StatusOr<TF_Operation*> AddOperationLocked(TF_Graph* graph, NodeDef node_def,
                                                 absl::Span<const TF_Output> inputs,
                                                 absl::Span<TF_Operation* const> control_inputs)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu);

// Removes the operations added after the first `num_ops`, newest first.
void TruncateOperationsLocked(TF_Graph* graph, size_t num_ops) ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu);

// Adds `def`'s nodes and functions to `graph` as `options` say (renaming, input mappings,
// control dependencies, default device), all or nothing, with the checks TF_FinishOperation
// makes for each node. Fills `results` (may be null) with what the options asked to return.
absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def,
                                  const TF_ImportGraphDefOptions& options,
                                  TF_ImportGraphDefResults* results)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu);

// The same with only a prefix ("" for none).
absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def, std::string prefix)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu);

}  // namespace sluice

#endif  // SLUICE_C_API_C_API_INTERNAL_H_
