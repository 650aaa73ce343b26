/* Sluice's C API: TensorFlow's C API for graphs and sessions (names, signatures, enum values,
 * struct layouts, header layout), so a program or language binding written against
 * TensorFlow's "tensorflow/c/c_api.h" compiles unchanged with `-I <sluice>/c_api/include` and
 * links with `-ltensorflow` (libtensorflow.so, the same library as libsluice_c.so).
 *
 *   TF_Status* s = TF_NewStatus();
 *   TF_Graph* g = TF_NewGraph();
 *   TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", "x");
 *   TF_SetAttrType(d, "dtype", TF_FLOAT);
 *   TF_Output x = {TF_FinishOperation(d, s), 0};  (... more ops, up to an output y)
 *   TF_Session* sess = TF_NewSession(g, opts, s);  (opts from TF_NewSessionOptions)
 *   TF_SessionRun(sess, NULL, &x, &x_value, 1, &y, &y_value, 1, NULL, 0, NULL, s);
 *
 * Conventions (as in TensorFlow):
 * - Objects are opaque and created/destroyed through TF_New.../TF_Delete... calls; deleting
 *   NULL is a no-op.
 * - Every call taking a TF_Status* sets it: TF_OK on success, a code and message on failure.
 *   Misuse (null pointers, indices out of range, malformed protos) is reported through the
 *   status rather than crashing where a status is available.
 * - Booleans are unsigned char.
 * - Tensors passed in stay owned by the caller; tensors handed out are new and the caller
 *   deletes them with TF_DeleteTensor. Numeric session outputs are not copied: they may share
 *   memory with values the runtime keeps (a Const's value, a fed tensor), so treat their data
 *   as read-only. TF_STRING tensors hold TF_TString elements as in TensorFlow 2.x and are
 *   copied whenever they cross into or out of the runtime (tf_tensor.h says who frees their
 *   elements).
 *
 * What is provided: statuses, buffers, tensors (tf_tensor.h) and the TF_TString helpers
 * (tf_tstring.h); building graphs (every TF_SetAttr*, TF_ColocateWith, TF_UpdateEdge),
 * reading them back (every TF_OperationGetAttr*, input and output lists, consumers, control
 * edges, NodeDefs, OpDefs), TF_GraphSetTensorShape, GraphDef export and import with every
 * TF_ImportGraphDefOptions* option and TF_ImportGraphDefResults; sessions (TF_SessionRun,
 * device lists); the op registry (TF_GetAllOpList) and custom-op libraries (TF_LoadLibrary,
 * TF_GetOpList); functions (TF_GraphToFunction, TF_GraphCopyFunction, ...; they run as the
 * bodies of If, While, PartitionedCall and ONNX's Loop and Scan, not as ops of their own
 * name); servers (TF_NewServer, ...).
 *
 * Also: partial runs, while loops (TF_NewWhile), gradients (TF_AddGradients), constant
 * evaluation, kernel lists and the deprecated session API (TF_NewDeprecatedSession, TF_Run).
 * Custom-op libraries register through ops.h and kernels.h.
 *
 * Limitations: TF_RESOURCE and TF_VARIANT tensors cannot cross this API (TF_NewTensor and
 * TF_AllocateTensor return NULL for them, and TF_SessionRun reports UNIMPLEMENTED when a fetched
 * value has one of these types). SavedModels load (TF_LoadSessionFromSavedModel: the binary
 * saved_model.pb; variables are restored by the model's own restore op, which needs TensorFlow's
 * RestoreV2, not provided yet, so models with variables fail to load naming it). Not declared:
 * the ApiDef map (TF_NewApiDefMap, ...), TF_RegisterLogListener and TF_RegisterFilesystemPlugin.
 *
 * Thread safety: a TF_Graph may be read and extended from several threads; a TF_Session may
 * run from several threads at once. A TF_OperationDescription belongs to one thread.
 *
 * Sluice's own extensions (SL_*: ONNX import, training) are declared in c_api/sluice_c_api.h. */
#ifndef SLUICE_TENSORFLOW_C_C_API_H_
#define SLUICE_TENSORFLOW_C_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "c_api_macros.h"
#include "tf_attrtype.h"
#include "tf_buffer.h"
#include "tf_datatype.h"
#include "tf_status.h"
#include "tf_tensor.h"
#include "tf_tstring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Version */

/* The library's version string, e.g. "0.1.0". Never NULL; owned by the library. */
TF_CAPI_EXPORT extern const char* TF_Version(void);

/* ---------------------------------------------------------------------------------------- */
/* Session options */

/* Strings handed out without a copy: the caller does not own `data`. */
typedef struct TF_StringView {
  const char* data;
  size_t len;
} TF_StringView;

typedef struct TF_SessionOptions TF_SessionOptions;

TF_CAPI_EXPORT extern TF_SessionOptions* TF_NewSessionOptions(void);
/* "" (the default) runs in process; "grpc://host:port" reaches a `sluice serve` master. */
TF_CAPI_EXPORT extern void TF_SetTarget(TF_SessionOptions* options, const char* target);
/* `proto` is a serialized ConfigProto (TensorFlow's field numbers). */
TF_CAPI_EXPORT extern void TF_SetConfig(TF_SessionOptions* options, const void* proto,
                                        size_t proto_len, TF_Status* status);
TF_CAPI_EXPORT extern void TF_DeleteSessionOptions(TF_SessionOptions*);

/* ---------------------------------------------------------------------------------------- */
/* Graphs and operations */

/* A graph under construction. Operations are never removed; their pointers stay valid until
 * the graph is deleted. */
