#include "worker/grpc_worker.h"

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "worker/grpc_util.h"
#include "worker/recent_request_ids.h"
#include "worker/tensor_coding.h"

namespace sluice {
namespace {

constexpr char kRecvTensorMethod[] = "/sluice.rpc.WorkerService/RecvTensor";
// The step of calls that belong to none (AbortStep never names it).
constexpr int64_t kNoStep = -1;

}  // namespace

GrpcWorker::GrpcWorker(std::string task, std::shared_ptr<grpc::Channel> channel,
                       GrpcWorkerOptions options)
    : task_(std::move(task)),
      options_(options),
      stub_(rpc::WorkerService::NewStub(channel)),
      generic_stub_(channel) {}

GrpcWorker::~GrpcWorker() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  for (auto& [context, step] : in_flight_) context->TryCancel();
  mu_.Await(absl::Condition(
      +[](std::map<grpc::ClientContext*, int64_t>* m) { return m->empty(); }, &in_flight_));
}

absl::Status GrpcWorker::Annotate(const grpc::Status& status, absl::string_view method) const {
  if (status.ok()) return absl::OkStatus();
  return AddContext(FromGrpcStatus(status), absl::StrCat(task_, " (", method, ")"));
}

bool GrpcWorker::Started(grpc::ClientContext* context, int64_t step_id) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return false;
  in_flight_[context] = step_id;
  return true;
}

void GrpcWorker::Finished(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(context);
}

absl::Status GrpcWorker::GetStatus(std::vector<DeviceAttributes>* devices) {
  grpc::ClientContext context;
  SetTimeout(&context, options_.connect_timeout);
  context.set_wait_for_ready(true);
  rpc::GetStatusRequest request;
  rpc::GetStatusResponse response;
  grpc::Status s = stub_->GetStatus(&context, request, &response);
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    s = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                     absl::StrCat("not reachable within ", absl::FormatDuration(options_.connect_timeout),
                                  " (", s.error_message(), ")"));
  }
  SL_RETURN_IF_ERROR(Annotate(s, "GetStatus"));
  devices->assign(response.device_attributes().begin(), response.device_attributes().end());
  return absl::OkStatus();
}

absl::Status GrpcWorker::RegisterGraph(const RegisterGraphRequest& request,
                                       RegisterGraphResponse* response) {
  grpc::ClientContext context;
  SetTimeout(&context, options_.control_timeout);
  rpc::RegisterGraphRequest req;
  req.set_session_handle(request.session_handle);
  *req.mutable_graph_def() = request.graph_def;
  rpc::RegisterGraphResponse resp;
  SL_RETURN_IF_ERROR(Annotate(stub_->RegisterGraph(&context, req, &resp), "RegisterGraph"));
  response->graph_handle = resp.graph_handle();
  return absl::OkStatus();
}

absl::Status GrpcWorker::DeregisterGraph(const std::string& graph_handle) {
  struct Call {
    grpc::ClientContext context;
    rpc::DeregisterGraphRequest request;
    rpc::DeregisterGraphResponse response;
  };
  auto call = std::make_shared<Call>();
  call->request.set_graph_handle(graph_handle);
  SetTimeout(&call->context, options_.control_timeout);
  if (!Started(&call->context, kNoStep)) return absl::OkStatus();
  stub_->async()->DeregisterGraph(&call->context, &call->request, &call->response,
                                  [this, call](grpc::Status) { Finished(&call->context); });
  return absl::OkStatus();
}

