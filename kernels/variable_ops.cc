// ReadVariable, AssignVariable, DestroyVariable and ApplyGradientDescentVariable: the device's
// VariableStore, by the shared_name attr.
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/device.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/threading.h"

namespace sluice {
namespace {

class ReadVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(Tensor value, ctx->device()->variables()->Read(name_));
    if (value.dtype() != ctx->expected_output_dtype(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", name_, "' holds ", DataTypeString(value.dtype()), ", read as ",
          DataTypeString(ctx->expected_output_dtype(0))));
    }
    return ctx->set_output(0, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

class AssignVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->device()->variables()->Assign(name_, ctx->input(0));
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

class DestroyVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->device()->variables()->Erase(name_);
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

// variable -= alpha * delta, in the variable's buffer when no tensor read before holds it
// (VariableStore::Update), so an SGD step allocates nothing per weight. delta may broadcast to
// the variable's shape, as it did in the Sub this op replaces (ops/state_ops.cc).
template <typename T>
class ApplyGradientDescentVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& alpha = ctx->input(0);
    const Tensor& delta = ctx->input(1);
    if (alpha.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("the learning rate of the update of variable '", name_,
                                                     "' is not one value: ", alpha.shape().DebugString()));
    }
    const T a = alpha.flat<T>()[0];
    const int threads = ctx->intra_op_threads();
    return ctx->device()->variables()->Update(
        {name_}, [&](absl::Span<const Tensor> in, absl::Span<Tensor> out) -> absl::Status {
          auto mismatch = [&] {
            return absl::InvalidArgumentError(absl::StrCat(
                "variable '", name_, "' holds ", DataTypeString(in[0].dtype()), " ", in[0].shape().DebugString(),
                "; its update is ", DataTypeString(delta.dtype()), " ", delta.shape().DebugString()));
          };
          if (in[0].dtype() != delta.dtype()) return mismatch();
          const T* w = in[0].data<T>();
          const T* d = delta.data<T>();
          T* o = out[0].data<T>();
          if (in[0].shape() != delta.shape()) {
            // delta repeats along some dims: walk the broadcast (the variable's shape is kept).
            absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(in[0].shape(), delta.shape());
            if (!plan.ok() || plan->out_shape != in[0].shape()) return mismatch();
            ForEachBroadcastRun(*plan, [&](int64_t at, int64_t w_at, int64_t d_at, int64_t count, int64_t w_step,
                                           int64_t d_step) {
              for (int64_t i = 0; i < count; ++i) o[at + i] = w[w_at + i * w_step] - a * d[d_at + i * d_step];
            });
            return absl::OkStatus();
          }
          auto range = [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) o[i] = w[i] - a * d[i];
          };
          const int64_t n = in[0].NumElements();
          if (threads > 1 && n >= (int64_t{1} << 16)) {
            OmpParallelFor(n, int64_t{1} << 14, threads, range);
          } else {
            range(0, n);
          }
          return absl::OkStatus();
        });
  }

 private:
  std::string name_;
};

REGISTER_KERNEL_BUILDER(Name("ApplyGradientDescentVariable").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        ApplyGradientDescentVariableOp<float>);
REGISTER_KERNEL_BUILDER(Name("ApplyGradientDescentVariable").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        ApplyGradientDescentVariableOp<double>);
REGISTER_KERNEL_BUILDER(Name("ReadVariable").Device(DEVICE_CPU), ReadVariableOp);
REGISTER_KERNEL_BUILDER(Name("DestroyVariable").Device(DEVICE_CPU), DestroyVariableOp);
REGISTER_KERNEL_BUILDER(Name("AssignVariable").Device(DEVICE_CPU), AssignVariableOp);

}  // namespace
}  // namespace sluice
