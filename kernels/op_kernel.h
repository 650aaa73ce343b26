// Kernels: the implementation of an op on a device. A kernel is built once per node (its
// attributes parsed in Init, which can fail) and then run many times, concurrently, through
// the const Compute. Kernels keep no per-run state.
//
//   class ReluOp : public OpKernel {
//    public:
//     absl::Status Compute(OpKernelContext* ctx) const override {
//       const Tensor& x = ctx->input(0);
//       Tensor* y;
//       SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
//       ...
//     }
//   };
//   REGISTER_KERNEL_BUILDER(Name("Relu").Device(DEVICE_CPU).TypeConstraint<float>("T"), ReluOp);
#ifndef SLUICE_KERNELS_OP_KERNEL_H_
#define SLUICE_KERNELS_OP_KERNEL_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "framework/cancellation.h"
#include "framework/device.h"
#include "framework/hoisted_constants.h"
#include "framework/node_attr.h"
#include "framework/rendezvous.h"
#include "framework/status.h"
#include "framework/tensor.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {

// The arguments and results of one function call: _Arg nodes read args, _Retval nodes set
// results.
class CallFrameInterface {
 public:
  virtual ~CallFrameInterface() = default;
  virtual absl::Status GetArg(int index, Tensor* value) const = 0;
  virtual absl::Status SetRetval(int index, const Tensor& value) = 0;
};

// Runs functions of the graph's library on the kernel's device (for If, Loop, Scan). The
// runtime outlives the kernels built with it. Run is thread-safe and synchronous; the body
// runs on the calling thread, and stops scheduling nodes once `cancellation` (the calling
// step's; may be null) is cancelled.
class FunctionRuntime {
 public:
  using Handle = int;
  virtual ~FunctionRuntime() = default;
  // Builds the function's kernels once; errors name the function.
  virtual absl::StatusOr<Handle> Instantiate(const std::string& function_name) = 0;
  virtual absl::Status Run(Handle handle, const std::vector<Tensor>& args,
                           std::vector<Tensor>* rets,
                           const CancellationManager* cancellation) const = 0;
  // Number of results the function returns.
  virtual int NumRets(Handle handle) const = 0;
};

// What a kernel sees while it is being built.
class OpKernelConstruction {
 public:
  OpKernelConstruction(const NodeDef& def, const OpDef& op_def, Device* device,
                       DataTypeVector input_types, DataTypeVector output_types,
                       FunctionRuntime* functions = nullptr,
                       const HoistedConstants* constants = nullptr)
      : def_(def), op_def_(op_def), device_(device), input_types_(std::move(input_types)),
        output_types_(std::move(output_types)), functions_(functions), constants_(constants) {}

  // Null when the graph has no function library runtime (kernels built outside an executor).
  FunctionRuntime* function_runtime() const { return functions_; }
  // The values of the graph's hoisted Consts (framework/hoisted_constants.h); null when the
  // graph was registered without any.
  const HoistedConstants* hoisted_constants() const { return constants_; }

  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return op_def_; }
  Device* device() const { return device_; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  AttrSlice attrs() const { return AttrSlice(def_); }

  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(attrs(), name, value);
  }

 private:
  const NodeDef& def_;
  const OpDef& op_def_;
  Device* device_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  FunctionRuntime* functions_;
  const HoistedConstants* constants_;
};

class OpKernelContext;

class OpKernel {
 public:
  virtual ~OpKernel() = default;

  // Parses attributes once; an error here fails graph registration, naming the node.
  virtual absl::Status Init(OpKernelConstruction* ctx) { return absl::OkStatus(); }
  virtual absl::Status Compute(OpKernelContext* ctx) const = 0;
  virtual bool IsAsync() const { return false; }
  // Cheap kernels run inline on the executor's thread instead of hopping to the pool.
  virtual bool IsExpensive() const { return true; }

  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  const DataTypeVector& output_types() const { return output_types_; }
  const DataTypeVector& input_types() const { return input_types_; }

 private:
  friend class KernelRegistry;
  NodeDef def_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
};

