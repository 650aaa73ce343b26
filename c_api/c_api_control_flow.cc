// While loops over a TF_Graph: declared with TensorFlow's signatures so that bindings written
// against TensorFlow's C API link and run, but not provided (Sluice has no TensorFlow
// control-flow ops yet), so every call reports UNIMPLEMENTED. Gradients are in
// c_api_gradients.cc.
#include "absl/status/status.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"

extern "C" {

TF_WhileParams TF_NewWhile(TF_Graph* g, TF_Output* inputs, int ninputs, TF_Status* status) {
  sluice::SetStatus(status, absl::UnimplementedError(
                                "TF_NewWhile: while loops are not supported by Sluice's C API"));
  return TF_WhileParams{0, nullptr, nullptr, TF_Output{nullptr, -1}, nullptr, nullptr, nullptr,
                        nullptr};
}

void TF_FinishWhile(const TF_WhileParams* params, TF_Status* status, TF_Output* outputs) {
  sluice::SetStatus(status, absl::UnimplementedError(
                                "TF_FinishWhile: while loops are not supported by Sluice's C API"));
}

void TF_AbortWhile(const TF_WhileParams* params) {}

}  // extern "C"
