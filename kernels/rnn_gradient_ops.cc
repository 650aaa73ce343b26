// RNNGrad, GRUGrad and LSTMGrad (ops/rnn_gradient_ops.cc) in float and double, over
// rnn_backprop.h; and RNN, GRU and LSTM in double, the same recurrence run forward, which the
// finite-difference checks of the gradients difference (the float kernels are rnn_ops.cc's).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/kernel_registry.h"
#include "kernels/rnn_backprop.h"

namespace sluice {
namespace {

const char* CellName(RnnCell cell) { return cell == RnnCell::kRnn ? "RNN" : cell == RnnCell::kGru ? "GRU" : "LSTM"; }

// The attrs RnnSpec holds, and which optional inputs the node has.
template <RnnCell kCell>
struct RnnAttrs {
  RnnSpec spec;
  bool has_b = false, has_seq = false, has_h0 = false, has_c0 = false, has_p = false;

  absl::Status Init(OpKernelConstruction* ctx) {
    spec.cell = kCell;
    std::string direction;
    SL_RETURN_IF_ERROR(ctx->GetAttr("direction", &direction));
    SL_RETURN_IF_ERROR(ctx->GetAttr("hidden_size", &spec.hidden));
    SL_RETURN_IF_ERROR(ctx->GetAttr("layout", &spec.layout));
    spec.num_dirs = direction == "bidirectional" ? 2 : 1;
    spec.reverse_only = direction == "reverse";
    int64_t flag = 0;
    if (kCell == RnnCell::kGru) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("linear_before_reset", &flag));
      spec.linear_before_reset = flag != 0;
    }
    if (kCell == RnnCell::kLstm) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("input_forget", &flag));
      spec.input_forget = flag != 0;
    }
    DataTypeVector types;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tb", &types));
    has_b = !types.empty();
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tsl", &types));
    has_seq = !types.empty();
    SL_RETURN_IF_ERROR(ctx->GetAttr("Th", &types));
    has_h0 = !types.empty();
    if (kCell == RnnCell::kLstm) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("Tc", &types));
      has_c0 = !types.empty();
      SL_RETURN_IF_ERROR(ctx->GetAttr("Tp", &types));
      has_p = !types.empty();
    }
    return absl::OkStatus();
  }

  // The forward inputs, from input 0; *next is then the index of the first input after them.
  RnnInputs Inputs(OpKernelContext* ctx, int* next) const {
    RnnInputs in;
    in.x = &ctx->input(0);
    in.w = &ctx->input(1);
    in.r = &ctx->input(2);
    *next = 3;
    if (has_b) in.b = &ctx->input((*next)++);
    if (has_seq) in.seq = &ctx->input((*next)++);
    if (has_h0) in.h0 = &ctx->input((*next)++);
    if (has_c0) in.c0 = &ctx->input((*next)++);
    if (has_p) in.p = &ctx->input((*next)++);
    return in;
  }
};

