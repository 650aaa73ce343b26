// WorkerService over a Worker: converts requests, responses and statuses, nothing more.
// RunGraph and RecvTensor are asynchronous (no thread waits for a step or for a tensor);
// RecvTensor answers are written by rpc/tensor_coding.h without copying the tensor; a
// receiver on this machine may instead be told where the tensor lies in this process's memory
// (rpc/same_host_transfer.h). A cancelled RunGraph (the master aborting the step, or its
// deadline) aborts the step here.
//
//   Worker worker(options);
//   GrpcWorkerService service(&worker);
//   grpc::ServerBuilder builder;
//   builder.RegisterService(&service);
#ifndef SLUICE_RPC_GRPC_WORKER_SERVICE_H_
#define SLUICE_RPC_GRPC_WORKER_SERVICE_H_

#include <map>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "rpc/grpc_security.h"
#include "proto/worker_service.grpc.pb.h"
#include "rpc/sealed_stream.h"
#include "rpc/tensor_coding.h"
#include "worker/worker.h"

namespace sluice {

using GrpcWorkerServiceBase = ::tensorflow::grpc::WorkerService::WithCallbackMethod_RunGraph<
    ::tensorflow::grpc::WorkerService::WithRawCallbackMethod_RecvTensor<::tensorflow::grpc::WorkerService::Service>>;

class GrpcWorkerService : public GrpcWorkerServiceBase {
 public:
  // `worker` is not owned and must outlive the service. Tensors whose content exceeds
  // `max_chunk_bytes` are answered in chunks (rpc/tensor_coding.h). With `same_host`,
  // tensors of kSameHostMinBytes and more go to receivers that say they share this machine
  // by a same-host answer.
  explicit GrpcWorkerService(Worker* worker, uint64_t max_chunk_bytes = kMaxRecvTensorChunkBytes,
                             bool same_host = true)
      : worker_(worker), max_chunk_bytes_(max_chunk_bytes), same_host_(same_host) {}

  grpc::Status GetStatus(grpc::ServerContext* context, const rpc::GetStatusRequest* request,
                         rpc::GetStatusResponse* response) override;
  grpc::Status CreateWorkerSession(grpc::ServerContext* context,
                                   const rpc::CreateWorkerSessionRequest* request,
                                   rpc::CreateWorkerSessionResponse* response) override;
  grpc::Status DeleteWorkerSession(grpc::ServerContext* context,
                                   const rpc::DeleteWorkerSessionRequest* request,
                                   rpc::DeleteWorkerSessionResponse* response) override;
  grpc::Status RegisterGraph(grpc::ServerContext* context, const rpc::RegisterGraphRequest* request,
                             rpc::RegisterGraphResponse* response) override;
  grpc::Status DeregisterGraph(grpc::ServerContext* context,
                               const rpc::DeregisterGraphRequest* request,
                               rpc::DeregisterGraphResponse* response) override;
  grpc::Status CleanupGraph(grpc::ServerContext* context, const rpc::CleanupGraphRequest* request,
                            rpc::CleanupGraphResponse* response) override;
  grpc::Status CleanupAll(grpc::ServerContext* context, const rpc::CleanupAllRequest* request,
                          rpc::CleanupAllResponse* response) override;
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext* context,
                                     const rpc::RunGraphRequest* request,
                                     rpc::RunGraphResponse* response) override;
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;

  // Tensors whose transfer began but has not ended (chunked, or read by a same-host
  // receiver), for tests.
  size_t NumTransfersUnderWay();

  // What callers must present (rpc/grpc_security.h): as the server's own security says.
  void set_security(const GrpcSecurity& security) { policy_ = CallerPolicy::For(security); }

  // Listens on `host` for sealed streams (rpc/sealed_stream.h) and from then on answers big
  // tensors with one to receivers that offer to take it over TLS. Call once, before serving.
  absl::Status StartSealedStreams(const std::string& host);

 private:
  CallerPolicy policy_;
  // A tensor taken from the rendezvous and not yet wholly sent.
  struct Transfer {
    RecvTensorResponse response;
    // Non-zero while a same-host receiver may be reading the tensor's buffer: the buffer
    // stays referenced (here) until the receiver releases this lease or the step is cleaned up.
    uint64_t lease = 0;
    // For a sealed-stream answer: its token and key, and whether a connection is sending it.
    std::string sealed_token;
    std::string sealed_key;
    bool streaming = false;
  };
  using TransferKey = std::pair<int64_t, std::string>;  // (step id, rendezvous key)

  // The first answer for `value`: a same-host answer, a sealed-stream answer, the whole tensor,
  // or its first chunk. Keeps what later requests need in transfers_.
  grpc::ByteBuffer FirstAnswer(const TransferKey& key, RecvTensorResponse value, bool same_host,
                               bool sealed = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sealed stream server's lookup (marks the transfer as streaming) and its end (drops it).
  bool FindSealed(const std::string& token, SealedSource* source);
  void SentSealed(const std::string& token);
  // Forgets a transfer's token; call before erasing the transfer.
  void ForgetToken(const Transfer& transfer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers the chunk at `offset` of a tensor being sent in chunks.
  grpc::Status NextChunk(const rpc::RecvTensorRequest& request, grpc::ByteBuffer* response);
  // SAME_HOST_RELEASE and SAME_HOST_SEND_BYTES.
  grpc::Status EndSameHost(const rpc::RecvTensorRequest& request, grpc::ByteBuffer* response);
  // Drops the transfers of a step (cleaned up, or its master gone).
  void DropTransfers(int64_t step_id);

  Worker* const worker_;
  const uint64_t max_chunk_bytes_;
  const bool same_host_;
  // By (step id, rendezvous key), from the first answer to the last chunk or the release.
  // Dropped with the step by CleanupGraph, or by a RunGraph cancelled with no master left to
  // clean up; and with the service.
  absl::Mutex mu_;
  std::map<TransferKey, Transfer> transfers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TransferKey> sealed_tokens_ ABSL_GUARDED_BY(mu_);
  uint64_t last_lease_ ABSL_GUARDED_BY(mu_) = 0;
  // Last: its threads call back into the above, so it goes first.
  std::unique_ptr<SealedStreamServer> sealed_server_;
};

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_WORKER_SERVICE_H_
