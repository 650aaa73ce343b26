/* TensorFlow's eager C API on Sluice: operations run one at a time, as they are called, with
 * TensorFlow's names and signatures, so bindings written against TensorFlow's
 * "tensorflow/c/eager/c_api.h" (TensorFlow.js's Node backend among them) compile unchanged
 * with `-I <sluice>/c_api/include` and link with `-ltensorflow`.
 *
 *   TFE_ContextOptions* opts = TFE_NewContextOptions();
 *   TFE_Context* ctx = TFE_NewContext(opts, s);
 *   TFE_TensorHandle* a = TFE_NewTensorHandle(t, s);        (t: a TF_Tensor; not consumed)
 *   TFE_Op* op = TFE_NewOp(ctx, "AddV2", s);
 *   TFE_OpAddInput(op, a, s); TFE_OpAddInput(op, a, s);       ("T" is taken from the inputs)
 *   TFE_TensorHandle* sum; int n = 1;
 *   TFE_Execute(op, &sum, &n, s);
 *   TF_Tensor* value = TFE_TensorHandleResolve(sum, s);
 *
 * What happens underneath: TFE_Execute completes the op's attrs (type, number and type-list
 * attrs from the inputs, then the OpDef's defaults), looks up a kernel prepared for that op,
 * those attrs and those input types (made and checked once, then kept by the context) and runs
 * it on the calling thread with the context's intra-op threads. No graph is built per call.
 * Ops with function attrs (If, While, PartitionedCall, ...) and functions added with
 * TFE_ContextAddFunction* run through a small executor, also prepared once per signature.
 *
 * Conventions, as in TensorFlow: handles are immutable values; a TFE_Op takes its own reference
 * on the handles added to it, so they may be deleted before TFE_Execute; TFE_OpSetAttr* have no
 * status, so a misused attr (wrong kind, value outside the allowed set, unknown name) is
 * reported by TFE_Execute, naming the op and the attr. Everything runs on the CPU device
 * ("/job:localhost/replica:0/task:0/device:CPU:0"); asynchronous execution is accepted as an
 * option and runs synchronously (results are ready when TFE_Execute returns). Contexts, ops and
 * handles may be used from several threads, each TFE_Op by one thread at a time. */
#ifndef SLUICE_TENSORFLOW_C_EAGER_C_API_H_
#define SLUICE_TENSORFLOW_C_EAGER_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "../c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Contexts ---- */

typedef struct TFE_ContextOptions TFE_ContextOptions;

TF_CAPI_EXPORT extern TFE_ContextOptions* TFE_NewContextOptions(void);

/* A serialized ConfigProto: intra_op_parallelism_threads sizes the team kernels use (default:
 * every core). */
TF_CAPI_EXPORT extern void TFE_ContextOptionsSetConfig(TFE_ContextOptions* options,
                                                       const void* proto, size_t proto_len,
                                                       TF_Status* status);

/* Accepted; operations still complete before TFE_Execute returns. */
TF_CAPI_EXPORT extern void TFE_ContextOptionsSetAsync(TFE_ContextOptions*, unsigned char enable);

typedef enum TFE_ContextDevicePlacementPolicy {
  TFE_DEVICE_PLACEMENT_EXPLICIT = 0,
  TFE_DEVICE_PLACEMENT_WARN = 1,
  TFE_DEVICE_PLACEMENT_SILENT = 2,
  TFE_DEVICE_PLACEMENT_SILENT_FOR_INT32 = 3,
} TFE_ContextDevicePlacementPolicy;

TF_CAPI_EXPORT extern void TFE_ContextOptionsSetDevicePlacementPolicy(
    TFE_ContextOptions*, TFE_ContextDevicePlacementPolicy);

TF_CAPI_EXPORT extern void TFE_DeleteContextOptions(TFE_ContextOptions*);

typedef struct TFE_Context TFE_Context;

