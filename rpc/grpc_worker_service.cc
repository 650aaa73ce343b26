#include "rpc/grpc_worker_service.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/status.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_util.h"
#include "rpc/same_host_transfer.h"
#include "rpc/tensor_coding.h"

namespace sluice {
namespace {

// Finishes a call at most once, from whichever comes first: the worker's answer or the call's
// cancellation. Shared with the worker's callback, which may outlive the call.
class OnceReactor : public grpc::ServerUnaryReactor {
 public:
  struct State {
    absl::Mutex mu;
    OnceReactor* reactor ABSL_GUARDED_BY(mu);  // Null once finished.
  };
  OnceReactor() : state_(std::make_shared<State>()) { state_->reactor = this; }
  std::shared_ptr<State> state() const { return state_; }

  // Runs `fill` and finishes with `status`, unless the call already finished. Returns
  // whether it did.
  static bool FinishOnce(const std::shared_ptr<State>& state, const grpc::Status& status,
                         const std::function<void()>& fill = nullptr) {
    absl::MutexLock lock(&state->mu);
    if (state->reactor == nullptr) return false;
    if (fill && status.ok()) fill();
    state->reactor->Finish(status);
    state->reactor = nullptr;
    return true;
  }

  void OnDone() override { delete this; }

 protected:
  std::shared_ptr<State> state_;
};

}  // namespace

grpc::Status GrpcWorkerService::GetStatus(grpc::ServerContext* context, const rpc::GetStatusRequest*,
                                          rpc::GetStatusResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<DeviceAttributes> devices;
  absl::Status s = worker_->GetStatus(&devices);
  for (auto& d : devices) *response->add_device_attributes() = std::move(d);
  return ToGrpcStatus(s);
}

// Sluice keeps no per-session state on workers beyond registered graphs.
grpc::Status GrpcWorkerService::CreateWorkerSession(grpc::ServerContext* context,
                                                    const rpc::CreateWorkerSessionRequest*,
                                                    rpc::CreateWorkerSessionResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::DeleteWorkerSession(grpc::ServerContext* context,
                                                    const rpc::DeleteWorkerSessionRequest*,
                                                    rpc::DeleteWorkerSessionResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::RegisterGraph(grpc::ServerContext* context,
                                              const rpc::RegisterGraphRequest* request,
                                              rpc::RegisterGraphResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  RegisterGraphRequest req;
  req.session_handle = request->session_handle();
  // Large constants are hoisted as the graph is copied: the worker then holds one copy of
  // each besides the request's own.
  auto constants = std::make_shared<HoistedConstants>();
  for (const NodeDef& node : request->graph_def().node()) {
    NodeDef* copy = req.graph_def.add_node();
    *copy = node;
    if (!IsHoisted(node)) HoistConstant(copy, constants.get());
  }
  *req.graph_def.mutable_library() = request->graph_def().library();
  *req.graph_def.mutable_versions() = request->graph_def().versions();
  req.constants = std::move(constants);
  req.config = request->config_proto();
  RegisterGraphResponse resp;
  absl::Status s = worker_->RegisterGraph(req, &resp);
  response->set_graph_handle(resp.graph_handle);
  return ToGrpcStatus(s);
}

grpc::Status GrpcWorkerService::DeregisterGraph(grpc::ServerContext* context,
                                                const rpc::DeregisterGraphRequest* request,
                                                rpc::DeregisterGraphResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(worker_->DeregisterGraph(request->graph_handle()));
}

grpc::Status GrpcWorkerService::CleanupGraph(grpc::ServerContext* context,
                                             const rpc::CleanupGraphRequest* request,
                                             rpc::CleanupGraphResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  worker_->CleanupGraph(request->step_id());
  DropTransfers(request->step_id());
  return grpc::Status::OK;
}

void GrpcWorkerService::DropTransfers(int64_t step_id) {
  std::vector<Transfer> dropped;  // Freed outside the lock.
  absl::MutexLock lock(&mu_);
  auto first = transfers_.lower_bound({step_id, ""});
  auto last = transfers_.lower_bound({step_id + 1, ""});
  for (auto it = first; it != last; ++it) {
    ForgetToken(it->second);
    dropped.push_back(std::move(it->second));
  }
  transfers_.erase(first, last);
}

size_t GrpcWorkerService::NumTransfersUnderWay() {
  absl::MutexLock lock(&mu_);
  return transfers_.size();
}

absl::Status GrpcWorkerService::StartSealedStreams(const std::string& host) {
  SL_ASSIGN_OR_RETURN(
      sealed_server_,
      SealedStreamServer::Start(
          host, [this](const std::string& token, SealedSource* source) { return FindSealed(token, source); },
          [this](const std::string& token) { SentSealed(token); }));
  return absl::OkStatus();
}

void GrpcWorkerService::ForgetToken(const Transfer& transfer) {
  if (!transfer.sealed_token.empty()) sealed_tokens_.erase(transfer.sealed_token);
}

bool GrpcWorkerService::FindSealed(const std::string& token, SealedSource* source) {
  absl::MutexLock lock(&mu_);
  auto key = sealed_tokens_.find(token);
  if (key == sealed_tokens_.end()) return false;
  auto it = transfers_.find(key->second);
  if (it == transfers_.end() || it->second.sealed_token != token || it->second.streaming) return false;
  it->second.streaming = true;  // One connection per transfer.
  // A reference of its own: the step may be cleaned up while the stream is sent.
  auto tensor = std::make_shared<Tensor>(it->second.response.tensor);
  source->key = it->second.sealed_key;
  source->data = static_cast<const char*>(tensor->raw_data());
  source->bytes = tensor->AllocatedBytes();
  source->hold = std::move(tensor);
  return true;
}

void GrpcWorkerService::SentSealed(const std::string& token) {
  Transfer sent;  // Freed outside the lock.
  absl::MutexLock lock(&mu_);
  auto key = sealed_tokens_.find(token);
  if (key == sealed_tokens_.end()) return;
  auto it = transfers_.find(key->second);
  sealed_tokens_.erase(key);
  if (it == transfers_.end() || it->second.sealed_token != token) return;
  sent = std::move(it->second);
  transfers_.erase(it);
}

grpc::ByteBuffer GrpcWorkerService::FirstAnswer(const TransferKey& key, RecvTensorResponse value,
                                                bool same_host, bool sealed) {
  const Tensor& t = value.tensor;
  const bool flat = t.IsInitialized() && t.dtype() != DT_STRING && t.dtype() != DT_VARIANT;
  if (!same_host && sealed && flat && t.AllocatedBytes() >= kSealedStreamMinBytes) {
    absl::StatusOr<SealedStreamKeys> keys = NewSealedStreamKeys();
    if (keys.ok()) {
      const uint64_t lease = ++last_lease_;
      rpc::SealedStream stream;
      stream.set_port(sealed_server_->port());
      stream.set_token(keys->token);
      stream.set_key(keys->key);
      grpc::ByteBuffer answer = EncodeSealedStreamAnswer(value, lease, stream);
      Transfer transfer{std::move(value), lease};
      transfer.sealed_token = keys->token;
      transfer.sealed_key = std::move(keys->key);
      ForgetToken(transfers_[key]);  // A retried request replaces the transfer it started.
      sealed_tokens_[keys->token] = key;
      transfers_[key] = std::move(transfer);
      return answer;
    }
  }
  if (same_host && flat && t.AllocatedBytes() >= kSameHostMinBytes) {
    const uint64_t lease = ++last_lease_;
    grpc::ByteBuffer answer = EncodeSameHostAnswer(value, lease);
    transfers_[key] = Transfer{std::move(value), lease};
    return answer;
  }
  grpc::ByteBuffer answer = EncodeRecvTensorResponse(value, 0, max_chunk_bytes_);
  if (flat && t.AllocatedBytes() > max_chunk_bytes_) transfers_[key] = Transfer{std::move(value), 0};
  return answer;
}

grpc::Status GrpcWorkerService::NextChunk(const rpc::RecvTensorRequest& request,
                                          grpc::ByteBuffer* response) {
  absl::MutexLock lock(&mu_);
  auto it = transfers_.find({request.step_id(), request.rendezvous_key()});
  if (it == transfers_.end() || it->second.lease != 0) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("no chunked transfer of '", request.rendezvous_key(),
                                     "' in step ", request.step_id(), " is under way on ",
                                     worker_->task_name()));
  }
  const uint64_t offset = static_cast<uint64_t>(request.content_offset());
  const RecvTensorResponse& value = it->second.response;
  *response = EncodeRecvTensorResponse(value, offset, max_chunk_bytes_);
  if (offset + max_chunk_bytes_ >= value.tensor.AllocatedBytes()) transfers_.erase(it);
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::EndSameHost(const rpc::RecvTensorRequest& request,
                                            grpc::ByteBuffer* response) {
  Transfer ended;  // Freed outside the lock.
  absl::MutexLock lock(&mu_);
  const TransferKey key{request.step_id(), request.rendezvous_key()};
  auto it = transfers_.find(key);
  if (it == transfers_.end() || it->second.lease == 0 || it->second.lease != request.same_host_lease()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("no same-host transfer of '", request.rendezvous_key(),
                                     "' with lease ", request.same_host_lease(), " in step ",
                                     request.step_id(), " is under way on ", worker_->task_name(),
                                     " (was the step cleaned up?)"));
  }
  if (it->second.streaming && request.same_host_action() == rpc::RecvTensorRequest::SAME_HOST_SEND_BYTES) {
    // Its stream is going out now: a second copy would hide a stream the receiver gave up.
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("the sealed stream of '", request.rendezvous_key(), "' in step ",
                                     request.step_id(), " is being sent already"));
  }
  ForgetToken(it->second);
  ended = std::move(it->second);
  transfers_.erase(it);
  if (request.same_host_action() == rpc::RecvTensorRequest::SAME_HOST_SEND_BYTES) {
    *response = FirstAnswer(key, std::move(ended.response), /*same_host=*/false);
  } else {
    grpc::Slice empty;  // An empty RecvTensorResponse.
    *response = grpc::ByteBuffer(&empty, 1);
  }
  return grpc::Status::OK;
}

