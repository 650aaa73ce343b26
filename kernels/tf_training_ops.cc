// CPU kernels of TensorFlow's optimizer updates (ops/tf_training_ops.cc) for float and double:
// one kernel per update rule and variable kind, computing in the variables' type as TensorFlow
// does. The variables are updated through VariableStore::Update, so the new values are written
// into the variables' buffers when no tensor read before holds them, and into fresh ones
// otherwise (what a step read stays as it was).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_variable_util.h"
#include "kernels/threading.h"

namespace sluice {
namespace {

using tf_variables::CheckDtype;
using tf_variables::Describe;
using tf_variables::HandleOf;
using tf_variables::ReadLocked;
using tf_variables::RefAliasName;
using tf_variables::UpdateMutex;

enum class Rule { kGradientDescent, kMomentum, kKerasMomentum, kAdam, kAdagrad, kAdagradV2 };

// The variables an update reads and writes (its first inputs): var, then the slots.
constexpr int VarCount(Rule r) {
  return r == Rule::kGradientDescent ? 1 : r == Rule::kAdam ? 3 : 2;
}
// The gradient's input: last, except in the momentum ops (var, accum, lr, grad, momentum).
constexpr int GradInput(Rule r, int num_inputs) {
  return r == Rule::kMomentum || r == Rule::kKerasMomentum ? 3 : num_inputs - 1;
}
const char* const kVarNames[] = {"var", "accum", "v"};
const char* VarName(Rule r, int i) { return r == Rule::kAdam && i == 1 ? "m" : kVarNames[i]; }

// The scalars of one update (alpha or lr, momentum, Adam's powers, rates and epsilon) in input order.
template <typename T>
struct Scalars {
  T v[6] = {};
};

// Element-wise updates of [begin, end). `in` and `out` may alias (element by element).
template <typename T, Rule kRule>
void ApplyRange(const Scalars<T>& s, bool nesterov, bool update_slots, const T* g, const T* const* in,
                T* const* out, int64_t begin, int64_t end) {
  const T* var = in[0];
  T* new_var = out[0];
  if constexpr (kRule == Rule::kGradientDescent) {
    const T alpha = s.v[0];
    for (int64_t i = begin; i < end; ++i) new_var[i] = var[i] - alpha * g[i];
  } else if constexpr (kRule == Rule::kMomentum || kRule == Rule::kKerasMomentum) {
    const T lr = s.v[0], momentum = s.v[1];
    const T* accum = in[1];
    T* new_accum = out[1];
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (kRule == Rule::kMomentum) {
        const T a = accum[i] * momentum + g[i];
        new_accum[i] = a;
        new_var[i] = var[i] - (nesterov ? g[i] * lr + a * momentum * lr : lr * a);
      } else {
        const T a = accum[i] * momentum - g[i] * lr;
        new_accum[i] = a;
        new_var[i] = var[i] + (nesterov ? a * momentum - g[i] * lr : a);
      }
    }
  } else if constexpr (kRule == Rule::kAdam) {
    const T beta1_power = s.v[0], beta2_power = s.v[1], lr = s.v[2], beta1 = s.v[3], beta2 = s.v[4],
            epsilon = s.v[5];
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    const T* m = in[1];
    const T* v = in[2];
    T* new_m = out[1];
    T* new_v = out[2];
    for (int64_t i = begin; i < end; ++i) {
      const T mi = m[i] + (g[i] - m[i]) * (T(1) - beta1);
      const T vi = v[i] + (g[i] * g[i] - v[i]) * (T(1) - beta2);
      new_m[i] = mi;
      new_v[i] = vi;
      const T direction = nesterov ? g[i] * (T(1) - beta1) + beta1 * mi : mi;
      new_var[i] = var[i] - lr_t * direction / (std::sqrt(vi) + epsilon);
    }
  } else {
    const T lr = s.v[0];
    const T epsilon = kRule == Rule::kAdagradV2 ? s.v[1] : T(0);
    const T* accum = in[1];
    T* new_accum = out[1];
    for (int64_t i = begin; i < end; ++i) {
      const T a = update_slots ? accum[i] + g[i] * g[i] : accum[i];
      new_accum[i] = a;
      if constexpr (kRule == Rule::kAdagrad) {
        new_var[i] = var[i] - g[i] * lr / std::sqrt(a);
      } else {
        new_var[i] = var[i] - g[i] * lr / (std::sqrt(a) + epsilon);
      }
    }
  }
}

template <typename T, Rule kRule, bool kResource>
class ApplyUpdateOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    if constexpr (kRule == Rule::kMomentum || kRule == Rule::kKerasMomentum || kRule == Rule::kAdam) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("use_nesterov", &nesterov_));
    }
    if constexpr (kRule == Rule::kAdagrad || kRule == Rule::kAdagradV2) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("update_slots", &update_slots_));
    }
    if (!kResource) {
      // Ref variables: each ref input's node stands for the VariableV2 it reads.
      for (int i = 0; i < VarCount(kRule); ++i) {
        if (ctx->def().input_size() <= i || ctx->def().input(i).empty() || ctx->def().input(i)[0] == '^') {
          return absl::InvalidArgumentError(absl::StrCat(type_string(), " has no ref input ", VarName(kRule, i)));
        }
        std::string node = ctx->def().input(i);
        if (size_t colon = node.rfind(':'); colon != std::string::npos) node.resize(colon);
        ref_nodes_.push_back(std::move(node));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr int kVars = VarCount(kRule);
    const int grad_input = GradInput(kRule, ctx->num_inputs());
    VariableStore* store = ctx->device()->variables();
    std::vector<std::string> keys, described;
    if constexpr (kResource) {
      for (int i = 0; i < kVars; ++i) {
        SL_ASSIGN_OR_RETURN(const tf_variables::VarHandle* h, HandleOf(ctx, ctx->input(i), i));
        SL_RETURN_IF_ERROR(CheckDtype(*h, DataTypeToEnum<T>::value, "update"));
        keys.push_back(h->key);
        described.push_back(Describe(*h));
      }
    }
    Scalars<T> scalars;
    int scalar_count = 0;
    for (int j = kVars; j < ctx->num_inputs(); ++j) {
      if (j == grad_input) continue;
      const Tensor& t = ctx->input(j);
      if (t.dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(type_string(), ": ", OpInputName(j), " is not a scalar: ",
                                                       t.shape().DebugString()));
      }
      scalars.v[scalar_count++] = t.flat<T>()[0];
    }
    const Tensor& grad = ctx->input(grad_input);
    absl::MutexLock lock(&UpdateMutex());
    if constexpr (!kResource) {
      for (int i = 0; i < kVars; ++i) {
        absl::StatusOr<Tensor> alias = store->Read(RefAliasName(ref_nodes_[i]));
        if (!alias.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(type_string(), "'s ref input ", VarName(kRule, i), " ('",
                                                         ref_nodes_[i], "') is not a VariableV2 on this device (",
                                                         ctx->device()->name(), ")"));
        }
        keys.push_back(alias->flat<tstring>()[0]);
        described.push_back(absl::StrCat("variable '", ref_nodes_[i], "'"));
      }
    }
    // A variable without a value fails here, named as TensorFlow names it (checked before the
    // update so that no reference is held while it runs).
    for (int i = 0; i < kVars; ++i) {
      absl::StatusOr<Tensor> v = store->Read(keys[i]);
      if (!v.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat(type_string(), ": attempting to use uninitialized value of ", described[i]));
      }
    }
    SL_RETURN_IF_ERROR(store->Update(keys, [&](absl::Span<const Tensor> in, absl::Span<Tensor> out) -> absl::Status {
      for (int i = 0; i < kVars; ++i) {
        if (in[i].dtype() != DataTypeToEnum<T>::value) {
          return absl::InvalidArgumentError(absl::StrCat(type_string(), ": ", described[i], " holds ",
                                                         DataTypeString(in[i].dtype()), ", not ",
                                                         DataTypeString(DataTypeToEnum<T>::value)));
        }
        if (in[i].shape() != in[0].shape()) {
          return absl::InvalidArgumentError(absl::StrCat(type_string(), ": var and ", VarName(kRule, i),
                                                         " do not have the same shape",
                                                         in[0].shape().DebugString(), " ",
                                                         in[i].shape().DebugString()));
        }
      }
      if (grad.shape() != in[0].shape()) {
        return absl::InvalidArgumentError(absl::StrCat(type_string(), ": var and ", OpInputName(grad_input),
                                                       " do not have the same shape", in[0].shape().DebugString(),
                                                       " ", grad.shape().DebugString()));
      }
      const T* src[3] = {};
      T* dst[3] = {};
      for (int i = 0; i < kVars; ++i) {
        src[i] = in[i].data<T>();
        dst[i] = out[i].data<T>();
      }
      const T* g = grad.data<T>();
      const int64_t n = in[0].NumElements();
      const bool nesterov = nesterov_, update_slots = update_slots_;
      auto range = [&](int64_t begin, int64_t end) {
        ApplyRange<T, kRule>(scalars, nesterov, update_slots, g, src, dst, begin, end);
      };
      const int threads = ctx->intra_op_threads();
      if (threads > 1 && n * (kVars + 1) >= (int64_t{1} << 16)) {
        OmpParallelFor(n, int64_t{1} << 14, threads, range);
      } else {
        range(0, n);
      }
      return absl::OkStatus();
    }));
    if constexpr (!kResource) {
      SL_ASSIGN_OR_RETURN(Tensor value, store->Read(keys[0]));
      return ctx->set_output(0, value);
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return true; }

 private:
  // The name of input `j` in TensorFlow's signature, for errors.
  static const char* OpInputName(int j) {
    static const char* const kGradientDescent[] = {"var", "alpha", "delta"};
    static const char* const kMomentum[] = {"var", "accum", "lr", "grad", "momentum"};
    static const char* const kAdam[] = {"var", "m", "v", "beta1_power", "beta2_power",
                                        "lr", "beta1", "beta2", "epsilon", "grad"};
    static const char* const kAdagrad[] = {"var", "accum", "lr", "grad"};
    static const char* const kAdagradV2[] = {"var", "accum", "lr", "epsilon", "grad"};
    switch (kRule) {
      case Rule::kGradientDescent: return kGradientDescent[j];
      case Rule::kMomentum:
      case Rule::kKerasMomentum: return kMomentum[j];
      case Rule::kAdam: return kAdam[j];
      case Rule::kAdagrad: return kAdagrad[j];
      case Rule::kAdagradV2: return kAdagradV2[j];
    }
    return "?";
  }

  bool nesterov_ = false;
  bool update_slots_ = true;
  std::vector<std::string> ref_nodes_;
};

