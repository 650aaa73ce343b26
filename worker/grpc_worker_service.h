// WorkerService over a Worker: converts requests, responses and statuses, nothing more.
// RunGraph and RecvTensor are asynchronous (no thread waits for a step or for a tensor);
// RecvTensor answers are written by worker/tensor_coding.h without copying the tensor. A
// cancelled RunGraph (the master aborting the step, or its deadline) aborts the step here.
//
//   Worker worker(options);
//   GrpcWorkerService service(&worker);
//   grpc::ServerBuilder builder;
//   builder.RegisterService(&service);
#ifndef SLUICE_WORKER_GRPC_WORKER_SERVICE_H_
#define SLUICE_WORKER_GRPC_WORKER_SERVICE_H_

#include <map>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "proto/worker_service.grpc.pb.h"
#include "worker/tensor_coding.h"
#include "worker/worker.h"

namespace sluice {

using GrpcWorkerServiceBase = rpc::WorkerService::WithCallbackMethod_RunGraph<
    rpc::WorkerService::WithRawCallbackMethod_RecvTensor<rpc::WorkerService::Service>>;

class GrpcWorkerService : public GrpcWorkerServiceBase {
 public:
  // `worker` is not owned and must outlive the service. Tensors whose content exceeds
  // `max_chunk_bytes` are answered in chunks (worker/tensor_coding.h).
  explicit GrpcWorkerService(Worker* worker, uint64_t max_chunk_bytes = kMaxRecvTensorChunkBytes)
      : worker_(worker), max_chunk_bytes_(max_chunk_bytes) {}

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

 private:
  // Answers the chunk at `offset` of a tensor being sent in chunks.
  grpc::Status NextChunk(const rpc::RecvTensorRequest& request, grpc::ByteBuffer* response);

  Worker* const worker_;
  const uint64_t max_chunk_bytes_;
  // Tensors sent in chunks, from the first chunk to the last, by (step id, rendezvous key).
  // CleanupGraph drops those of a step whose receiver gave up.
  absl::Mutex mu_;
  std::map<std::pair<int64_t, std::string>, RecvTensorResponse> chunked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_WORKER_GRPC_WORKER_SERVICE_H_