TF_CAPI_EXPORT extern TFE_Context* TFE_NewContext(const TFE_ContextOptions* opts,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteContext(TFE_Context* ctx);
TF_CAPI_EXPORT extern TF_DeviceList* TFE_ContextListDevices(TFE_Context* ctx, TF_Status* status);
/* Drops the prepared kernels (they are made again on use). */
TF_CAPI_EXPORT extern void TFE_ContextClearCaches(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextSetThreadLocalDevicePlacementPolicy(
    TFE_Context* ctx, TFE_ContextDevicePlacementPolicy policy);
TF_CAPI_EXPORT extern TFE_ContextDevicePlacementPolicy TFE_ContextGetDevicePlacementPolicy(
    TFE_Context* ctx);
/* UNIMPLEMENTED: eager execution is local. */
TF_CAPI_EXPORT extern void TFE_ContextSetServerDef(TFE_Context* ctx, int keep_alive_secs,
                                                   const void* proto, size_t proto_len,
                                                   TF_Status* status);

/* ---- Tensor handles ---- */

typedef struct TFE_TensorHandle TFE_TensorHandle;

/* A handle on `t`'s value (numbers share its buffer; `t` stays the caller's). */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewTensorHandle(const TF_Tensor* t,
                                                            TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteTensorHandle(TFE_TensorHandle* h);
TF_CAPI_EXPORT extern TF_DataType TFE_TensorHandleDataType(TFE_TensorHandle* h);
TF_CAPI_EXPORT extern int TFE_TensorHandleNumDims(TFE_TensorHandle* h, TF_Status* status);
TF_CAPI_EXPORT extern int64_t TFE_TensorHandleNumElements(TFE_TensorHandle* h,
                                                          TF_Status* status);
TF_CAPI_EXPORT extern int64_t TFE_TensorHandleDim(TFE_TensorHandle* h, int dim_index,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern const char* TFE_TensorHandleDeviceName(TFE_TensorHandle* h,
                                                             TF_Status* status);
TF_CAPI_EXPORT extern const char* TFE_TensorHandleBackingDeviceName(TFE_TensorHandle* h,
                                                                    TF_Status* status);
/* Another handle on the same value. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_TensorHandleCopySharingTensor(TFE_TensorHandle* h,
                                                                          TF_Status* status);
/* A new TF_Tensor with the handle's value, for the caller to delete. Numbers share the
 * handle's buffer (read-only); TF_STRING elements are copied. */
TF_CAPI_EXPORT extern TF_Tensor* TFE_TensorHandleResolve(TFE_TensorHandle* h, TF_Status* status);
/* A handle on `device_name` (a CPU device name, or NULL/"" for the context's CPU). */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_TensorHandleCopyToDevice(TFE_TensorHandle* h,
                                                                     TFE_Context* ctx,
                                                                     const char* device_name,
                                                                     TF_Status* status);

typedef struct TFE_TensorDebugInfo TFE_TensorDebugInfo;
TF_CAPI_EXPORT extern TFE_TensorDebugInfo* TFE_TensorHandleTensorDebugInfo(TFE_TensorHandle* h,
                                                                           TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteTensorDebugInfo(TFE_TensorDebugInfo* debug_info);
TF_CAPI_EXPORT extern int TFE_TensorDebugInfoOnDeviceNumDims(TFE_TensorDebugInfo* debug_info);
TF_CAPI_EXPORT extern int64_t TFE_TensorDebugInfoOnDeviceDim(TFE_TensorDebugInfo* debug_info,
                                                             int dim_index);

/* ---- Operations ---- */

typedef struct TFE_Op TFE_Op;

/* NOT_FOUND when no op and no function of the context has that name. */
TF_CAPI_EXPORT extern TFE_Op* TFE_NewOp(TFE_Context* ctx, const char* op_or_function_name,
                                        TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteOp(TFE_Op* op);
TF_CAPI_EXPORT extern const char* TFE_OpGetName(const TFE_Op* op, TF_Status* status);
TF_CAPI_EXPORT extern TFE_Context* TFE_OpGetContext(const TFE_Op* op, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_OpSetDevice(TFE_Op* op, const char* device_name,
                                           TF_Status* status);
TF_CAPI_EXPORT extern const char* TFE_OpGetDevice(const TFE_Op* op, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_OpAddInput(TFE_Op* op, TFE_TensorHandle* input, TF_Status* status);
/* The inputs of one list argument (sets its number or type-list attr). */
TF_CAPI_EXPORT extern void TFE_OpAddInputList(TFE_Op* op, TFE_TensorHandle** inputs,
                                              int num_inputs, TF_Status* status);
TF_CAPI_EXPORT extern int TFE_OpGetFlatInputCount(const TFE_Op* op, TF_Status* status);
/* Borrowed: valid while the op is. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_OpGetFlatInput(const TFE_Op* op, int index,
                                                           TF_Status* status);
TF_CAPI_EXPORT extern TF_AttrType TFE_OpGetAttrType(TFE_Op* op, const char* attr_name,
                                                    unsigned char* is_list, TF_Status* status);
TF_CAPI_EXPORT extern TF_AttrType TFE_OpNameGetAttrType(TFE_Context* ctx,
                                                        const char* op_or_function_name,
                                                        const char* attr_name,
                                                        unsigned char* is_list,
                                                        TF_Status* status);

TF_CAPI_EXPORT extern void TFE_OpSetAttrString(TFE_Op* op, const char* attr_name,
                                               const void* value, size_t length);
TF_CAPI_EXPORT extern void TFE_OpSetAttrInt(TFE_Op* op, const char* attr_name, int64_t value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFloat(TFE_Op* op, const char* attr_name, float value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrBool(TFE_Op* op, const char* attr_name,
                                             unsigned char value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrType(TFE_Op* op, const char* attr_name,
                                             TF_DataType value);
/* num_dims -1: unknown rank; a dim of -1: unknown size. */
TF_CAPI_EXPORT extern void TFE_OpSetAttrShape(TFE_Op* op, const char* attr_name,
                                              const int64_t* dims, const int num_dims,
                                              TF_Status* out_status);
/* The function `value` names (an op made by TFE_NewOp with a function's name). */
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunction(TFE_Op* op, const char* attr_name,
                                                 const TFE_Op* value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunctionName(TFE_Op* op, const char* attr_name,
                                                     const char* data, size_t length);
TF_CAPI_EXPORT extern void TFE_OpSetAttrTensor(TFE_Op* op, const char* attr_name,
                                               TF_Tensor* tensor, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_OpSetAttrStringList(TFE_Op* op, const char* attr_name,
                                                   const void* const* values,
                                                   const size_t* lengths, int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrIntList(TFE_Op* op, const char* attr_name,
                                                const int64_t* values, int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFloatList(TFE_Op* op, const char* attr_name,
                                                  const float* values, int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrBoolList(TFE_Op* op, const char* attr_name,
                                                 const unsigned char* values, int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrTypeList(TFE_Op* op, const char* attr_name,
                                                 const TF_DataType* values, int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrShapeList(TFE_Op* op, const char* attr_name,
                                                  const int64_t** dims, const int* num_dims,
                                                  int num_values, TF_Status* out_status);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunctionList(TFE_Op* op, const char* attr_name,
                                                     const TFE_Op** value, int num_values);

/* How many tensors an input or output argument holds, given the attrs set so far. */
TF_CAPI_EXPORT extern int TFE_OpGetInputLength(TFE_Op* op, const char* input_name,
                                               TF_Status* status);
TF_CAPI_EXPORT extern int TFE_OpGetOutputLength(TFE_Op* op, const char* output_name,
                                                TF_Status* status);

/* Runs `op`. On entry *num_retvals is the room in `retvals`; on return it is the number of
 * outputs, each a new handle for the caller to delete. Too little room is INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TFE_Execute(TFE_Op* op, TFE_TensorHandle** retvals, int* num_retvals,
                                       TF_Status* status);

/* ---- Functions ---- */

TF_CAPI_EXPORT extern void TFE_ContextAddFunctionDef(TFE_Context* ctx,
                                                     const char* serialized_function_def,
                                                     size_t size, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ContextAddFunction(TFE_Context* ctx, TF_Function* function,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ContextRemoveFunction(TFE_Context* ctx, const char* name,
                                                     TF_Status* status);
TF_CAPI_EXPORT extern unsigned char TFE_ContextHasFunction(TFE_Context* ctx, const char* name);

/* ---- Run metadata and steps (accepted; eager steps record nothing) ---- */

TF_CAPI_EXPORT extern void TFE_ContextEnableRunMetadata(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextDisableRunMetadata(TFE_Context* ctx);
/* An empty RunMetadata. */
TF_CAPI_EXPORT extern void TFE_ContextExportRunMetadata(TFE_Context* ctx, TF_Buffer* buf,
                                                        TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ContextStartStep(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextEndStep(TFE_Context* ctx);

#ifdef __cplusplus
} /* end extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_EAGER_C_API_H_ */
