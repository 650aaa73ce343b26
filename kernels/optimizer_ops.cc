// Adagrad, Momentum and Adam (ai.onnx.preview.training), over any number of tensors per node,
// for any update count T. Arithmetic in double. ApplyOnnxAdagrad/Momentum/Adam run the same
// updates on variables, in their buffers (VariableStore::Update).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/device.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

enum class Optimizer { kAdagrad, kMomentum, kAdam };

constexpr int StateCount(Optimizer o) { return o == Optimizer::kAdam ? 2 : 1; }

// One optimizer's attrs and its element-wise update.
template <Optimizer kOpt>
struct OptimizerRule {
  float norm = 0, decay = 0, epsilon = 1e-6f, alpha = 0.9f, beta = 0.999f, norm_post = 0;
  bool nesterov = false;

  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("norm_coefficient", &norm));
    if (kOpt == Optimizer::kAdagrad) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("decay_factor", &decay));
      SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon));
    } else if (kOpt == Optimizer::kMomentum) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
      SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta));
      std::string mode;
      SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
      nesterov = mode == "nesterov";
    } else {
      SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
      SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta));
      SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon));
      SL_RETURN_IF_ERROR(ctx->GetAttr("norm_coefficient_post", &norm_post));
    }
    return absl::OkStatus();
  }

  // x_new, s1_new (and s2_new) from x, g, s1 (and s2) at rate r and count t. Outputs may alias
  // their inputs: each element is read before it is written.
  template <typename T>
  void Apply(double r, int64_t t, int64_t count, const T* x, const T* g, const T* s1, const T* s2, T* x_new,
             T* s1_new, T* s2_new) const {
    for (int64_t k = 0; k < count; ++k) {
      const double xk = x[k];
      const double gr = norm * xk + g[k];
      if constexpr (kOpt == Optimizer::kAdagrad) {
        const double rate = r / (1 + t * decay);
        const double h = s1[k] + gr * gr;
        s1_new[k] = static_cast<T>(h);
        x_new[k] = static_cast<T>(xk - rate * gr / (std::sqrt(h) + epsilon));
      } else if constexpr (kOpt == Optimizer::kMomentum) {
        const double b = t > 0 ? beta : 1.0;
        const double v = alpha * s1[k] + b * gr;
        s1_new[k] = static_cast<T>(v);
        x_new[k] = static_cast<T>(nesterov ? xk - r * (gr + alpha * v) : xk - r * v);
      } else {
        const double v = alpha * s1[k] + (1 - alpha) * gr;
        const double h = beta * s2[k] + (1 - beta) * gr * gr;
        const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : r;
        const double xn = xk - rate * v / (std::sqrt(h) + epsilon);
        s1_new[k] = static_cast<T>(v);
        s2_new[k] = static_cast<T>(h);
        x_new[k] = static_cast<T>((1 - norm_post) * xn);
      }
    }
  }
};

absl::Status CheckScalars(const Tensor& r, const Tensor& t) {
  if (r.NumElements() != 1 || t.NumElements() != 1) return absl::InvalidArgumentError("R and T must be scalars");
  return absl::OkStatus();
}

template <typename T, Optimizer kOpt>
class OptimizerOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return rule_.Init(ctx); }

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
    SL_RETURN_IF_ERROR(CheckScalars(ctx->input(0), ctx->input(1)));
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
      rule_.Apply(r, t, x.NumElements(), x.data<T>(), g.data<T>(), s1.data<T>(), s2 ? s2->data<T>() : nullptr,
                  x_new->data<T>(), s1_new->data<T>(), s2_new ? s2_new->data<T>() : nullptr);
    }
    return absl::OkStatus();
  }

 private:
  OptimizerRule<kOpt> rule_;
};

// The update of variables: X... and the state are the variables shared_names names, in the
// optimizer's input order; G... are inputs.
template <typename T, Optimizer kOpt>
class OptimizerVariablesOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(rule_.Init(ctx));
    SL_RETURN_IF_ERROR(ctx->GetAttr("shared_names", &names_));
    int64_t n = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("N", &n));
    if (static_cast<int64_t>(names_.size()) != n * (1 + StateCount(kOpt))) {
      return absl::InvalidArgumentError(absl::StrCat("shared_names has ", names_.size(), " names for ", n,
                                                     " gradients; expected ", n * (1 + StateCount(kOpt))));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_RETURN_IF_ERROR(CheckScalars(ctx->input(0), ctx->input(1)));
    const double r = static_cast<double>(ctx->input(0).flat<T>()[0]);
    const int64_t t = ctx->input(1).flat<int64_t>()[0];
    const int n = ctx->num_inputs() - 2;
    return ctx->device()->variables()->Update(
        names_, [&](absl::Span<const Tensor> in, absl::Span<Tensor> out) -> absl::Status {
          for (size_t v = 0; v < in.size(); ++v) {
            const Tensor& g = ctx->input(2 + static_cast<int>(v % n));
            if (in[v].dtype() != DataTypeToEnum<T>::value || in[v].shape() != g.shape()) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "variable '", names_[v], "' holds ", DataTypeString(in[v].dtype()), " ", in[v].shape().DebugString(),
                  "; its gradient is ", DataTypeString(g.dtype()), " ", g.shape().DebugString()));
            }
          }
          for (int i = 0; i < n; ++i) {
            const Tensor& g = ctx->input(2 + i);
            const bool adam = kOpt == Optimizer::kAdam;
            rule_.Apply(r, t, g.NumElements(), in[i].data<T>(), g.data<T>(), in[n + i].data<T>(),
                        adam ? in[2 * n + i].data<T>() : nullptr, out[i].data<T>(), out[n + i].data<T>(),
                        adam ? out[2 * n + i].data<T>() : nullptr);
          }
          return absl::OkStatus();
        });
  }

 private:
  OptimizerRule<kOpt> rule_;
  std::vector<std::string> names_;
};

#define SL_REGISTER_OPTIMIZER(NAME, VARIABLES, KIND, T)                                                     \
  REGISTER_KERNEL_BUILDER(Name(NAME).Device(DEVICE_CPU).TypeConstraint<T>("T1").TypeConstraint<T>("T3"),    \
                          OptimizerOp<T, KIND>);                                                            \
  REGISTER_KERNEL_BUILDER(Name(VARIABLES).Device(DEVICE_CPU).TypeConstraint<T>("T1").TypeConstraint<T>("T3"), \
                          OptimizerVariablesOp<T, KIND>)
SL_REGISTER_OPTIMIZER("Onnx>Adagrad", "ApplyOnnxAdagrad", Optimizer::kAdagrad, float);
SL_REGISTER_OPTIMIZER("Onnx>Adagrad", "ApplyOnnxAdagrad", Optimizer::kAdagrad, double);
SL_REGISTER_OPTIMIZER("Onnx>Momentum", "ApplyOnnxMomentum", Optimizer::kMomentum, float);
SL_REGISTER_OPTIMIZER("Onnx>Momentum", "ApplyOnnxMomentum", Optimizer::kMomentum, double);
SL_REGISTER_OPTIMIZER("Onnx>Adam", "ApplyOnnxAdam", Optimizer::kAdam, float);
SL_REGISTER_OPTIMIZER("Onnx>Adam", "ApplyOnnxAdam", Optimizer::kAdam, double);
#undef SL_REGISTER_OPTIMIZER

}  // namespace
}  // namespace sluice