typedef struct TF_Graph TF_Graph;
typedef struct TF_OperationDescription TF_OperationDescription;
typedef struct TF_Operation TF_Operation;

/* One input slot of an operation. */
typedef struct TF_Input {
  TF_Operation* oper;
  int index;
} TF_Input;

/* One output of an operation: the tensor "name:index". */
typedef struct TF_Output {
  TF_Operation* oper;
  int index;
} TF_Output;

TF_CAPI_EXPORT extern TF_Graph* TF_NewGraph(void);
/* The graph goes away once no session uses it any more. */
TF_CAPI_EXPORT extern void TF_DeleteGraph(TF_Graph*);

/* Refines what the graph knows of an output's shape with dims[0, num_dims) (num_dims -1:
 * unknown rank; a dim of -1: unknown). The shapes are merged, not replaced: setting [-1, 2] on
 * a known [3, -1] gives [3, 2]. INVALID_ARGUMENT when they disagree (rank or a known dim).
 * Operations added afterwards see the refined shape in their shape functions. */
TF_CAPI_EXPORT extern void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output,
                                                  const int64_t* dims, const int num_dims,
                                                  TF_Status* status);
/* Rank of an output as the graph knows it (shape functions, TF_GraphSetTensorShape); -1 when
 * unknown. */
TF_CAPI_EXPORT extern int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output,
                                                   TF_Status* status);
/* Fills dims[0, num_dims) with the known dims (-1 when unknown). num_dims must equal the rank
 * when the rank is known; for an unknown rank every entry is set to -1. */
TF_CAPI_EXPORT extern void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output,
                                                  int64_t* dims, int num_dims, TF_Status* status);

/* Starts an operation named `oper_name` of type `op_type`. Finish it with TF_FinishOperation
 * (which also frees the description). */
TF_CAPI_EXPORT extern TF_OperationDescription* TF_NewOperation(TF_Graph* graph,
                                                               const char* op_type,
                                                               const char* oper_name);
/* Placement request, e.g. "/device:CPU:1". */
TF_CAPI_EXPORT extern void TF_SetDevice(TF_OperationDescription* desc, const char* device);
/* Inputs go in the order of the op's input args: TF_AddInput for a single-tensor arg,
 * TF_AddInputList for a list arg (N * T or a type list). Attrs the inputs determine ("T", "N",
 * type lists) are set from them. */
TF_CAPI_EXPORT extern void TF_AddInput(TF_OperationDescription* desc, TF_Output input);
TF_CAPI_EXPORT extern void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs,
                                           int num_inputs);
TF_CAPI_EXPORT extern void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input);
/* Asks that the operation be placed with `op`: recorded as "loc:@<op name>" in the "_class"
 * attr, as in TensorFlow. Sluice's placer does not act on it yet: give both the same device
 * with TF_SetDevice where it matters. */
TF_CAPI_EXPORT extern void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op);

/* Attrs not inferred from inputs and without a default that suits. Problems found here are
 * reported by TF_FinishOperation. */
TF_CAPI_EXPORT extern void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name,
                                            const void* value, size_t length);
TF_CAPI_EXPORT extern void TF_SetAttrStringList(TF_OperationDescription* desc,
                                                const char* attr_name, const void* const* values,
                                                const size_t* lengths, int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name,
                                         int64_t value);
TF_CAPI_EXPORT extern void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name,
                                             const int64_t* values, int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name,
                                           float value);
TF_CAPI_EXPORT extern void TF_SetAttrFloatList(TF_OperationDescription* desc,
                                               const char* attr_name, const float* values,
                                               int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name,
                                          unsigned char value);
TF_CAPI_EXPORT extern void TF_SetAttrBoolList(TF_OperationDescription* desc,
                                              const char* attr_name, const unsigned char* values,
                                              int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name,
                                          TF_DataType value);
TF_CAPI_EXPORT extern void TF_SetAttrTypeList(TF_OperationDescription* desc,
                                              const char* attr_name, const TF_DataType* values,
                                              int num_values);
/* num_dims -1 means unknown rank; a dim of -1 is unknown. */
TF_CAPI_EXPORT extern void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name,
                                           const int64_t* dims, int num_dims);
TF_CAPI_EXPORT extern void TF_SetAttrShapeList(TF_OperationDescription* desc,
                                               const char* attr_name, const int64_t* const* dims,
                                               const int* num_dims, int num_shapes);
/* A shape given as a serialized TensorShapeProto (INVALID_ARGUMENT if it does not parse). */
TF_CAPI_EXPORT extern void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc,
                                                      const char* attr_name, const void* proto,
                                                      size_t proto_len, TF_Status* status);
TF_CAPI_EXPORT extern void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc,
                                                          const char* attr_name,
                                                          const void* const* protos,
                                                          const size_t* proto_lens,
                                                          int num_shapes, TF_Status* status);
/* A function attr naming a function of the graph's library (TF_GraphCopyFunction), for the
 * functional ops If, While, PartitionedCall and their stateless/stateful variants. */
TF_CAPI_EXPORT extern void TF_SetAttrFuncName(TF_OperationDescription* desc,
                                              const char* attr_name, const char* value,
                                              size_t length);
/* A placeholder attr (the name of an attr of the enclosing function). */
TF_CAPI_EXPORT extern void TF_SetAttrPlaceholder(TF_OperationDescription* desc,
                                                 const char* attr_name, const char* placeholder);
/* Copies the tensor's contents (a TF_STRING tensor's string bytes); `value` stays owned by the
 * caller. INVALID_ARGUMENT for a malformed TF_TString element (also reported by
 * TF_FinishOperation). */
