/* Sluice's C API: TensorFlow's C session API (names, signatures, enum values), so a program
 * written against TensorFlow's c_api.h compiles unchanged and runs on Sluice.
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
 * - Objects are opaque and created/destroyed through TF_New.../TF_Delete... calls.
 * - Every call taking a TF_Status* sets it: TF_OK on success, a code and message on failure.
 *   Misuse (null pointers, indices out of range, malformed protos) is reported through the
 *   status rather than crashing where a status is available.
 * - Booleans are unsigned char.
 * - Tensors passed in stay owned by the caller; tensors handed out are new and the caller
 *   deletes them with TF_DeleteTensor. Session outputs are not copied: they may share memory
 *   with values the runtime keeps (a Const's value, a fed tensor), so treat their data as
 *   read-only.
 *
 * Limitations: TF_STRING tensors cannot cross this API (TF_NewTensor and TF_AllocateTensor
 * return NULL for them, and TF_SessionRun reports UNIMPLEMENTED when a fetched value is a
 * string). Partial runs, SavedModel loading, while loops, functions, gradients and the attr
 * getters (TF_OperationGetAttr*) are not provided.
 *
 * Thread safety: a TF_Graph may be read and extended from several threads; a TF_Session may
 * run from several threads at once. A TF_OperationDescription belongs to one thread.
 *
 * Sluice's own extensions (SL_*: ONNX import, training) are declared in c_api/sluice_c_api.h. */
#ifndef SLUICE_C_API_C_API_H_
#define SLUICE_C_API_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define TF_CAPI_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Version */

/* The library's version string, e.g. "0.1.0-sluice". Never NULL; owned by the library. */
TF_CAPI_EXPORT extern const char* TF_Version(void);

/* ---------------------------------------------------------------------------------------- */
/* Element types: TensorFlow's DataType numbers (identical to sluice::DataType). */

typedef enum TF_DataType {
  TF_FLOAT = 1,
  TF_DOUBLE = 2,
  TF_INT32 = 3, /* int32_t */
  TF_UINT8 = 4,
  TF_INT16 = 5,
  TF_INT8 = 6,
  TF_STRING = 7, /* not supported across the C API, see above */
  TF_COMPLEX64 = 8,
  TF_COMPLEX = 8, /* old name for TF_COMPLEX64 */
  TF_INT64 = 9,
  TF_BOOL = 10,
  TF_QINT8 = 11,
  TF_QUINT8 = 12,
  TF_QINT32 = 13,
  TF_BFLOAT16 = 14,
  TF_QINT16 = 15,
  TF_QUINT16 = 16,
  TF_UINT16 = 17,
  TF_COMPLEX128 = 18,
  TF_HALF = 19,
  TF_RESOURCE = 20,
  TF_VARIANT = 21,
  TF_UINT32 = 22,
  TF_UINT64 = 23
} TF_DataType;

/* Bytes per element; 0 for types without a fixed size (TF_STRING, TF_RESOURCE, ...). */
TF_CAPI_EXPORT extern size_t TF_DataTypeSize(TF_DataType dt);

/* ---------------------------------------------------------------------------------------- */
/* Status: TensorFlow's error codes (identical to absl::StatusCode). */

typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_UNAUTHENTICATED = 16,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15
} TF_Code;

typedef struct TF_Status TF_Status;

/* A new status, initially TF_OK. */
TF_CAPI_EXPORT extern TF_Status* TF_NewStatus(void);
TF_CAPI_EXPORT extern void TF_DeleteStatus(TF_Status*);
/* Sets code and message (msg is copied; NULL means empty). TF_OK clears the message. */
TF_CAPI_EXPORT extern void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg);
TF_CAPI_EXPORT extern TF_Code TF_GetCode(const TF_Status* s);
/* The message, "" when OK. Valid until the status is next modified or deleted. */
TF_CAPI_EXPORT extern const char* TF_Message(const TF_Status* s);

/* ---------------------------------------------------------------------------------------- */
/* Buffers: serialized protos passed in and out. */

typedef struct TF_Buffer {
  const void* data;
  size_t length;
  /* Called by TF_DeleteBuffer with (data, length) when not NULL. */
  void (*data_deallocator)(void* data, size_t length);
} TF_Buffer;

/* A buffer holding a copy of proto[0, proto_len). */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len);
/* An empty buffer, to be filled by calls such as TF_GraphToGraphDef. */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBuffer(void);
TF_CAPI_EXPORT extern void TF_DeleteBuffer(TF_Buffer*);
TF_CAPI_EXPORT extern TF_Buffer TF_GetBuffer(TF_Buffer* buffer);

