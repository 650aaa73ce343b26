// Adagrad, Momentum and Adam (ai.onnx.preview.training), over any number of tensors per node,
// for any update count T. Arithmetic in double.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

enum class Optimizer { kAdagrad, kMomentum, kAdam };

constexpr int StateCount(Optimizer o) { return o == Optimizer::kAdam ? 2 : 1; }

template <typename T, Optimizer kOpt>
class OptimizerOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("norm_coefficient", &norm_));
    if (kOpt == Optimizer::kAdagrad) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("decay_factor", &decay_));
      SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
    } else if (kOpt == Optimizer::kMomentum) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha_));
      SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta_));
      std::string mode;
      SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
      nesterov_ = mode == "nesterov";
    } else {
      SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha_));
      SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta_));
      SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
      SL_RETURN_IF_ERROR(ctx->GetAttr("norm_coefficient_post", &norm_post_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const int groups = 2 + StateCount(kOpt);  // X, G, state...
    const int total = ctx->num_inputs() - 2;
    if (total % groups != 0) {
      return absl::InvalidArgumentError(absl::StrCat("expected a multiple of ", groups, " tensors after R and T, got ", total));
    }
    const int n = total / groups;
    if (ctx->num_outputs() != n * (1 + StateCount(kOpt))) {
      return absl::InvalidArgumentError("the number of outputs does not match the inputs");
    }
    if (ctx->input(0).NumElements() != 1 || ctx->input(1).NumElements() != 1) {
      return absl::InvalidArgumentError("R and T must be scalars");
    }
    const double r = static_cast<double>(ctx->input(0).flat<T>()[0]);
    const int64_t t = ctx->input(1).flat<int64_t>()[0];
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(2 + i);
      const Tensor& g = ctx->input(2 + n + i);
      const Tensor& s1 = ctx->input(2 + 2 * n + i);
      const Tensor* s2 = kOpt == Optimizer::kAdam ? &ctx->input(2 + 3 * n + i) : nullptr;
      if (g.shape() != x.shape() || s1.shape() != x.shape() || (s2 && s2->shape() != x.shape())) {
        return absl::InvalidArgumentError(absl::StrCat("tensor group ", i, ": X, G and the optimizer state must share a shape"));
      }
      Tensor *x_new, *s1_new, *s2_new = nullptr;
      SL_RETURN_IF_ERROR(ctx->allocate_output(i, x.shape(), &x_new));
      SL_RETURN_IF_ERROR(ctx->allocate_output(n + i, x.shape(), &s1_new));
      if (s2) SL_RETURN_IF_ERROR(ctx->allocate_output(2 * n + i, x.shape(), &s2_new));
      const T* xd = x.data<T>();
      const T* gd = g.data<T>();
      const T* a = s1.data<T>();
      for (int64_t k = 0; k < x.NumElements(); ++k) {
        const double gr = norm_ * xd[k] + gd[k];
        if constexpr (kOpt == Optimizer::kAdagrad) {
          const double rate = r / (1 + t * decay_);
          const double h = a[k] + gr * gr;
          s1_new->data<T>()[k] = static_cast<T>(h);
          x_new->data<T>()[k] = static_cast<T>(xd[k] - rate * gr / (std::sqrt(h) + epsilon_));
        } else if constexpr (kOpt == Optimizer::kMomentum) {
          const double beta = t > 0 ? beta_ : 1.0;
          const double v = alpha_ * a[k] + beta * gr;
          s1_new->data<T>()[k] = static_cast<T>(v);
          x_new->data<T>()[k] = static_cast<T>(nesterov_ ? xd[k] - r * (gr + alpha_ * v) : xd[k] - r * v);
        } else {
          const double v = alpha_ * a[k] + (1 - alpha_) * gr;
          const double h = beta_ * s2->data<T>()[k] + (1 - beta_) * gr * gr;
          const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta_, t)) / (1 - std::pow(alpha_, t)) : r;
          const double xn = xd[k] - rate * v / (std::sqrt(h) + epsilon_);
          s1_new->data<T>()[k] = static_cast<T>(v);
          s2_new->data<T>()[k] = static_cast<T>(h);
          x_new->data<T>()[k] = static_cast<T>((1 - norm_post_) * xn);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  float norm_ = 0, decay_ = 0, epsilon_ = 1e-6f, alpha_ = 0.9f, beta_ = 0.999f, norm_post_ = 0;
  bool nesterov_ = false;
};

#define SL_REGISTER_OPTIMIZER(NAME, KIND, T)                                                     \
  REGISTER_KERNEL_BUILDER(Name(NAME).Device(DEVICE_CPU).TypeConstraint<T>("T1").TypeConstraint<T>("T3"), \
                          OptimizerOp<T, KIND>)
SL_REGISTER_OPTIMIZER("Onnx>Adagrad", Optimizer::kAdagrad, float);
SL_REGISTER_OPTIMIZER("Onnx>Adagrad", Optimizer::kAdagrad, double);
SL_REGISTER_OPTIMIZER("Onnx>Momentum", Optimizer::kMomentum, float);
SL_REGISTER_OPTIMIZER("Onnx>Momentum", Optimizer::kMomentum, double);
SL_REGISTER_OPTIMIZER("Onnx>Adam", Optimizer::kAdam, float);
SL_REGISTER_OPTIMIZER("Onnx>Adam", Optimizer::kAdam, double);
#undef SL_REGISTER_OPTIMIZER

}  // namespace
}  // namespace sluice
