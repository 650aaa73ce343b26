// The cost of one eager op through TensorFlow's eager C API, as a binding pays it: TFE_NewOp,
// two TFE_OpAddInput, TFE_Execute, TFE_TensorHandleResolve of the result, and the deletes
// (issue 32's target: at most 5 us for AddV2 on one-element floats).
//
//   bazel run -c opt //bench:eager_bench
#include <cstring>

#include "benchmark/benchmark.h"
#include "c_api/include/tensorflow/c/eager/c_api.h"

namespace {

TFE_TensorHandle* Scalar(float v, int64_t n, TF_Status* s) {
  const int64_t dims[] = {n};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 1, sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(TF_TensorData(t))[i] = v;
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, s);
  TF_DeleteTensor(t);
  return h;
}

// One AddV2 call the way TensorFlow.js's Node backend makes it (T set explicitly), state.range(0)
// elements per input.
void BM_EagerAddV2(benchmark::State& state) {
  TF_Status* s = TF_NewStatus();
  TFE_ContextOptions* opts = TFE_NewContextOptions();
  TFE_Context* ctx = TFE_NewContext(opts, s);
  TFE_DeleteContextOptions(opts);
  TFE_TensorHandle* a = Scalar(1.0f, state.range(0), s);
  TFE_TensorHandle* b = Scalar(2.0f, state.range(0), s);
  float sum = 0;
  for (auto _ : state) {
    TFE_Op* op = TFE_NewOp(ctx, "AddV2", s);
    TFE_OpSetAttrType(op, "T", TF_FLOAT);
    TFE_OpAddInput(op, a, s);
    TFE_OpAddInput(op, b, s);
    TFE_TensorHandle* out = nullptr;
    int num = 1;
    TFE_Execute(op, &out, &num, s);
    TF_Tensor* t = TFE_TensorHandleResolve(out, s);
    sum += static_cast<float*>(TF_TensorData(t))[0];
    TF_DeleteTensor(t);
    TFE_DeleteTensorHandle(out);
    TFE_DeleteOp(op);
  }
  if (TF_GetCode(s) != TF_OK || sum != 3.0f * state.iterations()) state.SkipWithError(TF_Message(s));
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
  TFE_DeleteContext(ctx);
  TF_DeleteStatus(s);
}
BENCHMARK(BM_EagerAddV2)->Arg(1)->Arg(1024);

}  // namespace
