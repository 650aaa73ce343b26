// _Arg/_Retval and the functional control-flow kernels: ONNX's If, Loop and Scan, TensorFlow's
// If, While and (Stateful)PartitionedCall. Bodies are
// instantiated once (in Init) through the graph's FunctionRuntime and run synchronously, with
// the step's cancellation: a body stops between nodes, and Loop and Scan between iterations,
// once the step is cancelled (a deadline, a client gone, another task failed).
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// A function's _Arg or _Retval index: the call frame counts in int, so a hostile 2^32 would
// have read as argument 0.
absl::Status GetFrameIndex(OpKernelConstruction* ctx, int64_t* index) {
  SL_RETURN_IF_ERROR(ctx->GetAttr("index", index));
  if (*index < 0 || *index > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx->def().op(), " '", ctx->def().name(), "' has index ", *index, ", out of range"));
  }
  return absl::OkStatus();
}

class ArgOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return GetFrameIndex(ctx, &index_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    if (ctx->call_frame() == nullptr) return absl::InternalError("_Arg run outside a function call");
    Tensor value;
    SL_RETURN_IF_ERROR(ctx->call_frame()->GetArg(index_, &value));
    if (value.dtype() != ctx->expected_output_dtype(0)) {
      return absl::InvalidArgumentError(absl::StrCat("function argument ", index_, " is ",
                                                     DataTypeString(value.dtype()), ", the body expects ",
                                                     DataTypeString(ctx->expected_output_dtype(0))));
    }
    return ctx->set_output(0, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return GetFrameIndex(ctx, &index_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    if (ctx->call_frame() == nullptr) return absl::InternalError("_Retval run outside a function call");
    return ctx->call_frame()->SetRetval(index_, ctx->input(0));
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

absl::StatusOr<FunctionRuntime::Handle> InstantiateAttr(OpKernelConstruction* ctx, const char* attr) {
  NameAttrList f;
  SL_RETURN_IF_ERROR(ctx->GetAttr(attr, &f));
  if (ctx->function_runtime() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("'", attr, "' needs a function library, and the graph has none"));
  }
  return ctx->function_runtime()->Instantiate(f.name());
}

absl::StatusOr<bool> Truth(const Tensor& t, absl::string_view what) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must have one element, got shape ", t.shape().DebugString()));
  }
  bool v = false;
  bool ok = VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, tstring>) {
      v = !t.flat<T>()[0].empty();
    } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      v = t.flat<T>()[0] != T(0);
    } else {
      v = static_cast<float>(t.flat<T>()[0]) != 0.0f;
    }
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(what, " has an unusable dtype"));
  return v;
}

absl::Status CheckRets(const std::vector<Tensor>& rets, size_t first, const DataTypeVector& want,
                       size_t want_first, size_t count, absl::string_view what) {
  for (size_t i = 0; i < count; ++i) {
    if (rets[first + i].dtype() != want[want_first + i]) {
      return absl::InvalidArgumentError(absl::StrCat(what, " result ", first + i, " is ",
                                                     DataTypeString(rets[first + i].dtype()), ", expected ",
                                                     DataTypeString(want[want_first + i])));
    }
  }
  return absl::OkStatus();
}

class IfOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(then_, InstantiateAttr(ctx, "then_branch"));
    SL_ASSIGN_OR_RETURN(else_, InstantiateAttr(ctx, "else_branch"));
    functions_ = ctx->function_runtime();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(bool cond, Truth(ctx->input(0), "If's cond"));
    std::vector<Tensor> args(ctx->num_inputs() - 1);
    for (int i = 1; i < ctx->num_inputs(); ++i) args[i - 1] = ctx->input(i);
    std::vector<Tensor> rets;
    SL_RETURN_IF_ERROR(functions_->Run(cond ? then_ : else_, args, &rets, ctx->cancellation()));
    if (static_cast<int>(rets.size()) != ctx->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("the ", cond ? "then" : "else", " branch returned ",
                                                     rets.size(), " values, If has ", ctx->num_outputs(), " outputs"));
    }
    for (size_t i = 0; i < rets.size(); ++i) SL_RETURN_IF_ERROR(ctx->set_output(i, rets[i]));
    return absl::OkStatus();
  }

 private:
  FunctionRuntime* functions_ = nullptr;
  FunctionRuntime::Handle then_ = -1, else_ = -1;
};

