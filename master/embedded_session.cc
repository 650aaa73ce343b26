// The embedded session kind: an in-process worker and master, for the empty target.
#include "master/session.h"

#include "absl/synchronization/mutex.h"
#include "framework/status.h"
#include "master/master.h"
#include "worker/worker.h"

namespace sluice {
namespace {

// The embedded session: an in-process worker and master talking through the same
// interfaces the distributed runtime serves over gRPC.
class EmbeddedSession : public Session {
 public:
  explicit EmbeddedSession(const SessionOptions& options)
      : config_(options.config), worker_(WorkerOptionsFrom(options.config)), master_(&cache_) {
    cache_.Add(worker_.task_name(), &worker_);
  }

  ~EmbeddedSession() override { Close().IgnoreError(); }

  absl::Status Create(const GraphDef& graph) override { return Create(GraphDef(graph)); }

  absl::Status Create(GraphDef&& graph) override {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (!handle_.empty()) return absl::AlreadyExistsError("session already has a graph; use Extend");
    SL_ASSIGN_OR_RETURN(handle_, master_.CreateSession(std::move(graph), config_));
    return absl::OkStatus();
  }

  absl::Status Extend(const GraphDef& graph) override {
    const std::string* handle;
    SL_ASSIGN_OR_RETURN(handle, Handle(/*create_if_missing=*/true));
    return master_.ExtendSession(*handle, graph);
  }

  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override {
    return RunCancellable(run_options, inputs, output_names, target_nodes, outputs, run_metadata,
                          nullptr);
  }

  absl::Status RunCancellable(const RunOptions& run_options,
                              const std::vector<std::pair<std::string, Tensor>>& inputs,
                              const std::vector<std::string>& output_names,
                              const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                              RunMetadata* run_metadata, CancellationManager* cancellation) override {
    if (cancellation != nullptr && cancellation->IsCancelled()) return cancellation->status();
    const std::string* handle;
    SL_ASSIGN_OR_RETURN(handle, Handle(/*create_if_missing=*/true));
    static const std::string* const kNoOwner = new std::string();
    // The caller's vector is filled in place: its storage serves Run after Run.
    RunStepResponse resp;
    resp.outputs.swap(*outputs);
    absl::Status s = master_.RunStep(
        RunStepArgs{*handle, run_options, inputs, output_names, target_nodes, 0, *kNoOwner, cancellation},
        &resp);
    outputs->swap(resp.outputs);
    SL_RETURN_IF_ERROR(s);
    if (run_metadata != nullptr) *run_metadata = std::move(resp.metadata);
    return absl::OkStatus();
  }

  absl::Status ListDevices(std::vector<DeviceAttributes>* devices) override {
    return master_.ListDevices(devices);
  }

  absl::Status Close() override {
    std::string handle;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::OkStatus();
      closed_ = true;
      handle = handle_;
    }
    return handle.empty() ? absl::OkStatus() : master_.CloseSession(handle);
  }

 private:
  static WorkerOptions WorkerOptionsFrom(const ConfigProto& config) {
    WorkerOptions w;
    auto it = config.device_count().find("CPU");
    w.num_cpu_devices = it == config.device_count().end() ? 1 : std::max(1, it->second);
    w.intra_op_threads = config.intra_op_parallelism_threads();
    w.inter_op_threads = config.inter_op_parallelism_threads();
    // Unset, nodes run one at a time, each with every intra-op thread (ONNX Runtime's default
    // too): each inter-op thread that starts an OpenMP region gets its own team, and with more
    // teams than cores libgomp stops spinning between regions, so every small convolution
    // waits for its team to wake. With one intra-op thread, nodes run side by side instead.
    if (w.inter_op_threads <= 0 && w.intra_op_threads != 1) w.inter_op_threads = 1;
    return w;
  }

  // A session used before Create runs on an empty graph, as TensorFlow's does. The handle
  // never changes once set, so it is handed out by pointer, not copied for every Run.
  absl::StatusOr<const std::string*> Handle(bool create_if_missing) {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (handle_.empty() && create_if_missing) {
      SL_ASSIGN_OR_RETURN(handle_, master_.CreateSession(GraphDef(), config_));
    }
    return &handle_;
  }

  const ConfigProto config_;
  Worker worker_;
  LocalWorkerCache cache_;
  Master master_;
  absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

const bool kEmbeddedSessionRegistered = RegisterSessionFactory(
    "", "\"\"", [](const SessionOptions& options) -> absl::StatusOr<std::unique_ptr<Session>> {
      if (!options.target.empty()) {
        return absl::InvalidArgumentError("the embedded session takes only the empty target");
      }
      return std::unique_ptr<Session>(new EmbeddedSession(options));
    });

}  // namespace
}  // namespace sluice