// A kernel that may wait (for a tensor from another device, an RPC) without holding a thread.
class AsyncOpKernel : public OpKernel {
 public:
  using DoneCallback = std::function<void(absl::Status)>;
  // Must call `done` exactly once; `ctx` stays valid until then.
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) const = 0;
  bool IsAsync() const override { return true; }
  // Synchronous fallback: waits for ComputeAsync.
  absl::Status Compute(OpKernelContext* ctx) const override;
};

// What a kernel sees while it runs: inputs, outputs, device, rendezvous.
class OpKernelContext {
 public:
  struct Params {
    int64_t step_id = 0;
    Device* device = nullptr;
    Rendezvous* rendezvous = nullptr;
    FrameAndIter frame_iter;
    const OpKernel* kernel = nullptr;
    absl::Span<const Tensor> inputs;
    CallFrameInterface* call_frame = nullptr;  // Set when running a function body.
    // The step's; null when run outside a step (kernel tests). Not owned.
    const CancellationManager* cancellation = nullptr;
  };

  explicit OpKernelContext(const Params& params)
      : params_(params), outputs_(params.kernel->output_types().size()) {}

  int num_inputs() const { return static_cast<int>(params_.inputs.size()); }
  const Tensor& input(int i) const { return params_.inputs[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType expected_output_dtype(int i) const { return params_.kernel->output_types()[i]; }

  // Allocates output `i` with the kernel's declared dtype.
  absl::Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Sets output `i` to an existing tensor (shares its buffer); checks the dtype.
  absl::Status set_output(int i, const Tensor& tensor);
  // Reuses input `input_index`'s buffer for output `output_index` when nothing else holds it
  // and dtype and size match; otherwise allocates.
  absl::Status forward_input_or_allocate_output(int input_index, int output_index,
                                                const TensorShape& shape, Tensor** out);

  Tensor& output(int i) { return outputs_[i]; }
  absl::InlinedVector<Tensor, 4>& outputs() { return outputs_; }

  const OpKernel& kernel() const { return *params_.kernel; }
  Device* device() const { return params_.device; }
  // Threads one kernel may use: the device's compute pool plus the calling thread.
  int intra_op_threads() const {
    return params_.device != nullptr && params_.device->compute_pool() != nullptr
               ? params_.device->compute_pool()->NumThreads() + 1
               : 1;
  }
  Rendezvous* rendezvous() const { return params_.rendezvous; }
  int64_t step_id() const { return params_.step_id; }
  const FrameAndIter& frame_iter() const { return params_.frame_iter; }
  CallFrameInterface* call_frame() const { return params_.call_frame; }
  // Null outside a step. Long kernels check it between iterations or chunks of work.
  const CancellationManager* cancellation() const { return params_.cancellation; }
  // OK, or the step's cancellation status: one atomic load while not cancelled.
  absl::Status CheckCancelled() const {
    if (params_.cancellation == nullptr || !params_.cancellation->IsCancelled()) {
      return absl::OkStatus();
    }
    return params_.cancellation->status();
  }

 private:
  Params params_;
  absl::InlinedVector<Tensor, 4> outputs_;
};

// Work done between two cancellation checks of a long kernel: tens of milliseconds of simple
// element work, so a deadline ends even one huge node promptly.
inline constexpr int64_t kCancellationSliceCost = int64_t{1} << 25;

// Calls slice(begin, end) over [0, n) in consecutive slices of about kCancellationSliceCost
// (each item costing `cost_per_item`), and stops early once the step is cancelled. The
// executor then fails the node with the step's status, so a partial output is never used.
template <typename Fn>
void ForEachCancellableSlice(const OpKernelContext* ctx, int64_t n, int64_t cost_per_item, Fn&& slice) {
  const int64_t per = std::max<int64_t>(1, kCancellationSliceCost / std::max<int64_t>(1, cost_per_item));
  const CancellationManager* cm = ctx != nullptr ? ctx->cancellation() : nullptr;
  for (int64_t begin = 0; begin < n;) {
    if (begin > 0 && cm != nullptr && cm->IsCancelled()) return;
    const int64_t end = per >= n - begin ? n : begin + per;
    slice(begin, end);
    begin = end;
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_OP_KERNEL_H_