// Variables are the only state that outlives sessions on a worker.
grpc::Status GrpcWorkerService::CleanupAll(grpc::ServerContext* context, const rpc::CleanupAllRequest*,
                                           rpc::CleanupAllResponse*) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    return ToGrpcStatus(s);
  }
  worker_->ClearVariables();
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* GrpcWorkerService::RunGraph(grpc::CallbackServerContext* context,
                                                      const rpc::RunGraphRequest* request,
                                                      rpc::RunGraphResponse* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    grpc::ServerUnaryReactor* refused = context->DefaultReactor();
    refused->Finish(ToGrpcStatus(s));
    return refused;
  }
  class Reactor : public OnceReactor {
   public:
    Reactor(GrpcWorkerService* service, int64_t step_id) : service_(service), step_id_(step_id) {}
    // The master cancels a step's calls when it aborts the step; so does a deadline, and so
    // does the master's death (its connection closes). In that last case no CleanupGraph will
    // come, so the step is cleaned up here; a later one from a live master is a no-op.
    void OnCancel() override {
      Worker* worker = service_->worker_;
      worker->AbortStep(step_id_, absl::CancelledError(absl::StrCat(
                                      "step ", step_id_, " was cancelled on ", worker->task_name())));
      worker->CleanupGraph(step_id_);
      service_->DropTransfers(step_id_);
    }
    RunGraphRequest request;
    RunGraphResponse response;

   private:
    GrpcWorkerService* const service_;
    const int64_t step_id_;
  };
  auto* reactor = new Reactor(this, request->step_id());
  RunGraphRequest& req = reactor->request;
  req.graph_handle = request->graph_handle();
  req.step_id = request->step_id();
  req.request_id = request->request_id();
  req.collect_stats = request->exec_opts().record_timeline() || request->exec_opts().record_costs();
  for (const NamedTensorProto& named : request->send()) {
    auto t = Tensor::FromWireProto(named.tensor());
    if (!t.ok()) {
      OnceReactor::FinishOnce(reactor->state(),
                              ToGrpcStatus(AddContext(t.status(), absl::StrCat("feed '", named.name(), "'"))));
      return reactor;
    }
    req.send.emplace_back(named.name(), *std::move(t));
  }
  req.recv_key.assign(request->recv_key().begin(), request->recv_key().end());
  // `reactor` (and its request and response) lives until the call finishes, which is not
  // before this callback runs.
  worker_->RunGraphAsync(&reactor->request, &reactor->response,
                         [reactor, response, state = reactor->state()](const absl::Status& s) {
    OnceReactor::FinishOnce(state, ToGrpcStatus(s), [&] {
      for (const auto& [key, tensor] : reactor->response.recv) {
        NamedTensorProto* named = response->add_recv();
        named->set_name(key);
        tensor.AsProtoTensorContent(named->mutable_tensor());
      }
      *response->mutable_step_stats() = std::move(reactor->response.step_stats);
    });
  });
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::RecvTensor(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request,
                                                        grpc::ByteBuffer* response) {
  if (absl::Status s = AuthenticateCaller(*context, policy_); !s.ok()) {
    grpc::ServerUnaryReactor* refused = context->DefaultReactor();
    refused->Finish(ToGrpcStatus(s));
    return refused;
  }
  class Reactor : public OnceReactor {
   public:
    // A cancelled call (the receiver's step failed, or it went away) answers at once; the
    // rendezvous waiter then finds the call finished and drops the value.
    void OnCancel() override { FinishOnce(state_, grpc::Status::CANCELLED); }
  };
  auto* reactor = new Reactor();
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (request->Dump(&slices).ok()) {
    for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  rpc::RecvTensorRequest req;
  if (!req.ParseFromString(bytes)) {
    OnceReactor::FinishOnce(reactor->state(),
                            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "malformed RecvTensorRequest"));
    return reactor;
  }
  struct Call {
    RecvTensorRequest request;
    RecvTensorResponse response;
  };
  if (req.same_host_action() != rpc::RecvTensorRequest::SAME_HOST_NONE) {
    OnceReactor::FinishOnce(reactor->state(), EndSameHost(req, response));
    return reactor;
  }
  if (req.content_offset() > 0) {
    OnceReactor::FinishOnce(reactor->state(), NextChunk(req, response));
    return reactor;
  }
  auto call = std::make_shared<Call>();
  call->request.step_id = req.step_id();
  call->request.rendezvous_key = req.rendezvous_key();
  call->request.request_id = req.request_id();
  // Where callers must present a certificate, only one whose handshake completed is told
  // where the tensor lies in this process's memory.
  const bool same_host = same_host_ && !req.same_host_id().empty() && req.same_host_id() == SameHostId() &&
                         (!policy_.require_certificate || PeerAuthenticated(*context));
  // The stream's key goes in the answer: only over TLS, to a caller whose certificate was checked.
  const bool sealed = sealed_server_ != nullptr && req.sealed_stream_ok() && PeerAuthenticated(*context);
  worker_->RecvTensorAsync(&call->request, &call->response,
                           [this, call, response, same_host, sealed, state = reactor->state()](const absl::Status& s) {
    // Only an answer that goes out leaves a transfer behind: a cancelled call leaves nothing.
    OnceReactor::FinishOnce(state, ToGrpcStatus(s), [&] {
      absl::MutexLock lock(&mu_);
      *response = FirstAnswer({call->request.step_id, call->request.rendezvous_key},
                              std::move(call->response), same_host, sealed);
    });
  });
  return reactor;
}

}  // namespace sluice