TF_CAPI_EXPORT extern void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name,
                                            TF_Tensor* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_SetAttrTensorList(TF_OperationDescription* desc,
                                                const char* attr_name, TF_Tensor* const* values,
                                                int num_values, TF_Status* status);
/* `proto` is a serialized AttrValue. */
TF_CAPI_EXPORT extern void TF_SetAttrValueProto(TF_OperationDescription* desc,
                                                const char* attr_name, const void* proto,
                                                size_t proto_len, TF_Status* status);

/* Infers attrs from inputs, fills defaults, validates against the op's definition, runs its
 * shape function and adds the operation to the graph. Frees `desc` in every case. Returns
 * NULL on error (unknown op, duplicate name, bad attrs, shape errors), naming the node. */
TF_CAPI_EXPORT extern TF_Operation* TF_FinishOperation(TF_OperationDescription* desc,
                                                       TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* Reading operations back. Operations never change once added; strings are owned by the
 * graph. Consumers and control outputs grow as operations are added. */

TF_CAPI_EXPORT extern const char* TF_OperationName(TF_Operation* oper);
TF_CAPI_EXPORT extern const char* TF_OperationOpType(TF_Operation* oper);
TF_CAPI_EXPORT extern const char* TF_OperationDevice(TF_Operation* oper);

TF_CAPI_EXPORT extern int TF_OperationNumOutputs(TF_Operation* oper);
/* 0 (not a valid type) when the index is out of range. */
TF_CAPI_EXPORT extern TF_DataType TF_OperationOutputType(TF_Output oper_out);
/* How many outputs the op's output arg `arg_name` has on this operation (1 for a single
 * tensor, N or the type list's length for a list). INVALID_ARGUMENT for an unknown arg name;
 * -1 on error. */
TF_CAPI_EXPORT extern int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name,
                                                       TF_Status* status);

/* Data inputs only. */
TF_CAPI_EXPORT extern int TF_OperationNumInputs(TF_Operation* oper);
/* 0 (not a valid type) when the index is out of range. */
TF_CAPI_EXPORT extern TF_DataType TF_OperationInputType(TF_Input oper_in);
/* As TF_OperationOutputListLength, for the input arg `arg_name`. */
TF_CAPI_EXPORT extern int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name,
                                                      TF_Status* status);
/* The output feeding an input; {NULL, -1} when the index is out of range. */
TF_CAPI_EXPORT extern TF_Output TF_OperationInput(TF_Input oper_in);
/* Fills inputs[0, min(max_inputs, TF_OperationNumInputs(oper))) with the outputs feeding the
 * operation's data inputs, in input order. */
TF_CAPI_EXPORT extern void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs,
                                                 int max_inputs);

/* The inputs that read an output, now; 0 for an output that does not exist. */
TF_CAPI_EXPORT extern int TF_OperationOutputNumConsumers(TF_Output oper_out);
/* Fills consumers[0, min(max_consumers, n)) and returns n, the number of consumers. */
TF_CAPI_EXPORT extern int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers,
                                                      int max_consumers);

TF_CAPI_EXPORT extern int TF_OperationNumControlInputs(TF_Operation* oper);
/* Fills control_inputs[0, min(max_control_inputs, n)) and returns n, the number of control
 * inputs. */
TF_CAPI_EXPORT extern int TF_OperationGetControlInputs(TF_Operation* oper,
                                                       TF_Operation** control_inputs,
                                                       int max_control_inputs);
/* The operations that have `oper` as a control input, now. */
TF_CAPI_EXPORT extern int TF_OperationNumControlOutputs(TF_Operation* oper);
/* Fills control_outputs[0, min(max_control_outputs, n)) and returns n. */
TF_CAPI_EXPORT extern int TF_OperationGetControlOutputs(TF_Operation* oper,
                                                        TF_Operation** control_outputs,
                                                        int max_control_outputs);

/* ---------------------------------------------------------------------------------------- */
/* Attribute values. Every getter reports NOT_FOUND when the operation has no attr of that
 * name and INVALID_ARGUMENT when the attr holds another kind of value. */

/* What an attr holds and how large it is, so callers can size the buffers they pass below. */
typedef struct TF_AttrMetadata {
  /* 1 for a list value, 0 for a single value. */
  unsigned char is_list;
  /* Elements in the list; -1 for a single value. */
  int64_t list_size;
  /* The kind of the value, or of the list's elements. An empty list takes the kind its OpDef
   * declares. */
  TF_AttrType type;
  /* For a string: its length in bytes. For a string list: the lengths summed. For a shape: its
   * rank (-1 when unknown). For a shape list: the known ranks summed. Otherwise -1. */
  int64_t total_size;
} TF_AttrMetadata;

TF_CAPI_EXPORT extern TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper,
                                                                  const char* attr_name,
                                                                  TF_Status* status);