template <RnnCell kCell, typename T>
class RecurrentGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return attrs_.Init(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const RnnSpec& spec = attrs_.spec;
    int next = 0;
    const RnnInputs in = attrs_.Inputs(ctx, &next);
    std::vector<int64_t> lens;
    SL_ASSIGN_OR_RETURN(RnnDims dims, CheckRnnInputs(spec, in, &lens));
    const TensorShape y_shape = RnnYShape(spec, dims), state_shape = RnnStateShape(spec, dims);
    const Tensor& dy = ctx->input(next);
    const Tensor& dyh = ctx->input(next + 1);
    const Tensor* dyc = kCell == RnnCell::kLstm ? &ctx->input(next + 2) : nullptr;
    if (dy.shape() != y_shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("dY must be shaped as Y, ", y_shape.DebugString(), ", got ", dy.shape().DebugString()));
    }
    for (const Tensor* t : {&dyh, dyc}) {
      if (t != nullptr && t->shape() != state_shape) {
        return absl::InvalidArgumentError(absl::StrCat("the gradients of the final states must be shaped ",
                                                       state_shape.DebugString(), ", got ", t->shape().DebugString()));
      }
    }
    const int64_t gh = dims.gates * spec.hidden;
    RnnGrads grads;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.x->shape(), &grads.dx));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, in.w->shape(), &grads.dw));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, in.r->shape(), &grads.dr));
    SL_RETURN_IF_ERROR(ctx->allocate_output(3, TensorShape({spec.num_dirs, 2 * gh}), &grads.db));
    SL_RETURN_IF_ERROR(ctx->allocate_output(4, state_shape, &grads.dh0));
    if (kCell == RnnCell::kLstm) {
      SL_RETURN_IF_ERROR(ctx->allocate_output(5, state_shape, &grads.dc0));
      SL_RETURN_IF_ERROR(ctx->allocate_output(6, TensorShape({spec.num_dirs, 3 * spec.hidden}), &grads.dp));
    }
    RnnBackward<T>(spec, in, dims, lens, dy, dyh, dyc, grads, ctx->intra_op_threads());
    return absl::OkStatus();
  }

 private:
  RnnAttrs<kCell> attrs_;
};

// The forward ops in double precision, with the default activations and no clip.
template <RnnCell kCell>
class DoubleRecurrentOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(attrs_.Init(ctx));
    std::vector<std::string> activations;
    SL_RETURN_IF_ERROR(ctx->GetAttr("activations", &activations));
    const std::vector<std::string> defaults = kCell == RnnCell::kRnn   ? std::vector<std::string>{"tanh"}
                                              : kCell == RnnCell::kGru ? std::vector<std::string>{"sigmoid", "tanh"}
                                                                       : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
    for (size_t i = 0; i < activations.size(); ++i) {
      if (absl::AsciiStrToLower(activations[i]) != defaults[i % defaults.size()]) {
        return absl::UnimplementedError(absl::StrCat(CellName(kCell), " in double precision takes the default "
                                                     "activations only; attribute 'activations' is [",
                                                     absl::StrJoin(activations, ", "), "]"));
      }
    }
    float clip = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("clip", &clip));
    if (clip > 0) {
      return absl::UnimplementedError(absl::StrCat(CellName(kCell), " in double precision: attribute 'clip' (", clip,
                                                   ") is not supported"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const RnnSpec& spec = attrs_.spec;
    int next = 0;
    const RnnInputs in = attrs_.Inputs(ctx, &next);
    std::vector<int64_t> lens;
    SL_ASSIGN_OR_RETURN(RnnDims dims, CheckRnnInputs(spec, in, &lens));
    RnnOutputs out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, RnnYShape(spec, dims), &out.y));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, RnnStateShape(spec, dims), &out.yh));
    if (kCell == RnnCell::kLstm) SL_RETURN_IF_ERROR(ctx->allocate_output(2, RnnStateShape(spec, dims), &out.yc));
    RnnForward<double>(spec, in, dims, lens, out, ctx->intra_op_threads());
    return absl::OkStatus();
  }

 private:
  RnnAttrs<kCell> attrs_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>RNNGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        RecurrentGradOp<RnnCell::kRnn, float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>RNNGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        RecurrentGradOp<RnnCell::kRnn, double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GRUGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        RecurrentGradOp<RnnCell::kGru, float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GRUGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        RecurrentGradOp<RnnCell::kGru, double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>LSTMGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        RecurrentGradOp<RnnCell::kLstm, float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>LSTMGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        RecurrentGradOp<RnnCell::kLstm, double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>RNN").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        DoubleRecurrentOp<RnnCell::kRnn>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GRU").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        DoubleRecurrentOp<RnnCell::kGru>);
REGISTER_KERNEL_BUILDER(Name("Onnx>LSTM").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                        DoubleRecurrentOp<RnnCell::kLstm>);

}  // namespace
}  // namespace sluice
