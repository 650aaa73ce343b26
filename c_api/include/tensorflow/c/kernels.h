/* Kernels written in C, as TensorFlow's "tensorflow/c/kernels.h": what a custom-op library
 * (TF_LoadLibrary) registers for its ops while it loads.
 *
 *   static void* Create(TF_OpKernelConstruction* ctx) { ... read attrs, return state ... }
 *   static void Compute(void* state, TF_OpKernelContext* ctx) {
 *     TF_Tensor* x; TF_GetInput(ctx, 0, &x, status);
 *     TF_Tensor* y = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, ndims, bytes, status);
 *     ... write TF_TensorData(y) ...; TF_DeleteTensor(x); TF_DeleteTensor(y);
 *   }
 *   TF_KernelBuilder* b = TF_NewKernelBuilder("Scale", "CPU", Create, Compute, Delete);
 *   TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, status);
 *   TF_RegisterKernelBuilder("ScaleOp", b, status);  (takes b)
 *
 * Sluice runs kernels on the "CPU" device. create_func runs once per node when its graph is
 * registered; compute_func once per step, possibly on several threads at once for different
 * steps, so the state create_func returns must be safe to read concurrently. A kernel reports
 * errors with TF_OpKernelConstruction_Failure / TF_OpKernelContext_Failure: the node's run
 * then fails with that status, named after the node. TF_Tensors handed to a kernel
 * (TF_GetInput, TF_AllocateOutput) are the caller's to delete; numeric ones share the
 * runtime's buffers (inputs are read-only), TF_STRING inputs are copies. */
#ifndef SLUICE_TENSORFLOW_C_KERNELS_H_
#define SLUICE_TENSORFLOW_C_KERNELS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "c_api.h"
#include "c_api_macros.h"
#include "tf_datatype.h"
#include "tf_status.h"
#include "tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_KernelBuilder TF_KernelBuilder;
typedef struct TF_OpKernelConstruction TF_OpKernelConstruction;
typedef struct TF_OpKernelContext TF_OpKernelContext;

/* Where TF_AllocateTemp puts a tensor; Sluice's is always host memory. */
typedef struct TF_AllocatorAttributes {
  size_t struct_size;
  TF_Bool on_host;
} TF_AllocatorAttributes;

/* ---- Registration ---- */
/* create_func and delete_func may be NULL (compute_func then gets NULL state). */
TF_CAPI_EXPORT extern TF_KernelBuilder* TF_NewKernelBuilder(
    const char* op_name, const char* device_name, void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_func)(void*, TF_OpKernelContext*), void (*delete_func)(void*));
/* The kernel serves only nodes whose type attr `attr_name` is `type` (call again to allow
 * more types for the same attr). */
TF_CAPI_EXPORT extern void TF_KernelBuilder_TypeConstraint(TF_KernelBuilder* kernel_builder,
                                                           const char* attr_name,
                                                           const TF_DataType type,
                                                           TF_Status* status);
/* Recorded; Sluice's CPU kernels keep everything in host memory. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_HostMemory(TF_KernelBuilder* kernel_builder,
                                                       const char* arg_name);
TF_CAPI_EXPORT extern void TF_KernelBuilder_Priority(TF_KernelBuilder* kernel_builder,
                                                     int32_t priority_number);
/* Registers and frees the builder. NOT_FOUND when its op is not registered, INVALID_ARGUMENT
 * for a device other than "CPU". */
TF_CAPI_EXPORT extern void TF_RegisterKernelBuilder(const char* kernel_name,
                                                    TF_KernelBuilder* builder, TF_Status* status);
/* Frees a builder that is not registered. */
TF_CAPI_EXPORT extern void TF_DeleteKernelBuilder(TF_KernelBuilder* builder);

/* ---- While computing ---- */
TF_CAPI_EXPORT extern int TF_NumInputs(TF_OpKernelContext* ctx);
TF_CAPI_EXPORT extern int TF_NumOutputs(TF_OpKernelContext* ctx);
/* *tensor = input i, a new TF_Tensor the caller deletes; OUT_OF_RANGE for a bad i. */
TF_CAPI_EXPORT extern void TF_GetInput(TF_OpKernelContext* ctx, int i, TF_Tensor** tensor,
                                       TF_Status* status);
