#include "rpc/grpc_worker.h"

#include <sys/socket.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "rpc/derived_tls.h"
#include "rpc/sealed_stream.h"
#include "framework/status.h"
#include "rpc/grpc_util.h"
#include "worker/recent_request_ids.h"
#include "rpc/tensor_coding.h"

namespace sluice {
namespace {

constexpr char kRecvTensorMethod[] = "/tensorflow.grpc.WorkerService/RecvTensor";
// The step of calls that belong to none (AbortStep never names it).
constexpr int64_t kNoStep = -1;

}  // namespace

GrpcWorker::GrpcWorker(std::string task, std::shared_ptr<grpc::Channel> channel,
                       GrpcWorkerOptions options)
    : task_(std::move(task)),
      options_(options),
      stub_(::tensorflow::grpc::WorkerService::NewStub(channel)),
      generic_stub_(channel) {}

GrpcWorker::~GrpcWorker() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  for (auto& [context, step] : in_flight_) context->TryCancel();
  for (auto& [fd, step] : stream_sockets_) shutdown(fd, SHUT_RDWR);
  mu_.Await(absl::Condition(
      +[](std::map<grpc::ClientContext*, int64_t>* m) { return m->empty(); }, &in_flight_));
  mu_.Await(absl::Condition(+[](int* n) { return *n == 0; }, &stream_threads_));
}

absl::Status GrpcWorker::Annotate(const grpc::Status& status, absl::string_view method) const {
  if (status.ok()) return absl::OkStatus();
  return AddContext(FromGrpcStatus(status), absl::StrCat(task_, " (", method, ")"));
}

bool GrpcWorker::Started(grpc::ClientContext* context, int64_t step_id, bool run_graph) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return false;
  in_flight_[context] = step_id;
  if (run_graph && aborted_steps_.Contains(step_id)) context->TryCancel();  // Fails as it starts.
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
  if (request.constants != nullptr) {
    SL_RETURN_IF_ERROR(InlineConstants(*request.constants, req.mutable_graph_def()));
  }
  *req.mutable_config_proto() = request.config;
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
  if (!Started(&call->context, request->step_id, /*run_graph=*/true)) {
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
  for (auto& [fd, step] : stream_sockets_) {
    if (step == step_id) shutdown(fd, SHUT_RDWR);
  }
  aborted_steps_.Insert(step_id);
}

struct GrpcWorker::Transfer {
  rpc::RecvTensorRequest request;  // The first request; chunks and same-host calls amend copies.
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
  if (options_.same_host_recv_tensor && !options_.peer_address.empty() &&
      !same_host_refused_.load(std::memory_order_relaxed)) {
    transfer->request.set_same_host_id(SameHostId());
  }
  if (options_.sealed_stream && !options_.peer_address.empty() &&
      !sealed_refused_.load(std::memory_order_relaxed)) {
    transfer->request.set_sealed_stream_ok(true);
  }
  transfer->response = response;
  transfer->done = std::move(done);
  RecvTensorChunk(std::move(transfer));
}

void GrpcWorker::CallRecvTensor(const rpc::RecvTensorRequest& request,
                                std::function<void(absl::Status, const grpc::ByteBuffer&)> on_answer) {
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  auto call = std::make_shared<Call>();
  grpc::Slice slice(request.SerializeAsString());
  call->request = grpc::ByteBuffer(&slice, 1);
  SetTimeout(&call->context, options_.step_timeout);
  if (!Started(&call->context, request.step_id())) {
    on_answer(absl::CancelledError(absl::StrCat("the client of ", task_, " is shutting down")),
              call->response);
    return;
  }
  generic_stub_.UnaryCall(&call->context, kRecvTensorMethod, grpc::StubOptions(), &call->request,
                          &call->response,
                          [this, call, on_answer = std::move(on_answer)](grpc::Status s) {
    on_answer(Annotate(s, "RecvTensor"), call->response);
    Finished(&call->context);  // Last: the destructor waits for it, and on_answer may call again.
  });
}

void GrpcWorker::RecvTensorChunk(std::shared_ptr<Transfer> transfer) {
  rpc::RecvTensorRequest request = transfer->request;
  request.set_content_offset(static_cast<int64_t>(transfer->decoder.received_bytes()));
  CallRecvTensor(request, [this, transfer](absl::Status s, const grpc::ByteBuffer& answer) {
    OnRecvTensorAnswer(transfer, std::move(s), answer);
  });
}

void GrpcWorker::OnRecvTensorAnswer(std::shared_ptr<Transfer> transfer, absl::Status status,
                                    const grpc::ByteBuffer& answer) {
  if (status.ok()) {
    status = transfer->decoder.Add(answer);
    if (!status.ok()) status = AddContext(status, absl::StrCat(task_, " (RecvTensor)"));
  }
  if (!status.ok()) {
    Finish(transfer, status);
  } else if (transfer->decoder.same_host_source() != nullptr &&
             transfer->decoder.same_host_source()->has_sealed_stream()) {
    ReadSealedStream(std::move(transfer));
  } else if (transfer->decoder.same_host_source() != nullptr) {
    ReadFromSender(std::move(transfer));
  } else if (!transfer->decoder.done()) {
    RecvTensorChunk(std::move(transfer));
  } else {
    Finish(transfer, absl::OkStatus());
  }
}