/* Copies the first min(max_length, length) bytes of a string attr (not NUL-terminated); the
 * length is TF_AttrMetadata.total_size. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name,
                                                     void* value, size_t max_length,
                                                     TF_Status* status);
/* The first min(max_values, list size) strings of a string-list attr: each is copied into
 * `storage` (storage_size bytes, one after another, not NUL-terminated) and values[i] and
 * lengths[i] say where. INVALID_ARGUMENT when storage runs out (entries before that one are
 * filled). list_size and total_size of TF_AttrMetadata are enough. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrStringList(TF_Operation* oper,
                                                         const char* attr_name, void** values,
                                                         size_t* lengths, int max_values,
                                                         void* storage, size_t storage_size,
                                                         TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name,
                                                  int64_t* value, TF_Status* status);
/* List getters fill values[0, min(max_values, list size)). */
TF_CAPI_EXPORT extern void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name,
                                                      int64_t* values, int max_values,
                                                      TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name,
                                                    float* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrFloatList(TF_Operation* oper,
                                                        const char* attr_name, float* values,
                                                        int max_values, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name,
                                                   unsigned char* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrBoolList(TF_Operation* oper,
                                                       const char* attr_name,
                                                       unsigned char* values, int max_values,
                                                       TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name,
                                                   TF_DataType* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrTypeList(TF_Operation* oper,
                                                       const char* attr_name,
                                                       TF_DataType* values, int max_values,
                                                       TF_Status* status);
/* Fills value[0, min(num_dims, rank)) with a shape attr's dims (-1 for unknown ones); nothing
 * for an unknown rank. The rank is TF_AttrMetadata.total_size. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name,
                                                    int64_t* value, int num_dims,
                                                    TF_Status* status);
/* For the first min(num_shapes, list size) shapes of a shape-list attr: num_dims[i] gets the
 * rank (-1 when unknown) and dims[i] points at that many dims copied into `storage`
 * (storage_size int64_t's, one shape after another). INVALID_ARGUMENT when storage runs out. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrShapeList(TF_Operation* oper,
                                                        const char* attr_name, int64_t** dims,
                                                        int* num_dims, int num_shapes,
                                                        int64_t* storage, int storage_size,
                                                        TF_Status* status);
/* A shape attr as a serialized TensorShapeProto, into an empty buffer. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper,
                                                               const char* attr_name,
                                                               TF_Buffer* value,
                                                               TF_Status* status);
/* values[i] (i < min(max_values, list size)) become new buffers, each a serialized
 * TensorShapeProto the caller deletes with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper,
                                                                   const char* attr_name,
                                                                   TF_Buffer** values,
                                                                   int max_values,
                                                                   TF_Status* status);
/* *value becomes a new tensor the caller owns (TF_DeleteTensor); a string tensor's TF_TString
 * elements are the library's, freed by TF_DeleteTensor. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name,
                                                     TF_Tensor** value, TF_Status* status);
/* values[i] (i < min(max_values, list size)) become new tensors the caller owns; on error none
 * are left allocated. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorList(TF_Operation* oper,
                                                         const char* attr_name,
                                                         TF_Tensor** values, int max_values,
                                                         TF_Status* status);
/* Any attr as a serialized AttrValue, into an empty buffer. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrValueProto(TF_Operation* oper,
                                                         const char* attr_name,
                                                         TF_Buffer* output_attr_value,
                                                         TF_Status* status);
/* The operation's attrs, in name order: how many, and the i-th name's length (-1 when i is out
 * of range) and bytes (copied into `output`, not NUL-terminated). */
TF_CAPI_EXPORT extern int TF_OperationGetNumAttrs(TF_Operation* oper);
TF_CAPI_EXPORT extern int TF_OperationGetAttrNameLength(TF_Operation* oper, int i);
TF_CAPI_EXPORT extern void TF_OperationGetAttrName(TF_Operation* oper, int i, char* output,
                                                   TF_Status* status);

/* The operation's NodeDef, serialized into an empty buffer. */
TF_CAPI_EXPORT extern void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def,
                                                 TF_Status* status);

/* NULL when no operation has that name. */
TF_CAPI_EXPORT extern TF_Operation* TF_GraphOperationByName(TF_Graph* graph,
                                                            const char* oper_name);
/* Iterates in insertion order: start with *pos = 0; NULL at the end. */
TF_CAPI_EXPORT extern TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos);

/* Serializes the graph as a GraphDef into an empty buffer (data NULL). */
TF_CAPI_EXPORT extern void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def,
                                              TF_Status* status);
/* The OpDef of a registered op or of a function in the graph's library, serialized into an
 * empty buffer; NOT_FOUND when there is neither. */
TF_CAPI_EXPORT extern void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name,
                                            TF_Buffer* output_op_def, TF_Status* status);
/* The graph's VersionDef, serialized into an empty buffer. */
TF_CAPI_EXPORT extern void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def,
                                            TF_Status* status);
/* Makes input dst.index of dst.oper read new_src instead, and infers dst's output shapes again.
 * INVALID_ARGUMENT for another dtype or an edge that would close a cycle, OUT_OF_RANGE for a bad
 * index, FAILED_PRECONDITION once a session runs the graph (it holds the old edges). */
TF_CAPI_EXPORT extern void TF_UpdateEdge(TF_Graph* graph, TF_Output new_src, TF_Input dst,
                                         TF_Status* status);
/* If `output` depends only on constants (no placeholder, argument, variable or stateful op
 * above it, its shape fully known, at most 1000 operations and a value of at most 10 MiB),
 * computes it, sets *result to a new tensor the caller deletes and returns 1. Otherwise
 * returns 0 with *result NULL: with OK status when the value is simply not constant, with the
 * error when computing it failed. */
