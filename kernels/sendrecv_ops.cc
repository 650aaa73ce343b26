// _Send and _Recv: each end of a cut edge, meeting in the step's rendezvous. The key is built
// once per kernel; frames are always 0:0 because control flow is functional.
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

absl::StatusOr<Rendezvous::ParsedKey> KeyFromAttrs(OpKernelConstruction* ctx) {
  std::string send_device, recv_device, tensor_name;
  int64_t incarnation = 0;
  SL_RETURN_IF_ERROR(ctx->GetAttr("send_device", &send_device));
  SL_RETURN_IF_ERROR(ctx->GetAttr("recv_device", &recv_device));
  SL_RETURN_IF_ERROR(ctx->GetAttr("tensor_name", &tensor_name));
  SL_RETURN_IF_ERROR(ctx->GetAttr("send_device_incarnation", &incarnation));
  return Rendezvous::ParseKey(Rendezvous::CreateKey(send_device, static_cast<uint64_t>(incarnation),
                                                    recv_device, tensor_name, FrameAndIter{}));
}

class SendOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(key_, KeyFromAttrs(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    if (ctx->rendezvous() == nullptr) return absl::InternalError("_Send run without a rendezvous");
    return ctx->rendezvous()->Send(key_, ctx->input(0));
  }
  bool IsExpensive() const override { return false; }

 private:
  Rendezvous::ParsedKey key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("tensor_type", &dtype_));
    SL_ASSIGN_OR_RETURN(key_, KeyFromAttrs(ctx));
    return absl::OkStatus();
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const override {
    if (ctx->rendezvous() == nullptr) {
      done(absl::InternalError("_Recv run without a rendezvous"));
      return;
    }
    ctx->rendezvous()->RecvAsync(key_, [this, ctx, done = std::move(done)](
                                           const absl::Status& s, const Tensor& value) {
      if (!s.ok()) {
        done(s);
        return;
      }
      if (value.dtype() != dtype_) {
        done(absl::InvalidArgumentError(absl::StrCat(
            "tensor '", key_.edge_name, "' arrived as ", DataTypeString(value.dtype()),
            ", expected ", DataTypeString(dtype_))));
        return;
      }
      done(ctx->set_output(0, value));
    });
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  Rendezvous::ParsedKey key_;
};

REGISTER_KERNEL_BUILDER(Name("_Send").Device(DEVICE_CPU), SendOp);
REGISTER_KERNEL_BUILDER(Name("_Recv").Device(DEVICE_CPU), RecvOp);

}  // namespace
}  // namespace sluice
