/* An example custom-op library in plain C: CountAbove counts the elements of a float tensor
 * above the `threshold` attr (an int64 scalar), registered through TensorFlow's C API for ops
 * and kernels when the library loads. Built against Sluice's headers only:
 *
 *   cc -std=c11 -shared -fPIC -I c_api/include examples/custom_op/count_above.c \
 *       -o libcount_above.so
 */
#include <stdint.h>
#include <stdlib.h>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

typedef struct {
  float threshold;
} CountAbove;

static void ScalarShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* any = TF_ShapeInferenceContextVectorFromSize(ctx, 0);
  TF_ShapeHandle* scalar = TF_NewShapeHandle();
  TF_ShapeInferenceContextSubshape(ctx, any, 0, 0, scalar, status); /* [] */
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, scalar, status);
  TF_DeleteShapeHandle(scalar);
  TF_DeleteShapeHandle(any);
}

static void* Create(TF_OpKernelConstruction* ctx) {
  CountAbove* op = calloc(1, sizeof(CountAbove));
  TF_Status* status = TF_NewStatus();
  TF_OpKernelConstruction_GetAttrFloat(ctx, "threshold", &op->threshold, status);
  if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return op;
}

static void Compute(void* state, TF_OpKernelContext* ctx) {
  const CountAbove* op = state;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_Tensor* count = TF_AllocateOutput(ctx, 0, TF_INT64, NULL, 0, sizeof(int64_t), status);
    if (TF_GetCode(status) == TF_OK) {
      const float* v = TF_TensorData(x);
      int64_t n = 0;
      for (int64_t i = 0; i < TF_TensorElementCount(x); ++i) n += v[i] > op->threshold;
      *(int64_t*)TF_TensorData(count) = n;
    }
    TF_DeleteTensor(count);
  }
  TF_DeleteTensor(x);
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

static void Delete(void* state) { free(state); }

/* Runs when TF_LoadLibrary dlopens the library. */
__attribute__((constructor)) static void RegisterCountAbove(void) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* op = TF_NewOpDefinitionBuilder("CountAbove");
  TF_OpDefinitionBuilderAddInput(op, "x: float");
  TF_OpDefinitionBuilderAddOutput(op, "count: int64");
  TF_OpDefinitionBuilderAddAttr(op, "threshold: float");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(op, &ScalarShape);
  TF_RegisterOpDefinition(op, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_KernelBuilder* kernel = TF_NewKernelBuilder("CountAbove", "CPU", &Create, &Compute, &Delete);
    TF_RegisterKernelBuilder("CountAboveOp", kernel, status);
  }
  TF_DeleteStatus(status);
}
