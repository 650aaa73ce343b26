// The structs behind the eager C API's handles (include/tensorflow/c/eager/c_api.h).
//
//   TFE_Context: the CPU device, its intra-op threads, the functions added to it and the
//                prepared kernels, keyed by (op, attrs): made once, then shared by every call.
//   TFE_Op:      one call being described: the op, attrs set so far, the inputs (values).
//   TFE_TensorHandle: a value (sluice::Tensor; strings as the runtime keeps them).
#ifndef SLUICE_C_API_EAGER_INTERNAL_H_
#define SLUICE_C_API_EAGER_INTERNAL_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api_internal.h"
#include "c_api/include/tensorflow/c/eager/c_api.h"
#include "framework/device.h"
#include "framework/tensor.h"
#include "framework/thread_pool.h"
#include "kernels/op_kernel.h"
#include "proto/function.pb.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"
#include "worker/executor.h"

struct TFE_ContextOptions {
  int intra_op_threads = 0;  // 0: every core.
  bool async = false;
  TFE_ContextDevicePlacementPolicy policy = TFE_DEVICE_PLACEMENT_SILENT;
};

namespace sluice {

// What runs one signature (op, complete attrs): a kernel for ops that need nothing but their
// inputs, or, for ops that call functions (and calls of the context's functions), an executor
// over `_Arg -> op -> _Retval` with the context's function library. Immutable once made.
struct EagerKernel {
  NodeDef node;  // Complete: defaults filled, checked against the OpDef.
  DataTypeVector input_types;
  DataTypeVector output_types;
  std::unique_ptr<OpKernel> kernel;    // Set for direct kernels...
  std::unique_ptr<Executor> executor;  // ...or this.
};

}  // namespace sluice

struct TFE_Context {
  std::unique_ptr<sluice::ThreadPool> intra_op_pool;  // Null for one thread.
  std::unique_ptr<sluice::Device> device;
  TFE_ContextDevicePlacementPolicy policy = TFE_DEVICE_PLACEMENT_SILENT;
  std::atomic<int64_t> next_step{1};

  absl::Mutex mu;
  // Prepared kernels by signature key (eager_op.cc's KernelKey).
  absl::flat_hash_map<std::string, std::shared_ptr<const sluice::EagerKernel>> kernels
      ABSL_GUARDED_BY(mu);
  // Functions added to the context, by name. Changing them drops the executors made with the
  // old library (kernels_ is cleared).
  sluice::FunctionDefLibrary functions ABSL_GUARDED_BY(mu);
};

struct TFE_TensorHandle {
  sluice::Tensor tensor;
};

struct TFE_Op {
  TFE_Context* ctx = nullptr;
  std::string name;                        // As given to TFE_NewOp.
  const sluice::OpDef* op_def = nullptr;   // Null for a call of one of the context's functions.
  sluice::NodeDef node;                    // op and attrs set so far.
  std::string device;
  std::vector<sluice::Tensor> inputs;      // Flat, in order.
  // Sizes of the groups the inputs were added in, and whether any group came from
  // TFE_OpAddInputList (then the groups are the op's input args, one each).
  std::vector<int> groups;
  bool any_list = false;
  // Handles handed out by TFE_OpGetFlatInput (made on demand, freed with the op).
  std::vector<std::unique_ptr<TFE_TensorHandle>> flat_input_handles;
  // The first misuse of a status-less setter, reported by TFE_Execute.
  absl::Status deferred;
};

namespace sluice {

// The CPU device name every eager value lives on.
inline constexpr char kEagerDeviceName[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// True for "" and names of the context's CPU device in TensorFlow's spellings
// ("/job:localhost/replica:0/task:0/device:CPU:0", "/device:CPU:0", "CPU:0", "cpu:0", ...).
bool IsEagerCpuDevice(absl::string_view name);

}  // namespace sluice

#endif  // SLUICE_C_API_EAGER_INTERNAL_H_