void GrpcWorker::RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                               StatusCallback done) {
  struct Call {
    grpc::ClientContext context;
    rpc::RunGraphRequest request;
    rpc::RunGraphResponse response;
  };
  auto call = std::make_shared<Call>();
  rpc::RunGraphRequest& req = call->request;
  req.set_graph_handle(request->graph_handle);
  req.set_step_id(request->step_id);
  // gRPC's retries resend these bytes, so a retry carries the same id.
  req.set_request_id(request->request_id != 0 ? request->request_id : NewRequestId());
  req.mutable_exec_opts()->set_record_timeline(request->collect_stats);
  for (const auto& [key, tensor] : request->send) {
    NamedTensorProto* named = req.add_send();
    named->set_name(key);
    tensor.AsProtoTensorContent(named->mutable_tensor());
  }
  for (const std::string& key : request->recv_key) req.add_recv_key(key);
  SetTimeout(&call->context, options_.step_timeout);
  if (!Started(&call->context, request->step_id)) {
    done(absl::CancelledError(absl::StrCat("the client of ", task_, " is shutting down")));
    return;
  }
  stub_->async()->RunGraph(&call->context, &call->request, &call->response,
                           [this, call, response, done = std::move(done)](grpc::Status s) {
    absl::Status status = Annotate(s, "RunGraph");
    if (status.ok()) {
      response->recv.clear();
      for (const NamedTensorProto& named : call->response.recv()) {
        auto t = Tensor::FromWireProto(named.tensor());
        if (!t.ok()) {
          status = AddContext(t.status(), absl::StrCat(task_, " (RunGraph): fetched '",
                                                       named.name(), "'"));
          break;
        }
        response->recv.emplace_back(named.name(), *std::move(t));
      }
      response->step_stats = std::move(*call->response.mutable_step_stats());
    }
    done(status);
    Finished(&call->context);  // Last: the destructor may be waiting for it.
  });
}

void GrpcWorker::AbortStep(int64_t step_id, const absl::Status& status) {
  // The remote worker aborts the step when its RunGraph call is cancelled.
  absl::MutexLock lock(&mu_);
  for (auto& [context, step] : in_flight_) {
    if (step == step_id) context->TryCancel();
  }
}

struct GrpcWorker::Transfer {
  rpc::RecvTensorRequest request;
  RecvTensorDecoder decoder;
  RecvTensorResponse* response;
  StatusCallback done;
};

void GrpcWorker::RecvTensorAsync(const RecvTensorRequest* request, RecvTensorResponse* response,
                                 StatusCallback done) {
  auto transfer = std::make_shared<Transfer>();
  transfer->request.set_step_id(request->step_id);
  transfer->request.set_rendezvous_key(request->rendezvous_key);
  transfer->request.set_request_id(request->request_id != 0 ? request->request_id
                                                            : NewRequestId());
  transfer->response = response;
  transfer->done = std::move(done);
  RecvTensorChunk(std::move(transfer));
}

void GrpcWorker::RecvTensorChunk(std::shared_ptr<Transfer> transfer) {
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  auto call = std::make_shared<Call>();
  transfer->request.set_content_offset(static_cast<int64_t>(transfer->decoder.received_bytes()));
  grpc::Slice slice(transfer->request.SerializeAsString());
  call->request = grpc::ByteBuffer(&slice, 1);
  SetTimeout(&call->context, options_.step_timeout);
  if (!Started(&call->context, transfer->request.step_id())) {
    transfer->done(absl::CancelledError(absl::StrCat("the client of ", task_, " is shutting down")));
    return;
  }
  generic_stub_.UnaryCall(&call->context, kRecvTensorMethod, grpc::StubOptions(), &call->request,
                          &call->response, [this, transfer, call](grpc::Status s) {
    absl::Status status = Annotate(s, "RecvTensor");
    if (status.ok()) {
      status = transfer->decoder.Add(call->response);
      if (!status.ok()) status = AddContext(status, absl::StrCat(task_, " (RecvTensor)"));
    }
    if (status.ok() && !transfer->decoder.done()) {
      RecvTensorChunk(transfer);  // Before Finished: the destructor waits for both.
    } else {
      if (status.ok()) *transfer->response = std::move(transfer->decoder.response());
      transfer->done(status);
    }
    Finished(&call->context);
  });
}

void GrpcWorker::CleanupGraph(int64_t step_id) {
  struct Call {
    grpc::ClientContext context;
    rpc::CleanupGraphRequest request;
    rpc::CleanupGraphResponse response;
  };
  auto call = std::make_shared<Call>();
  call->request.set_step_id(step_id);
  SetTimeout(&call->context, options_.control_timeout);
  if (!Started(&call->context, step_id)) return;
  // Nobody waits: a lost cleanup leaves a little memory on the worker, nothing more.
  stub_->async()->CleanupGraph(&call->context, &call->request, &call->response,
                               [this, call](grpc::Status) { Finished(&call->context); });
}

}  // namespace sluice