/* ---------------------------------------------------------------------------------------- */
/* Tensors */

typedef struct TF_Tensor TF_Tensor;

/* Wraps `data` (len bytes) without copying; `deallocator(data, len, deallocator_arg)` runs once
 * the tensor and every value shared with it (for example session outputs that forward it) are
 * gone. Returns NULL, without calling the deallocator, for TF_STRING and other types without a
 * fixed element size, negative dims, or len smaller than the shape needs. */
TF_CAPI_EXPORT extern TF_Tensor* TF_NewTensor(TF_DataType, const int64_t* dims, int num_dims,
                                              void* data, size_t len,
                                              void (*deallocator)(void* data, size_t len,
                                                                  void* arg),
                                              void* deallocator_arg);
/* A tensor with uninitialized, 64-byte-aligned contents. `len` must equal the element count
 * times TF_DataTypeSize; NULL otherwise and for TF_STRING. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTensor(TF_DataType, const int64_t* dims, int num_dims,
                                                   size_t len);
TF_CAPI_EXPORT extern void TF_DeleteTensor(TF_Tensor*);
TF_CAPI_EXPORT extern TF_DataType TF_TensorType(const TF_Tensor*);
TF_CAPI_EXPORT extern int TF_NumDims(const TF_Tensor*);
/* Size of dimension dim_index; -1 when the index is out of range. */
TF_CAPI_EXPORT extern int64_t TF_Dim(const TF_Tensor* tensor, int dim_index);
TF_CAPI_EXPORT extern size_t TF_TensorByteSize(const TF_Tensor*);
/* The contents, in row-major order. May be NULL for tensors with no elements. */
TF_CAPI_EXPORT extern void* TF_TensorData(const TF_Tensor*);
TF_CAPI_EXPORT extern int64_t TF_TensorElementCount(const TF_Tensor* tensor);

/* ---------------------------------------------------------------------------------------- */
/* Session options */

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

/* Rank of an output from the ops' shape functions; -1 when unknown. */
TF_CAPI_EXPORT extern int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output,
                                                   TF_Status* status);
/* Fills dims[0, num_dims) with the inferred dims (-1 when unknown). num_dims must equal the
 * rank when the rank is known. */
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
/* Copies the tensor's contents; `value` stays owned by the caller. */
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

/* Accessors. Strings are owned by the graph. */
TF_CAPI_EXPORT extern const char* TF_OperationName(TF_Operation* oper);
TF_CAPI_EXPORT extern const char* TF_OperationOpType(TF_Operation* oper);
TF_CAPI_EXPORT extern const char* TF_OperationDevice(TF_Operation* oper);
TF_CAPI_EXPORT extern int TF_OperationNumOutputs(TF_Operation* oper);
/* 0 (not a valid type) when the index is out of range. */
TF_CAPI_EXPORT extern TF_DataType TF_OperationOutputType(TF_Output oper_out);
/* Data inputs only. */
TF_CAPI_EXPORT extern int TF_OperationNumInputs(TF_Operation* oper);
TF_CAPI_EXPORT extern TF_DataType TF_OperationInputType(TF_Input oper_in);
/* The output feeding an input; {NULL, -1} when the index is out of range. */
TF_CAPI_EXPORT extern TF_Output TF_OperationInput(TF_Input oper_in);
TF_CAPI_EXPORT extern int TF_OperationNumControlInputs(TF_Operation* oper);
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

typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;
TF_CAPI_EXPORT extern TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void);
TF_CAPI_EXPORT extern void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts);
/* Imported nodes are named "prefix/name" (and their inputs renamed to match). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts,
                                                             const char* prefix);

/* Adds the nodes of a serialized GraphDef. All or nothing: on error the graph is unchanged.
 * `options` may be NULL. */
TF_CAPI_EXPORT extern void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                                                  const TF_ImportGraphDefOptions* options,
                                                  TF_Status* status);

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
 * run_options (serialized RunOptions) may be NULL; run_metadata, when not NULL, must be an
 * empty buffer and receives a serialized RunMetadata. */
TF_CAPI_EXPORT extern void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options,
                                         const TF_Output* inputs, TF_Tensor* const* input_values,
                                         int ninputs, const TF_Output* outputs,
                                         TF_Tensor** output_values, int noutputs,
                                         const TF_Operation* const* target_opers, int ntargets,
                                         TF_Buffer* run_metadata, TF_Status*);

/* Devices a session can place operations on. */
typedef struct TF_DeviceList TF_DeviceList;

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_C_API_C_API_H_ */
