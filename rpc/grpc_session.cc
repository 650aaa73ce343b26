#include "rpc/grpc_session.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "framework/status.h"
#include "proto/master_service.grpc.pb.h"
#include "rpc/grpc_util.h"
#include "worker/recent_request_ids.h"

namespace sluice {
namespace {

class GrpcSession : public Session {
 public:
  GrpcSession(const SessionOptions& options, std::shared_ptr<grpc::Channel> channel)
      : target_(options.target), config_(options.config), stub_(::tensorflow::grpc::MasterService::NewStub(channel)) {}

  ~GrpcSession() override { Close().IgnoreError(); }

  absl::Status Create(const GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (!handle_.empty()) return absl::AlreadyExistsError("session already has a graph; use Extend");
    return CreateLocked(graph);
  }

  absl::Status Extend(const GraphDef& graph) override {
    SL_ASSIGN_OR_RETURN(std::string handle, Handle());
    grpc::ClientContext context;
    SetTimeout(&context, kMasterControlTimeout);
    rpc::ExtendSessionRequest req;
    req.set_session_handle(handle);
    *req.mutable_graph_def() = graph;
    rpc::ExtendSessionResponse resp;
    return Annotate(stub_->ExtendSession(&context, req, &resp));
  }

  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override {
    return RunCancellable(run_options, inputs, output_names, target_nodes, outputs, run_metadata,
                          nullptr);
  }

  // Cancelling cancels the RunStep call; the master then cancels the step on every worker.
  absl::Status RunCancellable(const RunOptions& run_options,
                              const std::vector<std::pair<std::string, Tensor>>& inputs,
                              const std::vector<std::string>& output_names,
                              const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                              RunMetadata* run_metadata, CancellationManager* cancellation) override {
    SL_ASSIGN_OR_RETURN(std::string handle, Handle());
    rpc::RunStepRequest req;
    req.set_session_handle(handle);
    req.set_request_id(NewRequestId());
    *req.mutable_options() = run_options;
    for (const auto& [name, value] : inputs) {
      if (!value.IsInitialized()) {
        return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has no value"));
      }
      NamedTensorProto* named = req.add_feed();
      named->set_name(name);
      value.AsProtoTensorContent(named->mutable_tensor());
    }
    for (const std::string& name : output_names) req.add_fetch(name);
    for (const std::string& name : target_nodes) req.add_target(name);
    grpc::ClientContext context;
    const int64_t timeout_ms = run_options.timeout_in_ms() > 0 ? run_options.timeout_in_ms()
                                                               : config_.operation_timeout_in_ms();
    // The master enforces the step timeout itself; the call's deadline leaves it time to say so.
    SetTimeout(&context, timeout_ms > 0 ? absl::Milliseconds(timeout_ms) + absl::Seconds(10)
                                        : kDefaultStepTimeout);
    rpc::RunStepResponse resp;
    CancellationManager::Token token = 0;
    if (cancellation != nullptr &&
        !cancellation->RegisterCallback([&context](const absl::Status&) { context.TryCancel(); }, &token)) {
      return cancellation->status();
    }
    const grpc::Status call = stub_->RunStep(&context, req, &resp);
    if (cancellation != nullptr) {
      cancellation->DeregisterCallback(token);
      if (!call.ok() && cancellation->IsCancelled()) return cancellation->status();
    }
    SL_RETURN_IF_ERROR(Annotate(call));
    if (resp.tensor_size() != static_cast<int>(output_names.size())) {
      return absl::InternalError(absl::StrCat("the master at ", target_, " answered ",
                                              resp.tensor_size(), " tensors for ",
                                              output_names.size(), " fetches"));
    }
    outputs->clear();
    for (const NamedTensorProto& named : resp.tensor()) {
      auto t = Tensor::FromWireProto(named.tensor());
      SL_RETURN_IF_ERROR(t.status(), "fetch '", named.name(), "'");
      outputs->push_back(*std::move(t));
    }
    if (run_metadata != nullptr) *run_metadata = std::move(*resp.mutable_metadata());
    return absl::OkStatus();
  }

  absl::Status ListDevices(std::vector<DeviceAttributes>* devices) override {
    grpc::ClientContext context;
    SetTimeout(&context, kMasterControlTimeout);
    rpc::ListDevicesRequest req;
    rpc::ListDevicesResponse resp;
    SL_RETURN_IF_ERROR(Annotate(stub_->ListDevices(&context, req, &resp)));
    devices->assign(resp.local_device().begin(), resp.local_device().end());
    devices->insert(devices->end(), resp.remote_device().begin(), resp.remote_device().end());
    return absl::OkStatus();
  }

  absl::Status Close() override {
    std::string handle;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::OkStatus();
      closed_ = true;
      handle = handle_;
    }
    if (handle.empty()) return absl::OkStatus();
    grpc::ClientContext context;
    SetTimeout(&context, kMasterCloseTimeout);
    rpc::CloseSessionRequest req;
    req.set_session_handle(handle);
    rpc::CloseSessionResponse resp;
    return Annotate(stub_->CloseSession(&context, req, &resp));
  }

 private:
  // Errors the master reports pass through; failures to reach it name the target.
  absl::Status Annotate(const grpc::Status& status) const {
    absl::Status s = FromGrpcStatus(status);
    if (s.code() == absl::StatusCode::kUnavailable &&
        !absl::StrContains(s.message(), "/job:")) {
      return AddContext(s, absl::StrCat("master at ", target_));
    }
    return s;
  }

  absl::Status CreateLocked(const GraphDef& graph) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    grpc::ClientContext context;
    SetTimeout(&context, kMasterControlTimeout);
    rpc::CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    *req.mutable_config() = config_;
    req.set_target(target_);
    rpc::CreateSessionResponse resp;
    SL_RETURN_IF_ERROR(Annotate(stub_->CreateSession(&context, req, &resp)));
    handle_ = resp.session_handle();
    return absl::OkStatus();
  }

  // A session used before Create runs on an empty graph, as the embedded one does.
  absl::StatusOr<std::string> Handle() {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (handle_.empty()) SL_RETURN_IF_ERROR(CreateLocked(GraphDef()));
    return handle_;
  }

  const std::string target_;
  const ConfigProto config_;
  std::unique_ptr<::tensorflow::grpc::MasterService::Stub> stub_;
  absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options) {
  absl::string_view address = options.target;
  if (!absl::ConsumePrefix(&address, "grpc://") || address.empty() ||
      address.find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "session target '", options.target, "' is not of the form grpc://host:port"));
  }
  return std::unique_ptr<Session>(new GrpcSession(options, NewGrpcChannel(std::string(address))));
}

namespace {
const bool kGrpcSessionRegistered =
    RegisterSessionFactory("grpc://", "\"grpc://host:port\"", NewGrpcSession);
}  // namespace

}  // namespace sluice