// The values a body returned, checked against the types they must have.
absl::Status CheckTypes(const std::vector<Tensor>& rets, const DataTypeVector& want,
                        absl::string_view what) {
  if (rets.size() != want.size()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " returned ", rets.size(),
                                                   " values, expected ", want.size()));
  }
  return CheckRets(rets, 0, want, 0, want.size(), what);
}

// TensorFlow's While: while cond(values) is true, values = body(values).
class WhileOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(cond_, InstantiateAttr(ctx, "cond"));
    SL_ASSIGN_OR_RETURN(body_, InstantiateAttr(ctx, "body"));
    functions_ = ctx->function_runtime();
    return ctx->GetAttr("T", &types_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    std::vector<Tensor> values(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) values[i] = ctx->input(i);
    for (int64_t it = 0;; ++it) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled(), "While iteration ", it);
      std::vector<Tensor> c;
      SL_RETURN_IF_ERROR(functions_->Run(cond_, values, &c, ctx->cancellation()), "While's cond");
      if (c.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("While's cond returned ", c.size(), " values, expected 1"));
      }
      SL_ASSIGN_OR_RETURN(bool go_on, Truth(c[0], "While's cond"));
      if (!go_on) break;
      std::vector<Tensor> next;
      SL_RETURN_IF_ERROR(functions_->Run(body_, values, &next, ctx->cancellation()),
                         "While's body, iteration ", it);
      SL_RETURN_IF_ERROR(CheckTypes(next, types_, "While's body"));
      values = std::move(next);
    }
    for (size_t i = 0; i < values.size(); ++i) SL_RETURN_IF_ERROR(ctx->set_output(i, values[i]));
    return absl::OkStatus();
  }

 private:
  FunctionRuntime* functions_ = nullptr;
  FunctionRuntime::Handle cond_ = -1, body_ = -1;
  DataTypeVector types_;
};

// TensorFlow's PartitionedCall and StatefulPartitionedCall: f(args).
class CallOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(f_, InstantiateAttr(ctx, "f"));
    functions_ = ctx->function_runtime();
    return ctx->GetAttr("Tout", &out_types_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    std::vector<Tensor> args(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) args[i] = ctx->input(i);
    std::vector<Tensor> rets;
    SL_RETURN_IF_ERROR(functions_->Run(f_, args, &rets, ctx->cancellation()));
    SL_RETURN_IF_ERROR(CheckTypes(rets, out_types_, "the called function"));
    for (size_t i = 0; i < rets.size(); ++i) SL_RETURN_IF_ERROR(ctx->set_output(i, rets[i]));
    return absl::OkStatus();
  }

 private:
  FunctionRuntime* functions_ = nullptr;
  FunctionRuntime::Handle f_ = -1;
  DataTypeVector out_types_;
};

size_t ElementSize(DataType dt) { return dt == DT_STRING ? sizeof(tstring) : DataTypeSize(dt); }

// Copies `count` elements (strings by assignment, others by bytes).
void CopyElements(const Tensor& src, int64_t src_offset, Tensor* dst, int64_t dst_offset, int64_t count) {
  if (src.dtype() == DT_STRING) {
    for (int64_t i = 0; i < count; ++i) dst->flat<tstring>()[dst_offset + i] = src.flat<tstring>()[src_offset + i];
    return;
  }
  const size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + dst_offset * es,
              static_cast<const char*>(src.raw_data()) + src_offset * es, count * es);
}