/* Output i = tensor (shared for numbers, copied for TF_STRING; the caller keeps `tensor`).
 * OUT_OF_RANGE for a bad i, INVALID_ARGUMENT for a dtype other than the output's. */
TF_CAPI_EXPORT extern void TF_SetOutput(TF_OpKernelContext* ctx, int i, const TF_Tensor* tensor,
                                        TF_Status* status);
/* Allocates output `index` with these dims and returns it for the kernel to fill (the caller
 * deletes the handle; the output keeps the buffer). `len` must be the dims' byte size and
 * `dtype` the output's; not for TF_STRING outputs (build one and TF_SetOutput it). */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context, int index,
                                                   TF_DataType dtype, const int64_t* dims,
                                                   int num_dims, size_t len, TF_Status* status);
/* A scratch tensor (the caller deletes it); alloc_attrs may be NULL. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTemp(TF_OpKernelContext* context, TF_DataType dtype,
                                                 const int64_t* dims, int num_dims,
                                                 TF_AllocatorAttributes* alloc_attrs,
                                                 TF_Status* status);
/* Fails the node's construction / computation with `status` (which must not be TF_OK). */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction* ctx,
                                                           TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx, TF_Status* status);
/* The output's dtype; TF_DataType 0 (invalid) for a bad i. */
TF_CAPI_EXPORT extern TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext* ctx, int i);
TF_CAPI_EXPORT extern TF_DataType TF_InputDatatype(TF_OpKernelContext* ctx, int index);
TF_CAPI_EXPORT extern int64_t TF_StepId(TF_OpKernelContext* ctx);
/* The node's name; valid while the kernel lives. */
TF_CAPI_EXPORT extern TF_StringView TF_GetOpKernelName(TF_OpKernelContext* ctx);

/* ---- While constructing: the node's attrs ----
 * Each getter sets INVALID_ARGUMENT naming the attr when it is missing or of another type. */
TF_CAPI_EXPORT extern TF_StringView TF_OpKernelConstruction_GetName(TF_OpKernelConstruction* ctx);
TF_CAPI_EXPORT extern bool TF_OpKernelConstruction_HasAttr(TF_OpKernelConstruction* ctx,
                                                           const char* attr_name,
                                                           TF_Status* status);
/* list_size: the list's length (-1 for a single value); total_size: a string's bytes, the
 * sum of a string list's bytes, a shape's rank, otherwise -1. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction* ctx,
                                                               const char* attr_name,
                                                               int32_t* list_size,
                                                               int32_t* total_size,
                                                               TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrType(TF_OpKernelConstruction* ctx,
                                                               const char* attr_name,
                                                               TF_DataType* val,
                                                               TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32(TF_OpKernelConstruction* ctx,
                                                                const char* attr_name,
                                                                int32_t* val, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64(TF_OpKernelConstruction* ctx,
                                                                const char* attr_name,
                                                                int64_t* val, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloat(TF_OpKernelConstruction* ctx,
                                                                const char* attr_name, float* val,
                                                                TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrBool(TF_OpKernelConstruction* ctx,
                                                               const char* attr_name,
                                                               TF_Bool* val, TF_Status* status);
/* Copies at most max_length bytes (no terminating NUL is added). */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction* ctx,
                                                                 const char* attr_name, char* val,
                                                                 size_t max_length,
                                                                 TF_Status* status);
/* *val = a new TF_Tensor the caller deletes. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensor(TF_OpKernelConstruction* ctx,
                                                                 const char* attr_name,
                                                                 TF_Tensor** val,
                                                                 TF_Status* status);
/* List getters copy at most max_vals elements. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTypeList(TF_OpKernelConstruction* ctx,
                                                                   const char* attr_name,
                                                                   TF_DataType* vals,
                                                                   int max_vals,
                                                                   TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32List(TF_OpKernelConstruction* ctx,
                                                                    const char* attr_name,
                                                                    int32_t* vals, int max_vals,
                                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64List(TF_OpKernelConstruction* ctx,
                                                                    const char* attr_name,
                                                                    int64_t* vals, int max_vals,
                                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloatList(TF_OpKernelConstruction* ctx,
                                                                    const char* attr_name,
                                                                    float* vals, int max_vals,
                                                                    TF_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_KERNELS_H_ */