TF_CAPI_EXPORT extern unsigned char TF_TryEvaluateConstant(TF_Graph* graph, TF_Output output,
                                                           TF_Tensor** result, TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* GraphDef import
 *
 *   TF_ImportGraphDefOptions* o = TF_NewImportGraphDefOptions();
 *   TF_ImportGraphDefOptionsSetPrefix(o, "imported");
 *   TF_ImportGraphDefOptionsAddInputMapping(o, "x", 0, existing_output);  (feed "x:0" from it)
 *   TF_ImportGraphDefOptionsAddReturnOutput(o, "y", 0);
 *   TF_ImportGraphDefResults* r = TF_GraphImportGraphDefWithResults(g, graph_def, o, s);
 *   TF_ImportGraphDefResultsReturnOutputs(r, &n, &outputs);      (outputs[0]: "imported/y:0")
 *   TF_DeleteImportGraphDefResults(r);  TF_DeleteImportGraphDefOptions(o);
 *
 * Names given to the options are the GraphDef's own (before any prefix); strings are copied.
 * Operations given must be in the graph imported into. */

typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;
TF_CAPI_EXPORT extern TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void);
TF_CAPI_EXPORT extern void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts);
/* Imported operations are named "prefix/name" (and their inputs renamed to match). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts,
                                                             const char* prefix);
/* The device of every imported node that names none. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts,
                                                                    const char* device);
/* Without a prefix: an imported name the graph already has becomes "name_1" (or the next free
 * "name_N") instead of an error. Default 0. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts,
                                                                    unsigned char uniquify_names);
/* With a prefix the graph already uses (as an operation name or a "prefix/" scope): use
 * "prefix_1" (or the next free "prefix_N") instead. Default 0. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetUniquifyPrefix(
    TF_ImportGraphDefOptions* opts, unsigned char uniquify_prefix);
/* Imported inputs that read "src_name:src_index" read `dst`, an output of the graph, instead.
 * The node src_name is still imported. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts,
                                                                   const char* src_name,
                                                                   int src_index, TF_Output dst);
/* Imported control inputs on src_name become control inputs on `dst` instead. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsRemapControlDependency(
    TF_ImportGraphDefOptions* opts, const char* src_name, TF_Operation* dst);
/* Every imported operation that has no input from another imported operation gets `oper` as
 * a control input (so the whole import runs after it). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddControlDependency(
    TF_ImportGraphDefOptions* opts, TF_Operation* oper);
/* Asks for the imported output "oper_name:index" in the results (the mapped output when an
 * input mapping replaces it). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts,
                                                                   const char* oper_name,
                                                                   int index);
TF_CAPI_EXPORT extern int TF_ImportGraphDefOptionsNumReturnOutputs(
    const TF_ImportGraphDefOptions* opts);
/* Asks for the imported operation oper_name in the results. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddReturnOperation(
    TF_ImportGraphDefOptions* opts, const char* oper_name);
TF_CAPI_EXPORT extern int TF_ImportGraphDefOptionsNumReturnOperations(
    const TF_ImportGraphDefOptions* opts);

/* What an import returned; arrays and strings below are owned by it. */
typedef struct TF_ImportGraphDefResults TF_ImportGraphDefResults;

/* The outputs asked for with TF_ImportGraphDefOptionsAddReturnOutput, in order. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results,
                                                                 int* num_outputs,
                                                                 TF_Output** outputs);
/* The operations asked for with TF_ImportGraphDefOptionsAddReturnOperation, in order. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsReturnOperations(
    TF_ImportGraphDefResults* results, int* num_opers, TF_Operation*** opers);
/* Input mappings no imported node used whose source tensor is not in the GraphDef either
 * (usually a misspelt name), as (src_names[i], src_indexes[i]). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsMissingUnusedInputMappings(
    TF_ImportGraphDefResults* results, int* num_missing_unused_input_mappings,
    const char*** src_names, int** src_indexes);
TF_CAPI_EXPORT extern void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results);

/* Adds the nodes (and functions) of a serialized GraphDef. All or nothing: on error the graph
 * is unchanged and NULL is returned. `options` may be NULL. */
TF_CAPI_EXPORT extern TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Status* status);
/* As above, with the return outputs copied to return_outputs[0, num_return_outputs), which
 * must equal TF_ImportGraphDefOptionsNumReturnOutputs(options). */
TF_CAPI_EXPORT extern void TF_GraphImportGraphDefWithReturnOutputs(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Output* return_outputs, int num_return_outputs, TF_Status* status);
/* As above, without results. */
TF_CAPI_EXPORT extern void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                                                  const TF_ImportGraphDefOptions* options,
                                                  TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* While loops. TF_NewWhile makes a cond graph and a body graph whose inputs (cond_inputs,
 * body_inputs) are placeholders typed as `inputs`; the caller builds cond_output (a bool
 * scalar) in the cond graph and body_outputs[i] (typed as input i) in the body graph, may set
 * `name` (default "while"), then calls TF_FinishWhile, which adds the loop to `g` and sets
 * outputs[i] (ninputs of them) to the loop's final values, or TF_AbortWhile. Either frees the
 * params and their graphs. The loop is one TensorFlow "While" op whose cond and body are
 * functions of g's library (named <name>_cond_<hash>, <name>_body_<hash>). */

typedef struct TF_WhileParams {
  const int ninputs;
  TF_Graph* const cond_graph;
  const TF_Output* const cond_inputs;
  TF_Output cond_output;
  TF_Graph* const body_graph;
  const TF_Output* const body_inputs;
  TF_Output* const body_outputs;
  const char* name;
} TF_WhileParams;

/* INVALID_ARGUMENT for no inputs or an input not in g; the params are then empty and need
 * neither TF_FinishWhile nor TF_AbortWhile. */
TF_CAPI_EXPORT extern TF_WhileParams TF_NewWhile(TF_Graph* g, TF_Output* inputs, int ninputs,
                                                 TF_Status* status);
TF_CAPI_EXPORT extern void TF_FinishWhile(const TF_WhileParams* params, TF_Status* status,
                                          TF_Output* outputs);
TF_CAPI_EXPORT extern void TF_AbortWhile(const TF_WhileParams* params);