#define SL_REGISTER_APPLY(NAME, RULE, RESOURCE)                                                       \
  REGISTER_KERNEL_BUILDER(Name(NAME).Device(DEVICE_CPU).TypeConstraint<float>("T"),               \
                          ApplyUpdateOp<float, RULE, RESOURCE>);                                \
  REGISTER_KERNEL_BUILDER(Name(NAME).Device(DEVICE_CPU).TypeConstraint<double>("T"),              \
                          ApplyUpdateOp<double, RULE, RESOURCE>)

SL_REGISTER_APPLY("ResourceApplyGradientDescent", Rule::kGradientDescent, true);
SL_REGISTER_APPLY("ApplyGradientDescent", Rule::kGradientDescent, false);
SL_REGISTER_APPLY("ResourceApplyMomentum", Rule::kMomentum, true);
SL_REGISTER_APPLY("ApplyMomentum", Rule::kMomentum, false);
SL_REGISTER_APPLY("ResourceApplyKerasMomentum", Rule::kKerasMomentum, true);
SL_REGISTER_APPLY("ResourceApplyAdam", Rule::kAdam, true);
SL_REGISTER_APPLY("ApplyAdam", Rule::kAdam, false);
SL_REGISTER_APPLY("ResourceApplyAdagrad", Rule::kAdagrad, true);
SL_REGISTER_APPLY("ApplyAdagrad", Rule::kAdagrad, false);
SL_REGISTER_APPLY("ResourceApplyAdagradV2", Rule::kAdagradV2, true);
SL_REGISTER_APPLY("ApplyAdagradV2", Rule::kAdagradV2, false);
#undef SL_REGISTER_APPLY

}  // namespace
}  // namespace sluice
