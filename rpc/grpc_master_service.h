// MasterService over a Master: converts requests, responses and statuses, nothing more. Control
// calls block a gRPC thread each, through gRPC's synchronous API. RunStep is a callback
// method instead, so that it learns when its call is cancelled (the client cancelled it, went
// away or let its deadline pass) and cancels the step on every worker; the step itself runs
// on a thread of its own.
//
//   Master master(&worker_cache);
//   GrpcMasterService service(&master, "/job:worker/replica:0/task:0");
//   builder.RegisterService(&service);
#ifndef SLUICE_RPC_GRPC_MASTER_SERVICE_H_
#define SLUICE_RPC_GRPC_MASTER_SERVICE_H_

#include <string>

#include "framework/cancellation.h"
#include "master/master.h"
#include "rpc/grpc_security.h"
#include "proto/master_service.grpc.pb.h"

namespace sluice {

using GrpcMasterServiceBase = ::tensorflow::grpc::MasterService::WithCallbackMethod_RunStep<::tensorflow::grpc::MasterService::Service>;

class GrpcMasterService : public GrpcMasterServiceBase {
 public:
  // `master` is not owned and must outlive the service. ListDevices reports the devices of
  // `local_task` as local.
  GrpcMasterService(Master* master, std::string local_task)
      : master_(master), local_task_(std::move(local_task)) {}

  grpc::Status CreateSession(grpc::ServerContext* context, const rpc::CreateSessionRequest* request,
                             rpc::CreateSessionResponse* response) override;
  grpc::Status ExtendSession(grpc::ServerContext* context, const rpc::ExtendSessionRequest* request,
                             rpc::ExtendSessionResponse* response) override;
  grpc::ServerUnaryReactor* RunStep(grpc::CallbackServerContext* context,
                                    const rpc::RunStepRequest* request,
                                    rpc::RunStepResponse* response) override;
  grpc::Status CloseSession(grpc::ServerContext* context, const rpc::CloseSessionRequest* request,
                            rpc::CloseSessionResponse* response) override;
  grpc::Status ListDevices(grpc::ServerContext* context, const rpc::ListDevicesRequest* request,
                           rpc::ListDevicesResponse* response) override;
  grpc::Status Reset(grpc::ServerContext* context, const rpc::ResetRequest* request,
                     rpc::ResetResponse* response) override;

  // What callers must present (rpc/grpc_security.h): as the server's own security says.
  void set_security(const GrpcSecurity& security) { policy_ = CallerPolicy::For(security); }

 private:
  // Runs the step on the calling thread for `owner` (CallerIdentity); `cancellation` is the
  // call's.
  grpc::Status RunStepNow(const rpc::RunStepRequest* request, rpc::RunStepResponse* response,
                          const std::string& owner, CancellationManager* cancellation);

  Master* const master_;
  CallerPolicy policy_;
  const std::string local_task_;
};

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_MASTER_SERVICE_H_