TF_CAPI_EXPORT extern void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x,
                                           int nx, TF_Output* dx, TF_Status* status,
                                           TF_Output* dy);
TF_CAPI_EXPORT extern void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix,
                                                     TF_Output* y, int ny, TF_Output* x, int nx,
                                                     TF_Output* dx, TF_Status* status,
                                                     TF_Output* dy);

/* ---------------------------------------------------------------------------------------- */
/* Sessions */

typedef struct TF_Session TF_Session;

/* A session over `graph`, which must outlive it (TF_DeleteGraph waits for its sessions).
 * Operations added to the graph later become runnable at the next TF_SessionRun. */
TF_CAPI_EXPORT extern TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts,
                                                TF_Status* status);
TF_CAPI_EXPORT extern void TF_CloseSession(TF_Session*, TF_Status* status);
/* Closes the session if needed and frees it. */
TF_CAPI_EXPORT extern void TF_DeleteSession(TF_Session*, TF_Status* status);

/* Feeds inputs[i] with input_values[i] (still owned by the caller), computes outputs into
 * output_values[i] (new tensors owned by the caller; NULL on error) and runs target_opers.
 * TF_STRING values are copied both ways; a fed TF_TString that is malformed (a size over what
 * its representation holds, a null pointer with bytes, an OFFSET outside the tensor's data) is
 * INVALID_ARGUMENT.
 * run_options (serialized RunOptions) may be NULL; run_metadata, when not NULL, must be an
 * empty buffer and receives a serialized RunMetadata. */
TF_CAPI_EXPORT extern void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options,
                                         const TF_Output* inputs, TF_Tensor* const* input_values,
                                         int ninputs, const TF_Output* outputs,
                                         TF_Tensor** output_values, int noutputs,
                                         const TF_Operation* const* target_opers, int ntargets,
                                         TF_Buffer* run_metadata, TF_Status*);

/* Partial runs: one step fed and fetched over several calls. TF_SessionPRunSetup declares every
 * feed, fetch and target the calls will use and sets *handle (free it with
 * TF_DeletePRunHandle); each TF_SessionPRun then feeds some declared inputs not fed before,
 * fetches declared outputs not fetched before, and runs the declared targets whose feeds have
 * all arrived (a target it names itself must be able to run). Anything undeclared, fed or
 * fetched twice, or needing a feed not given yet is INVALID_ARGUMENT. A call computes only
 * what lies between the values known so far (earlier feeds and fetches) and its fetches; an
 * operation above a fetch that an earlier call did not fetch may run again. The run ends once
 * everything declared is fed, fetched and run; its handle is then unknown to TF_SessionPRun. */
TF_CAPI_EXPORT extern void TF_SessionPRunSetup(TF_Session*, const TF_Output* inputs, int ninputs,
                                               const TF_Output* outputs, int noutputs,
                                               const TF_Operation* const* target_opers,
                                               int ntargets, const char** handle, TF_Status*);
TF_CAPI_EXPORT extern void TF_SessionPRun(TF_Session*, const char* handle,
                                          const TF_Output* inputs, TF_Tensor* const* input_values,
                                          int ninputs, const TF_Output* outputs,
                                          TF_Tensor** output_values, int noutputs,
                                          const TF_Operation* const* target_opers, int ntargets,
                                          TF_Status*);
/* Frees a handle from TF_SessionPRunSetup; NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeletePRunHandle(const char* handle);

/* Devices a session can place operations on. */
typedef struct TF_DeviceList TF_DeviceList;

/* ---------------------------------------------------------------------------------------- */
/* The deprecated session API, for programs written before TF_Graph: the session keeps a graph
 * of its own, which TF_ExtendGraph extends with a serialized GraphDef (names must be new).
 * Runs name tensors as "op:index" ("op" for index 0) and targets by operation name. TF_Run and
 * TF_PRun take ownership of their input tensors (they are deleted whether the call succeeds or
 * not); outputs are new tensors the caller deletes, NULL on failure. TF_Reset of the in-process
 * target ("" or "local") succeeds and clears nothing, as Sluice's sessions share no
 * containers; of a remote target it is UNIMPLEMENTED. */
typedef struct TF_DeprecatedSession TF_DeprecatedSession;

TF_CAPI_EXPORT extern TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions*,
                                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TF_CloseDeprecatedSession(TF_DeprecatedSession*, TF_Status* status);
TF_CAPI_EXPORT extern void TF_DeleteDeprecatedSession(TF_DeprecatedSession*, TF_Status* status);
TF_CAPI_EXPORT extern void TF_Reset(const TF_SessionOptions* opt, const char** containers,
                                    int ncontainers, TF_Status* status);
TF_CAPI_EXPORT extern void TF_ExtendGraph(TF_DeprecatedSession*, const void* proto,
                                          size_t proto_len, TF_Status*);
TF_CAPI_EXPORT extern void TF_Run(TF_DeprecatedSession*, const TF_Buffer* run_options,
                                  const char** input_names, TF_Tensor** inputs, int ninputs,
                                  const char** output_names, TF_Tensor** outputs, int noutputs,
                                  const char** target_oper_names, int ntargets,
                                  TF_Buffer* run_metadata, TF_Status*);
TF_CAPI_EXPORT extern void TF_PRunSetup(TF_DeprecatedSession*, const char** input_names,
                                        int ninputs, const char** output_names, int noutputs,
                                        const char** target_oper_names, int ntargets,
                                        const char** handle, TF_Status*);
