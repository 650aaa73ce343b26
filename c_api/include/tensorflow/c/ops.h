/* Registering ops and their shape functions from C, as TensorFlow's "tensorflow/c/ops.h":
 * what a custom-op library (TF_LoadLibrary) calls while it loads.
 *
 *   TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("Scale");
 *   TF_OpDefinitionBuilderAddInput(b, "x: T");
 *   TF_OpDefinitionBuilderAddOutput(b, "y: T");
 *   TF_OpDefinitionBuilderAddAttr(b, "T: {float, double}");
 *   TF_OpDefinitionBuilderSetShapeInferenceFunction(b, &unchanged_shape);
 *   TF_RegisterOpDefinition(b, status);  (frees b, registered or not)
 *
 * Specs are TensorFlow's ("name: type", "name: N * T", "attr: int >= 1 = 2", ...). An op name
 * that is already registered, or a spec that does not parse, fails TF_RegisterOpDefinition
 * with INVALID_ARGUMENT or ALREADY_EXISTS naming the op. Shape handles and dimension handles
 * are values: the functions that fill a `result` handle copy into it, and every handle the
 * caller makes (TF_New..., TF_ShapeInferenceContextVectorFromSize) is freed with its
 * TF_Delete... call. */
#ifndef SLUICE_TENSORFLOW_C_OPS_H_
#define SLUICE_TENSORFLOW_C_OPS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "c_api_macros.h"
#include "tf_datatype.h"
#include "tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;

/* ---- Op definitions ---- */
TF_CAPI_EXPORT extern TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(const char* op_name);
/* Registers the op and frees the builder, whether or not registration succeeds. */
TF_CAPI_EXPORT extern void TF_RegisterOpDefinition(TF_OpDefinitionBuilder* builder,
                                                   TF_Status* status);
/* Frees a builder that is not registered. */
TF_CAPI_EXPORT extern void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder* builder);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder* builder,
                                                         const char* attr_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder* builder,
                                                          const char* input_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder* builder,
                                                           const char* output_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder* builder,
                                                                  bool is_commutative);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsAggregate(TF_OpDefinitionBuilder* builder,
                                                                bool is_aggregate);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder* builder,
                                                               bool is_stateful);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetAllowsUninitializedInput(
    TF_OpDefinitionBuilder* builder, bool allows_uninitialized_input);
/* Accepted for TensorFlow's sake; Sluice does not record deprecations, and the op registers
 * and runs as without the call (in TensorFlow too the call does not affect registration). */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderDeprecated(TF_OpDefinitionBuilder* builder,
                                                            int version, const char* explanation);
/* Without one, every output's shape is unknown. A status other than TF_OK from the function
 * fails building the node, with its message. */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext* ctx, TF_Status* status));

/* ---- Shape inference ---- */
TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext* ctx);
/* A new handle of unknown shape. */
TF_CAPI_EXPORT extern TF_ShapeHandle* TF_NewShapeHandle(void);
/* OUT_OF_RANGE unless 0 <= i < TF_ShapeInferenceContextNumInputs(ctx). */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext* ctx, int i,
                                                            TF_ShapeHandle* handle,
                                                            TF_Status* status);
/* Copies `handle` into output i; OUT_OF_RANGE for a bad i. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext* ctx, int i,
                                                             TF_ShapeHandle* handle,
                                                             TF_Status* status);
/* A new handle: a vector of `size` elements. */
TF_CAPI_EXPORT extern TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(
    TF_ShapeInferenceContext* ctx, size_t size);
/* A new dimension handle of unknown value. */
TF_CAPI_EXPORT extern TF_DimensionHandle* TF_NewDimensionHandle(void);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext* ctx,
                                                                const char* attr_name,
                                                                TF_DataType* val,
                                                                TF_Status* status);
/* -1 when the rank is unknown. */
TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext* ctx,
                                                           TF_ShapeHandle* handle);
TF_CAPI_EXPORT extern int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext* ctx,
                                                            TF_ShapeHandle* handle);
/* *result = handle with its rank asserted (an unknown rank becomes `rank` unknown dims);
 * INVALID_ARGUMENT when the rank is known and does not fit. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext* ctx,
                                                            TF_ShapeHandle* handle, int64_t rank,
                                                            TF_ShapeHandle* result,
                                                            TF_Status* status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtLeast(TF_ShapeInferenceContext* ctx,
                                                                   TF_ShapeHandle* handle,
                                                                   int64_t rank,
                                                                   TF_ShapeHandle* result,
                                                                   TF_Status* status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtMost(TF_ShapeInferenceContext* ctx,
                                                                  TF_ShapeHandle* handle,
                                                                  int64_t rank,
                                                                  TF_ShapeHandle* result,
                                                                  TF_Status* status);
/* Dimension i (negative: from the end); unknown when the rank is unknown or i out of range. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext* ctx,
                                                       TF_ShapeHandle* shape_handle, int64_t i,
                                                       TF_DimensionHandle* result);
/* Dimensions [start, end) (negative: from the end; clamped to the rank). */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext* ctx,
                                                            TF_ShapeHandle* shape_handle,
                                                            int64_t start, int64_t end,
                                                            TF_ShapeHandle* result,
                                                            TF_Status* status);
/* Every output unknown. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext* ctx,
                                                                   TF_Status* status);
TF_CAPI_EXPORT extern int TF_DimensionHandleValueKnown(TF_DimensionHandle* dim_handle);
/* -1 when unknown. */
TF_CAPI_EXPORT extern int64_t TF_DimensionHandleValue(TF_DimensionHandle* dim_handle);
/* *result = first's dims then second's; unknown if either rank is. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext* ctx,
                                                                     TF_ShapeHandle* first,
                                                                     TF_ShapeHandle* second,
                                                                     TF_ShapeHandle* result,
                                                                     TF_Status* status);
TF_CAPI_EXPORT extern void TF_DeleteShapeHandle(TF_ShapeHandle* handle);
TF_CAPI_EXPORT extern void TF_DeleteDimensionHandle(TF_DimensionHandle* handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_TENSORFLOW_C_OPS_H_ */
