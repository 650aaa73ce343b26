// An example custom-op library: ScaleAndShift (y = x * scale + shift) for float and double,
// registered with REGISTER_OP and REGISTER_KERNEL_BUILDER from <sluice/op_library.h>.
// Built against Sluice's headers only (one command):
//
//   c++ -std=c++17 -shared -fPIC -I c_api/include -o libscale_and_shift.so
//       examples/custom_op/scale_and_shift.cc
//
// and loaded with TF_LoadLibrary("./libscale_and_shift.so", status) (docs/c_api.md).
#include <cmath>
#include <cstdint>
#include <vector>

#include "sluice/op_library.h"

using namespace sluice_op_library;  // Name, DEVICE_CPU, as TensorFlow's `using namespace tensorflow`.

REGISTER_OP("ScaleAndShift")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double}")
    .Attr("scale: float")
    .Attr("shift: float = 0.0")
    .SetShapeFn(UnchangedShape);

template <typename T>
class ScaleAndShiftOp {
 public:
  explicit ScaleAndShiftOp(TF_OpKernelConstruction* ctx) {
    TF_Status* status = TF_NewStatus();
    TF_OpKernelConstruction_GetAttrFloat(ctx, "scale", &scale_, status);
    if (TF_GetCode(status) == TF_OK) {
      TF_OpKernelConstruction_GetAttrFloat(ctx, "shift", &shift_, status);
    }
    if (TF_GetCode(status) == TF_OK && !(std::isfinite(scale_) && std::isfinite(shift_))) {
      TF_SetStatus(status, TF_INVALID_ARGUMENT, "ScaleAndShift: scale and shift must be finite");
    }
    if (TF_GetCode(status) != TF_OK) TF_OpKernelConstruction_Failure(ctx, status);
    TF_DeleteStatus(status);
  }

  void Compute(TF_OpKernelContext* ctx) {
    TF_Status* status = TF_NewStatus();
    TF_Tensor* x = nullptr;
    TF_GetInput(ctx, 0, &x, status);
    if (TF_GetCode(status) == TF_OK) {
      std::vector<int64_t> dims(TF_NumDims(x));
      for (int i = 0; i < TF_NumDims(x); ++i) dims[i] = TF_Dim(x, i);
      TF_Tensor* y = TF_AllocateOutput(ctx, 0, DataTypeOf<T>(), dims.data(),
                                       static_cast<int>(dims.size()), TF_TensorByteSize(x), status);
      if (TF_GetCode(status) == TF_OK) {
        const T* in = static_cast<const T*>(TF_TensorData(x));
        T* out = static_cast<T*>(TF_TensorData(y));
        for (int64_t i = 0; i < TF_TensorElementCount(x); ++i) {
          out[i] = in[i] * static_cast<T>(scale_) + static_cast<T>(shift_);
        }
      }
      TF_DeleteTensor(y);
    }
    TF_DeleteTensor(x);
    if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
    TF_DeleteStatus(status);
  }

 private:
  float scale_ = 1;
  float shift_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("ScaleAndShift").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        ScaleAndShiftOp<float>);
REGISTER_KERNEL_BUILDER(Name("ScaleAndShift").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        ScaleAndShiftOp<double>);