TF_CAPI_EXPORT extern void TF_PRun(TF_DeprecatedSession*, const char* handle,
                                   const char** input_names, TF_Tensor** inputs, int ninputs,
                                   const char** output_names, TF_Tensor** outputs, int noutputs,
                                   const char** target_oper_names, int ntargets, TF_Status*);
/* Loads the SavedModel in `export_dir` (its saved_model.pb) whose tag set is exactly `tags`:
 * imports its graph into `graph` (empty, new), makes a session over it, restores its variables
 * with its saver's restore op and runs its init op. `meta_graph_def` (optional, an empty
 * TF_Buffer) receives the serialized MetaGraphDef, signatures included. `run_options` is
 * accepted and ignored. */
TF_CAPI_EXPORT extern TF_Session* TF_LoadSessionFromSavedModel(
    const TF_SessionOptions* session_options, const TF_Buffer* run_options, const char* export_dir,
    const char* const* tags, int tags_len, TF_Graph* graph, TF_Buffer* meta_graph_def,
    TF_Status* status);

TF_CAPI_EXPORT extern TF_DeviceList* TF_DeprecatedSessionListDevices(TF_DeprecatedSession* session,
                                                                     TF_Status* status);

TF_CAPI_EXPORT extern TF_DeviceList* TF_SessionListDevices(TF_Session* session,
                                                           TF_Status* status);
TF_CAPI_EXPORT extern void TF_DeleteDeviceList(TF_DeviceList* list);
TF_CAPI_EXPORT extern int TF_DeviceListCount(const TF_DeviceList* list);
/* Full name, e.g. "/job:localhost/replica:0/task:0/device:CPU:0"; owned by the list. */
TF_CAPI_EXPORT extern const char* TF_DeviceListName(const TF_DeviceList* list, int index,
                                                    TF_Status* status);
/* "CPU", ...; owned by the list. */
TF_CAPI_EXPORT extern const char* TF_DeviceListType(const TF_DeviceList* list, int index,
                                                    TF_Status* status);
TF_CAPI_EXPORT extern int64_t TF_DeviceListMemoryBytes(const TF_DeviceList* list, int index,
                                                       TF_Status* status);
TF_CAPI_EXPORT extern uint64_t TF_DeviceListIncarnation(const TF_DeviceList* list, int index,
                                                        TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* The op registry and custom-op libraries
 *
 *   TF_Library* lib = TF_LoadLibrary("./my_ops.so", status);   (its REGISTER_OPs run)
 *   TF_Buffer ops = TF_GetOpList(lib);                         (serialized OpList)
 *   TF_DeleteLibraryHandle(lib);                               (the library stays loaded)
 */

typedef struct TF_Library TF_Library;

/* Loads a shared object (dlopen, RTLD_NOW | RTLD_LOCAL) so that its static op and kernel
 * registrations run. Loading the same file again returns a new handle over the same ops.
 * NOT_FOUND, with the loader's message, when it cannot be loaded; NULL on error. */
TF_CAPI_EXPORT extern TF_Library* TF_LoadLibrary(const char* library_filename,
                                                 TF_Status* status);
/* The OpList (serialized) of the ops the library registered. The bytes are owned by the
 * handle. */
TF_CAPI_EXPORT extern TF_Buffer TF_GetOpList(TF_Library* lib_handle);
/* Frees the handle; the library stays loaded and its ops registered. */
TF_CAPI_EXPORT extern void TF_DeleteLibraryHandle(TF_Library* lib_handle);
/* Every registered op as a serialized OpList, in a new buffer the caller deletes with
 * TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllOpList(void);
/* Every registered kernel, or those of one op, as a serialized KernelList, in a new buffer the
 * caller deletes with TF_DeleteBuffer (empty for an op without kernels). */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status);
