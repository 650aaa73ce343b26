// Gemm (ONNX): Y = alpha * op(A) * op(B) + beta * C, with C broadcast to Y.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/blas.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
class GemmOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("transA", &trans_a_));
    return ctx->GetAttr("transB", &trans_b_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2 || b.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("Gemm needs 2-D A and B, got ", a.shape().DebugString(),
                                                     " and ", b.shape().DebugString()));
    }
    const int64_t m = a.dim_size(trans_a_ ? 1 : 0), k = a.dim_size(trans_a_ ? 0 : 1);
    const int64_t kb = b.dim_size(trans_b_ ? 1 : 0), n = b.dim_size(trans_b_ ? 0 : 1);
    if (k != kb) {
      return absl::InvalidArgumentError(absl::StrCat("Gemm inner dimensions differ: A' is ", m, "x", k,
                                                     ", B' is ", kb, "x", n));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({m, n}), &y));
    T* yd = y->data<T>();
    T beta = T(0);
    if (ctx->num_inputs() > 2 && beta_ != 0.0f) {
      const Tensor& c = ctx->input(2);
      SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(c.shape(), y->shape()));
      if (plan.out_shape != y->shape()) {
        return absl::InvalidArgumentError(absl::StrCat("Gemm C ", c.shape().DebugString(),
                                                       " does not broadcast to ", y->shape().DebugString()));
      }
      const T* cd = c.data<T>();
      ForEachBroadcastRun(plan, [&](int64_t o, int64_t co, int64_t, int64_t len, int64_t cs, int64_t) {
        if (cs == 1) {  // A row of C (a bias): one contiguous copy.
          std::copy(cd + co, cd + co + len, yd + o);
        } else {
          for (int64_t i = 0; i < len; ++i) yd[o + i] = cd[co + i * cs];
        }
      });
      beta = T(beta_);
    }
    if (m * n == 0) return absl::OkStatus();
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i) yd[i] = T(beta * yd[i]);
      return absl::OkStatus();
    }
    if (!CancellableGemmRowMajor<T>(ctx->cancellation(), trans_a_ != 0, trans_b_ != 0, m, n, k, T(alpha_),
                                    a.data<T>(), a.dim_size(1), b.data<T>(), b.dim_size(1), beta, yd, n,
                                    ctx->intra_op_threads())) {
      return ctx->CheckCancelled();
    }
    return absl::OkStatus();
  }

 private:
  float alpha_ = 1, beta_ = 1;
  int64_t trans_a_ = 0, trans_b_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Gemm").Device(DEVICE_CPU).TypeConstraint<float>("T"), GemmOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Gemm").Device(DEVICE_CPU).TypeConstraint<double>("T"), GemmOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Gemm").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), GemmOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Gemm").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), GemmOp<int64_t>);

}  // namespace
}  // namespace sluice