void GrpcWorker::ReadFromSender(std::shared_ptr<Transfer> transfer) {
  const rpc::SameHostSource source = *transfer->decoder.same_host_source();
  Tensor& tensor = transfer->decoder.response().tensor;
  // The pid comes from the answer: read only from the process that listens on the task's
  // address, whatever the answer claims.
  absl::Status read = VerifySameHostListener(source.pid(), options_.peer_address);
  if (read.ok()) {
    read = options_.same_host_read(source.pid(), source.address(), tensor.raw_data(),
                                   tensor.AllocatedBytes());
  }
  rpc::RecvTensorRequest request = transfer->request;
  request.set_same_host_lease(source.lease());
  if (read.ok()) {
    transfer->decoder.SetReceivedFromSameHost();
    // The copy counts only if the sender held the tensor all along: it still does now.
    request.set_same_host_action(rpc::RecvTensorRequest::SAME_HOST_RELEASE);
    CallRecvTensor(request, [this, transfer](absl::Status s, const grpc::ByteBuffer&) {
      Finish(transfer, s.ok() ? s : AddContext(s, "releasing a tensor read from the sender's memory"));
    });
    return;
  }
  if (read.code() == absl::StatusCode::kPermissionDenied || read.code() == absl::StatusCode::kUnimplemented) {
    same_host_refused_.store(true, std::memory_order_relaxed);
  }
  AskForBytes(std::move(transfer));
}

void GrpcWorker::AskForBytes(std::shared_ptr<Transfer> transfer) {
  rpc::RecvTensorRequest request = transfer->request;
  request.set_same_host_lease(transfer->decoder.same_host_source()->lease());
  transfer->decoder = RecvTensorDecoder();  // Frees the buffer meant for the copy.
  transfer->request.clear_same_host_id();
  transfer->request.clear_sealed_stream_ok();
  request.clear_same_host_id();
  request.clear_sealed_stream_ok();
  request.set_same_host_action(rpc::RecvTensorRequest::SAME_HOST_SEND_BYTES);
  CallRecvTensor(request, [this, transfer](absl::Status s, const grpc::ByteBuffer& answer) {
    OnRecvTensorAnswer(transfer, std::move(s), answer);
  });
}

void GrpcWorker::ReadSealedStream(std::shared_ptr<Transfer> transfer) {
  bool shutting_down;
  {
    absl::MutexLock lock(&mu_);
    shutting_down = shutting_down_;
    if (!shutting_down) ++stream_threads_;
  }
  if (shutting_down) {
    Finish(transfer, absl::CancelledError(absl::StrCat("the client of ", task_, " is shutting down")));
    return;
  }
  // A thread of its own: the stream takes as long as the bytes take to cross, and gRPC's
  // callback threads must not wait for that.
  std::thread([this, transfer = std::move(transfer)]() mutable {
    const rpc::SealedStream& stream = transfer->decoder.same_host_source()->sealed_stream();
    Tensor& tensor = transfer->decoder.response().tensor;
    const int64_t step = transfer->request.step_id();
    bool connected = false;
    std::pair<std::string, uint32_t> to{HostOfAddress(options_.peer_address), stream.port()};
    if (options_.sealed_stream_route) to = options_.sealed_stream_route(to.first, to.second);
    absl::Status s = ReceiveSealed(
        to.first, to.second, SealedStreamKeys{stream.token(), stream.key()},
        static_cast<char*>(tensor.raw_data()), tensor.AllocatedBytes(), options_.sealed_stream_timeout,
        [&](int fd, bool open) {
          absl::MutexLock lock(&mu_);
          if (!open) {
            stream_sockets_.erase(fd);
            return;
          }
          connected = true;
          stream_sockets_[fd] = step;
          if (shutting_down_ || aborted_steps_.Contains(step)) shutdown(fd, SHUT_RDWR);
        });
    if (s.ok()) {
      transfer->decoder.SetReceivedFromStream();
      Finish(transfer, s);
    } else if (!connected) {
      // Only the task's port may be open to this machine: gRPC carries the bytes instead.
      sealed_refused_.store(true, std::memory_order_relaxed);
      AskForBytes(std::move(transfer));
    } else {
      Finish(transfer, AddContext(s, absl::StrCat(task_, " (RecvTensor, sealed stream)")));
    }
    transfer.reset();
    absl::MutexLock lock(&mu_);
    --stream_threads_;  // Last: the destructor may be waiting for it.
  }).detach();
}

void GrpcWorker::Finish(const std::shared_ptr<Transfer>& transfer, const absl::Status& status) {
  if (status.ok()) *transfer->response = std::move(transfer->decoder.response());
  // The decoder still refers to the tensor's buffer, and gRPC may destroy the callback that
  // holds `transfer` only later: let the buffer go back to its pool with the tensor.
  transfer->decoder = RecvTensorDecoder();
  transfer->done(status);
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