TF_CAPI_EXPORT extern TF_Buffer* TF_GetRegisteredKernelsForOp(const char* name, TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* Functions: a graph's operations made into a function of its library
 *
 *   TF_Function* f = TF_GraphToFunction(body, "AddOne", 0, -1, NULL, 1, &x, 1, &y, NULL,
 *                                        NULL, NULL, status);  (x: a Placeholder's output)
 *   TF_GraphCopyFunction(g, f, NULL, status);   (g's library now has "AddOne")
 *   (an If op of g with then_branch "AddOne" calls it; TF_GraphToGraphDef has it)
 *   TF_DeleteFunction(f);
 *
 * A function is a FunctionDef (proto/function.proto) as Sluice's runtime runs it: its
 * signature, and a body of NodeDefs in GraphDef syntax ("node" or "node:k" inputs) where an
 * _Arg node (attr index) stands for each input and a _Retval node for each output; `ret` is
 * left empty. TF_FunctionImportFunctionDef takes such FunctionDefs. Sluice has no op that calls
 * a library function by its name: functions run as the branches and bodies of the functional
 * ops (If, Loop, Scan), so TF_NewOperation(g, "AddOne", ...) is refused. */

typedef struct TF_Function TF_Function;
/* Declared for TensorFlow's signatures; no options are defined (pass NULL). */
typedef struct TF_FunctionOptions TF_FunctionOptions;

/* A new function, for the caller to delete, named fn_name (with "_" and a hash of its contents
 * appended when append_hash_to_fn_name is nonzero). Its body is the num_opers operations in
 * opers, or with num_opers -1 every operation of fn_body except those whose outputs are
 * inputs (each must then have exactly one output). Each of the ninputs inputs becomes an
 * argument (in order) that replaces that tensor in the body; each of the noutputs outputs a
 * result, named output_names[i] (or "output<i>" when output_names is NULL). Every data input
 * of a body operation must be a function input or an output of a body operation; control
 * inputs from outside the body are dropped. INVALID_ARGUMENT otherwise; NULL on error.
 * `opts` must be NULL; `description` (may be NULL) becomes the signature's summary. */
TF_CAPI_EXPORT extern TF_Function* TF_GraphToFunction(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names,
    const TF_FunctionOptions* opts, const char* description, TF_Status* status);
/* The same, with ncontrol_outputs body operations that must run whenever the function does,
 * named control_output_names[i] (the signature's control_output, the FunctionDef's
 * control_ret). */
TF_CAPI_EXPORT extern TF_Function* TF_GraphToFunctionWithControlOutputs(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names,
    int ncontrol_outputs, const TF_Operation* const* control_outputs,
    const char* const* control_output_names, const TF_FunctionOptions* opts,
    const char* description, TF_Status* status);
/* The function's name, owned by the function. */
TF_CAPI_EXPORT extern const char* TF_FunctionName(TF_Function* func);
/* The serialized FunctionDef, into output_func_def. */
TF_CAPI_EXPORT extern void TF_FunctionToFunctionDef(TF_Function* func,
                                                    TF_Buffer* output_func_def,
                                                    TF_Status* status);
/* A new function from a serialized FunctionDef; INVALID_ARGUMENT for bytes that are not one
 * or a FunctionDef without a name. NULL on error. */
TF_CAPI_EXPORT extern TF_Function* TF_FunctionImportFunctionDef(const void* proto,
                                                                size_t proto_len,
                                                                TF_Status* status);
/* Sets (replaces) the function's attr attr_name to a serialized AttrValue. */
TF_CAPI_EXPORT extern void TF_FunctionSetAttrValueProto(TF_Function* func, const char* attr_name,
                                                        const void* proto, size_t proto_len,
                                                        TF_Status* status);
/* The function's attr attr_name, serialized; INVALID_ARGUMENT when it has none. */
TF_CAPI_EXPORT extern void TF_FunctionGetAttrValueProto(TF_Function* func, const char* attr_name,
                                                        TF_Buffer* output_attr_value,
                                                        TF_Status* status);
/* NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeleteFunction(TF_Function* func);

/* Adds func, and grad (may be NULL) as its gradient, to g's library. A function of the same
 * name already there must be the same function (nothing is added), else INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_GraphCopyFunction(TF_Graph* g, const TF_Function* func,
                                                const TF_Function* grad, TF_Status* status);
/* How many functions g's library holds. */
TF_CAPI_EXPORT extern int TF_GraphNumFunctions(TF_Graph* g);
/* Fills funcs with new copies (the caller deletes each) of the first max_func functions of g's
 * library, in the order they were added; returns how many it wrote. */
TF_CAPI_EXPORT extern int TF_GraphGetFunctions(TF_Graph* g, TF_Function** funcs, int max_func,
                                               TF_Status* status);

/* ---------------------------------------------------------------------------------------- */
/* Servers: one task of a cluster in this process, as `sluice serve` runs it
 *
 *   TF_Server* server = TF_NewServer(server_def, server_def_len, status);  (a ServerDef)
 *   TF_ServerStart(server, status);
 *   TF_SetTarget(session_options, TF_ServerTarget(server));   ("grpc://host:port")
 *   ...
 *   TF_ServerStop(server, status);
 *   TF_DeleteServer(server);
 *
 * The ServerDef names the cluster, this task (job_name, task_index) and protocol "grpc" (or
 * none); a nonzero `port` replaces the port of the task's address, and port 0 in the address
 * binds a free port (TF_ServerTarget says which, once started). default_session_config's
 * device_count["CPU"] and inter/intra-op thread counts size the task.
 *
 * Every call must be authenticated, as with `sluice serve`: the cluster secret
 * (SLUICE_CLUSTER_SECRET or SLUICE_CLUSTER_SECRET_FILE: mutual TLS derived from it, the secret
 * never sent) or TLS files (SLUICE_TLS_CERT, SLUICE_TLS_KEY, SLUICE_TLS_CA) come from the
 * environment, which this process's sessions read too. Without any, TF_NewServer is refused with FAILED_PRECONDITION unless
 * SLUICE_INSECURE=1 is set (the equivalent of `sluice serve --insecure`: anyone who reaches
 * the port may run graphs). */

typedef struct TF_Server TF_Server;

/* A new server, not yet serving; INVALID_ARGUMENT for bytes that are not a ServerDef or a
 * ServerDef without this task. NULL on error. */
TF_CAPI_EXPORT extern TF_Server* TF_NewServer(const void* proto, size_t proto_len,
                                              TF_Status* status);
/* Binds the task's address and serves; UNAVAILABLE when it cannot be bound,
 * FAILED_PRECONDITION when already started or stopped. */
TF_CAPI_EXPORT extern void TF_ServerStart(TF_Server* server, TF_Status* status);
/* Stops serving (calls under way get a short grace period); idempotent. */
TF_CAPI_EXPORT extern void TF_ServerStop(TF_Server* server, TF_Status* status);
/* Blocks until the server is stopped (by TF_ServerStop from another thread);
 * FAILED_PRECONDITION for a server never started. */
TF_CAPI_EXPORT extern void TF_ServerJoin(TF_Server* server, TF_Status* status);
/* "grpc://host:port", owned by the server; the bound port once started. */
TF_CAPI_EXPORT extern const char* TF_ServerTarget(TF_Server* server);
/* Stops the server if needed and frees it; NULL is allowed. */
TF_CAPI_EXPORT extern void TF_DeleteServer(TF_Server* server);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_C_API_H_ */
