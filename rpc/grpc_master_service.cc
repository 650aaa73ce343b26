#include "rpc/grpc_master_service.h"

#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_util.h"

namespace sluice {

grpc::Status GrpcMasterService::CreateSession(grpc::ServerContext* context,
                                              const rpc::CreateSessionRequest* request,
                                              rpc::CreateSessionResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  auto handle = master_->CreateSession(request->graph_def(), request->config(), CallerIdentity(*context, policy_));
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  response->set_session_handle(*handle);
  return grpc::Status::OK;
}

grpc::Status GrpcMasterService::ExtendSession(grpc::ServerContext* context,
                                              const rpc::ExtendSessionRequest* request,
                                              rpc::ExtendSessionResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  // Graph versions are not checked: Extend only adds nodes with new names.
  response->set_new_graph_version(request->current_graph_version() + 1);
  return ToGrpcStatus(
      master_->ExtendSession(request->session_handle(), request->graph_def(), CallerIdentity(*context, policy_)));
}

grpc::ServerUnaryReactor* GrpcMasterService::RunStep(grpc::CallbackServerContext* context,
                                                     const rpc::RunStepRequest* request,
                                                     rpc::RunStepResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    grpc::ServerUnaryReactor* refused = context->DefaultReactor();
    refused->Finish(ToGrpcStatus(s));
    return refused;
  }
  class Reactor : public grpc::ServerUnaryReactor {
   public:
    explicit Reactor(grpc::CallbackServerContext* context) : context_(context) {}
    // gRPC does not say why; a passed deadline is the likelier reason when it has passed.
    void OnCancel() override {
      const bool past_deadline = context_->deadline() <= std::chrono::system_clock::now();
      cancellation->StartCancel(
          past_deadline ? absl::DeadlineExceededError("the RunStep call's deadline passed")
                        : absl::CancelledError("the client cancelled the RunStep call or went away"));
    }
    void OnDone() override { delete this; }
    // Shared with the step's thread, which may outlive the reactor by its last instructions.
    const std::shared_ptr<CancellationManager> cancellation =
        std::make_shared<CancellationManager>();

   private:
    grpc::CallbackServerContext* const context_;
  };
  auto* reactor = new Reactor(context);
  // A thread per step rather than a pool: steps block until their workers finish, and a
  // bounded pool would make one client's long steps queue another's.
  std::thread([this, reactor, request, response, cancellation = reactor->cancellation,
               owner = CallerIdentity(*context, policy_)] {
    grpc::Status s = RunStepNow(request, response, owner, cancellation.get());
    reactor->Finish(s);  // Last use of the service, the request and the reactor.
  }).detach();
  return reactor;
}

grpc::Status GrpcMasterService::RunStepNow(const rpc::RunStepRequest* request,
                                           rpc::RunStepResponse* response, const std::string& owner,
                                           CancellationManager* cancellation) {
  if (!request->partial_run_handle().empty()) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "partial runs are not supported");
  }
  RunStepRequest req;
  req.session_handle = request->session_handle();
  req.options = request->options();
  req.request_id = request->request_id();
  req.owner = owner;
  req.cancellation = cancellation;
  for (const NamedTensorProto& named : request->feed()) {
    auto t = Tensor::FromWireProto(named.tensor());
    if (!t.ok()) return ToGrpcStatus(AddContext(t.status(), absl::StrCat("feed '", named.name(), "'")));
    req.feeds.emplace_back(named.name(), *std::move(t));
  }
  req.fetches.assign(request->fetch().begin(), request->fetch().end());
  req.targets.assign(request->target().begin(), request->target().end());
  RunStepResponse resp;
  absl::Status s = master_->RunStep(req, &resp);
  if (!s.ok()) return ToGrpcStatus(s);
  for (size_t i = 0; i < resp.outputs.size(); ++i) {
    NamedTensorProto* named = response->add_tensor();
    named->set_name(req.fetches[i]);
    resp.outputs[i].AsProtoTensorContent(named->mutable_tensor());
  }
  *response->mutable_metadata() = std::move(resp.metadata);
  return grpc::Status::OK;
}

grpc::Status GrpcMasterService::CloseSession(grpc::ServerContext* context,
                                             const rpc::CloseSessionRequest* request,
                                             rpc::CloseSessionResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(master_->CloseSession(request->session_handle(), CallerIdentity(*context, policy_)));
}

grpc::Status GrpcMasterService::ListDevices(grpc::ServerContext* context, const rpc::ListDevicesRequest*,
                                            rpc::ListDevicesResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<DeviceAttributes> devices;
  absl::Status s = master_->ListDevices(&devices);
  if (!s.ok()) return ToGrpcStatus(s);
  const std::string prefix = local_task_ + "/";
  for (auto& d : devices) {
    *(absl::StartsWith(d.name(), prefix) ? response->add_local_device()
                                         : response->add_remote_device()) = std::move(d);
  }
  return grpc::Status::OK;
}

grpc::Status GrpcMasterService::Reset(grpc::ServerContext* context, const rpc::ResetRequest*,
                                      rpc::ResetResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(master_->Reset(CallerIdentity(*context, policy_)));
}

}  // namespace sluice