// Stacks equally shaped slices along a new `axis` of the result.
absl::StatusOr<Tensor> Stack(const std::vector<Tensor>& slices, int64_t axis, DataType dtype,
                             absl::string_view what) {
  if (slices.empty()) return Tensor::Allocate(dtype, TensorShape({0}));
  const TensorShape& s = slices[0].shape();
  for (const Tensor& t : slices) {
    if (t.shape() != s) {
      return absl::InvalidArgumentError(absl::StrCat(what, " changes shape between iterations: ",
                                                     s.DebugString(), " then ", t.shape().DebugString()));
    }
  }
  if (axis < 0) axis += s.dims() + 1;
  if (axis < 0 || axis > s.dims()) return absl::InvalidArgumentError(absl::StrCat(what, " axis out of range"));
  TensorShape out_shape = s;
  out_shape.InsertDim(static_cast<int>(axis), static_cast<int64_t>(slices.size()));
  SL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, out_shape));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s.dim_size(i);
  for (int i = static_cast<int>(axis); i < s.dims(); ++i) inner *= s.dim_size(i);
  const int64_t n = static_cast<int64_t>(slices.size());
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t o = 0; o < outer; ++o) CopyElements(slices[k], o * inner, &out, (o * n + k) * inner, inner);
  }
  return out;
}

// Slice `index` of `t` along `axis`, with that axis removed.
absl::StatusOr<Tensor> SliceAt(const Tensor& t, int64_t axis, int64_t index) {
  TensorShape s = t.shape();
  const int64_t n = s.dim_size(static_cast<int>(axis));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s.dim_size(i);
  for (int i = static_cast<int>(axis) + 1; i < s.dims(); ++i) inner *= s.dim_size(i);
  s.RemoveDim(static_cast<int>(axis));
  SL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), s));
  for (int64_t o = 0; o < outer; ++o) CopyElements(t, (o * n + index) * inner, &out, o * inner, inner);
  return out;
}

class LoopOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(body_, InstantiateAttr(ctx, "body"));
    functions_ = ctx->function_runtime();
    DataTypeVector tm, tc, tcap;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tm", &tm));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tc", &tc));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tloop", &loop_types_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tcap", &tcap));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tout", &out_types_));
    has_max_ = !tm.empty();
    has_cond_ = !tc.empty();
    num_captured_ = static_cast<int>(tcap.size());
    if (out_types_.size() < loop_types_.size()) {
      return absl::InvalidArgumentError("Loop has fewer outputs than loop-carried values");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    int next = 0;
    // ONNX: the loop runs while `iteration < M && cond`, so a negative M runs no iteration
    // (ONNX Runtime agrees) and the outputs are the initial values. Without M only cond, and
    // the step's deadline, end it.
    int64_t max_trips = std::numeric_limits<int64_t>::max();
    bool cond = true;
    if (has_max_) {
      const Tensor& m = ctx->input(next++);
      if (m.NumElements() != 1 || m.dtype() != DT_INT64) return absl::InvalidArgumentError("Loop M must be one int64");
      max_trips = m.flat<int64_t>()[0];
    }
    if (has_cond_) {
      SL_ASSIGN_OR_RETURN(cond, Truth(ctx->input(next++), "Loop's cond"));
    }
    const size_t nv = loop_types_.size();
    std::vector<Tensor> vars(nv), captured(num_captured_);
    for (size_t i = 0; i < nv; ++i) vars[i] = ctx->input(next++);
    for (int i = 0; i < num_captured_; ++i) captured[i] = ctx->input(next++);
    const size_t ns = out_types_.size() - nv;
    std::vector<std::vector<Tensor>> scans(ns);
    for (int64_t it = 0; it < max_trips && cond; ++it) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled(), "Loop iteration ", it);
      std::vector<Tensor> args;
      args.reserve(2 + nv + captured.size());
      args.push_back(Tensor::Scalar<int64_t>(it));
      args.push_back(Tensor::Scalar<bool>(cond));
      args.insert(args.end(), vars.begin(), vars.end());
      args.insert(args.end(), captured.begin(), captured.end());
      std::vector<Tensor> rets;
      SL_RETURN_IF_ERROR(functions_->Run(body_, args, &rets, ctx->cancellation()));
      if (rets.size() != 1 + nv + ns) {
        return absl::InvalidArgumentError(absl::StrCat("Loop body returned ", rets.size(), " values, expected ", 1 + nv + ns));
      }
      SL_ASSIGN_OR_RETURN(cond, Truth(rets[0], "the Loop body's cond"));
      SL_RETURN_IF_ERROR(CheckRets(rets, 1, out_types_, 0, nv, "Loop body"));
      for (size_t i = 0; i < nv; ++i) vars[i] = rets[1 + i];
      for (size_t i = 0; i < ns; ++i) scans[i].push_back(rets[1 + nv + i]);
      if (!has_max_ && !has_cond_ && it > (int64_t{1} << 40)) {
        return absl::InvalidArgumentError("Loop has neither M nor cond and never stops");
      }
    }
    for (size_t i = 0; i < nv; ++i) SL_RETURN_IF_ERROR(ctx->set_output(i, vars[i]));
    for (size_t i = 0; i < ns; ++i) {
      SL_ASSIGN_OR_RETURN(Tensor stacked, Stack(scans[i], 0, out_types_[nv + i], absl::StrCat("scan output ", i)));
      SL_RETURN_IF_ERROR(ctx->set_output(nv + i, stacked));
    }
    return absl::OkStatus();
  }

 private:
  FunctionRuntime* functions_ = nullptr;
  FunctionRuntime::Handle body_ = -1;
  bool has_max_ = false, has_cond_ = false;
  int num_captured_ = 0;
  DataTypeVector loop_types_, out_types_;
};

class ScanOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(body_, InstantiateAttr(ctx, "body"));
    functions_ = ctx->function_runtime();
    DataTypeVector tin, tcap;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tin", &tin));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tcap", &tcap));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tout", &out_types_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("num_scan_inputs", &num_scan_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("scan_input_axes", &in_axes_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("scan_input_directions", &in_dirs_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("scan_output_axes", &out_axes_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("scan_output_directions", &out_dirs_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("batch_major", &batch_major_));
    num_inputs_ = static_cast<int>(tin.size());
    num_captured_ = static_cast<int>(tcap.size());
    num_states_ = num_inputs_ - static_cast<int>(num_scan_);
    if (num_states_ < 0 || static_cast<int>(out_types_.size()) < num_states_) {
      return absl::InvalidArgumentError("Scan has more scan inputs than inputs, or too few outputs");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    std::vector<Tensor> inputs(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) inputs[i] = ctx->input(i);
    std::vector<Tensor> outputs;
    if (!batch_major_) {
      SL_RETURN_IF_ERROR(ScanOne(ctx, inputs, &outputs));
    } else {
      // Scan each batch entry on its own, then stack the results along the batch axis.
      const int64_t batch = inputs.empty() || inputs[0].dims() == 0 ? 0 : inputs[0].dim_size(0);
      std::vector<std::vector<Tensor>> per_output(out_types_.size());
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<Tensor> slice(inputs.size());
        for (int i = 0; i < num_inputs_; ++i) {
          if (inputs[i].dims() == 0 || inputs[i].dim_size(0) != batch) {
            return absl::InvalidArgumentError("Scan-8 inputs must share the batch dimension");
          }
          SL_ASSIGN_OR_RETURN(slice[i], SliceAt(inputs[i], 0, b));
        }
        for (size_t i = num_inputs_; i < inputs.size(); ++i) slice[i] = inputs[i];
        std::vector<Tensor> outs;
        SL_RETURN_IF_ERROR(ScanOne(ctx, slice, &outs));
        for (size_t k = 0; k < outs.size(); ++k) per_output[k].push_back(outs[k]);
      }
      for (size_t k = 0; k < per_output.size(); ++k) {
        SL_ASSIGN_OR_RETURN(Tensor stacked, Stack(per_output[k], 0, out_types_[k], absl::StrCat("output ", k)));
        outputs.push_back(stacked);
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) SL_RETURN_IF_ERROR(ctx->set_output(k, outputs[k]));
    return absl::OkStatus();
  }

 private:
  absl::Status ScanOne(OpKernelContext* ctx, const std::vector<Tensor>& inputs,
                       std::vector<Tensor>* outputs) const {
    const int ns = num_states_, nscan = static_cast<int>(num_scan_);
    const int nout = static_cast<int>(out_types_.size()) - ns;
    std::vector<Tensor> states(ns);
    for (int i = 0; i < ns; ++i) states[i] = inputs[i];
    std::vector<int64_t> axes(nscan);
    int64_t length = -1;
    for (int j = 0; j < nscan; ++j) {
      const Tensor& t = inputs[ns + j];
      int64_t a = j < static_cast<int>(in_axes_.size()) ? in_axes_[j] : 0;
      if (a < 0) a += t.dims();
      if (a < 0 || a >= t.dims()) return absl::InvalidArgumentError(absl::StrCat("scan input ", j, " axis out of range"));
      axes[j] = a;
      if (length >= 0 && t.dim_size(static_cast<int>(a)) != length) {
        return absl::InvalidArgumentError("Scan inputs disagree on the sequence length");
      }
      length = t.dim_size(static_cast<int>(a));
    }
    if (length < 0) length = 0;
    std::vector<std::vector<Tensor>> outs(nout);
    for (int64_t step = 0; step < length; ++step) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled(), "Scan iteration ", step);
      std::vector<Tensor> args = states;
      for (int j = 0; j < nscan; ++j) {
        const bool reverse = j < static_cast<int>(in_dirs_.size()) && in_dirs_[j] == 1;
        SL_ASSIGN_OR_RETURN(Tensor slice, SliceAt(inputs[ns + j], axes[j], reverse ? length - 1 - step : step));
        args.push_back(std::move(slice));
      }
      for (int c = 0; c < num_captured_; ++c) args.push_back(inputs[num_inputs_ + c]);
      std::vector<Tensor> rets;
      SL_RETURN_IF_ERROR(functions_->Run(body_, args, &rets, ctx->cancellation()));
      if (static_cast<int>(rets.size()) != ns + nout) {
        return absl::InvalidArgumentError(absl::StrCat("Scan body returned ", rets.size(), " values, expected ", ns + nout));
      }
      SL_RETURN_IF_ERROR(CheckRets(rets, 0, out_types_, 0, ns, "Scan body"));
      for (int i = 0; i < ns; ++i) states[i] = rets[i];
      for (int k = 0; k < nout; ++k) outs[k].push_back(rets[ns + k]);
    }
    outputs->assign(states.begin(), states.end());
    for (int k = 0; k < nout; ++k) {
      if (k < static_cast<int>(out_dirs_.size()) && out_dirs_[k] == 1) std::reverse(outs[k].begin(), outs[k].end());
      int64_t axis = k < static_cast<int>(out_axes_.size()) ? out_axes_[k] : 0;
      SL_ASSIGN_OR_RETURN(Tensor stacked, Stack(outs[k], axis, out_types_[ns + k], absl::StrCat("scan output ", k)));
      outputs->push_back(stacked);
    }
    return absl::OkStatus();
  }

  FunctionRuntime* functions_ = nullptr;
  FunctionRuntime::Handle body_ = -1;
  int64_t num_scan_ = 0;
  int num_inputs_ = 0, num_captured_ = 0, num_states_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
  DataTypeVector out_types_;
  bool batch_major_ = false;
};

REGISTER_KERNEL_BUILDER(Name("_Arg").Device(DEVICE_CPU), ArgOp);
REGISTER_KERNEL_BUILDER(Name("_Retval").Device(DEVICE_CPU), RetvalOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>If").Device(DEVICE_CPU), IfOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Loop").Device(DEVICE_CPU), LoopOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Scan").Device(DEVICE_CPU), ScanOp);
REGISTER_KERNEL_BUILDER(Name("If").Device(DEVICE_CPU), IfOp);
REGISTER_KERNEL_BUILDER(Name("StatelessIf").Device(DEVICE_CPU), IfOp);
REGISTER_KERNEL_BUILDER(Name("While").Device(DEVICE_CPU), WhileOp);
REGISTER_KERNEL_BUILDER(Name("StatelessWhile").Device(DEVICE_CPU), WhileOp);
REGISTER_KERNEL_BUILDER(Name("PartitionedCall").Device(DEVICE_CPU), CallOp);
REGISTER_KERNEL_BUILDER(Name("StatefulPartitionedCall").Device(DEVICE_CPU), CallOp);

}  // namespace
}  // namespace sluice
