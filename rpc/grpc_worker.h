// A WorkerInterface that reaches another task's worker over gRPC. Control calls block with a
// short deadline; RunGraph and RecvTensor are asynchronous, with the step deadline. AbortStep
// cancels the step's RunGraph call, which aborts the step on the remote worker.
//
//   GrpcWorker worker("/job:worker/replica:0/task:1", NewGrpcChannel("10.0.0.2:2222"));
//   std::vector<DeviceAttributes> devices;
//   SL_RETURN_IF_ERROR(worker.GetStatus(&devices));
#ifndef SLUICE_RPC_GRPC_WORKER_H_
#define SLUICE_RPC_GRPC_WORKER_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/worker_service.grpc.pb.h"
#include "rpc/same_host_transfer.h"
#include "rpc/sealed_stream.h"
#include "worker/recent_request_ids.h"
#include "worker/worker_interface.h"

namespace sluice {

struct GrpcWorkerOptions {
  // Deadline of GetStatus, RegisterGraph, DeregisterGraph and CleanupGraph.
  absl::Duration control_timeout = absl::Seconds(60);
  // GetStatus (the first call a new session makes) waits this long for a connection, so a
  // task that is just starting or restarting is found; other calls fail at once.
  absl::Duration connect_timeout = absl::Seconds(5);
  // Deadline of RunGraph and RecvTensor. A step's parts may wait long for each other; the
  // master's own step timeout (RunOptions.timeout_in_ms) usually ends a step first.
  absl::Duration step_timeout = absl::Hours(1);
  // Offer to read big tensors straight from the sender's memory when it runs on this machine
  // (rpc/same_host_transfer.h); gRPC carries them otherwise. Off where the environment sets
  // SLUICE_SAME_HOST_RECV_TENSOR=0.
  bool same_host_recv_tensor = SameHostTransfersEnabledByDefault();
  // How the bytes of a same-host answer are copied; tests put a failing one here to reach the
  // fallback to gRPC.
  std::function<absl::Status(int64_t pid, uint64_t address, void* dst, uint64_t bytes)>
      same_host_read = ReadFromSameHost;
  // The task's "host:port". Same-host answers are read only from the process the kernel says
  // listens there (VerifySameHostListener); without it, same-host transfers are not offered.
  std::string peer_address;
  // Offer to take big tensors on a sealed stream from the task's host (rpc/sealed_stream.h).
  // Senders answer so only over TLS (the stream's key comes in the answer); GrpcWorkerCache
  // turns it off for plaintext channels. Off where SLUICE_SEALED_STREAMS=0 (to measure gRPC's
  // own TLS path).
  bool sealed_stream = SealedStreamsEnabledByDefault();
  // How long a sealed stream may take to connect, and to send more bytes.
  absl::Duration sealed_stream_timeout = absl::Seconds(60);
  // Where to connect for the sealed stream at the task's host and `port`; tests put a recording
  // proxy there. Unset: the task's host and `port`.
  std::function<std::pair<std::string, uint32_t>(const std::string& host, uint32_t port)> sealed_stream_route;
};

class GrpcWorker : public WorkerInterface {
 public:
  // `task` names the remote task in errors.
  GrpcWorker(std::string task, std::shared_ptr<grpc::Channel> channel,
             GrpcWorkerOptions options = GrpcWorkerOptions());
  // Cancels the calls still in flight and waits for their callbacks.
  ~GrpcWorker() override;

  absl::Status GetStatus(std::vector<DeviceAttributes>* devices) override;
  absl::Status RegisterGraph(const RegisterGraphRequest& request,
                             RegisterGraphResponse* response) override;
  // Asynchronous and always OK: nobody can act on a failure, and a lost worker must not hold
  // up closing a session.
  absl::Status DeregisterGraph(const std::string& graph_handle) override;
  void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                     StatusCallback done) override;
  void AbortStep(int64_t step_id, const absl::Status& status) override;
  void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorResponse* response,
                       StatusCallback done) override;
  void CleanupGraph(int64_t step_id) override;

  const std::string& task() const { return task_; }

 private:
  // Errors name the task and the call: "/job:worker/replica:0/task:1 (RunGraph): ...".
  absl::Status Annotate(const grpc::Status& status, absl::string_view method) const;
  // Bookkeeping of asynchronous calls, for AbortStep and the destructor. Started returns
  // false once the destructor runs (the call must not start). A RunGraph (`run_graph`) of a
  // step aborted already is cancelled as it starts: an abort that came first must not be lost.
  bool Started(grpc::ClientContext* context, int64_t step_id, bool run_graph = false);
  void Finished(grpc::ClientContext* context);
  // One RecvTensor call, registered for AbortStep and the destructor; `on_answer` runs with
  // its status and answer, before the call counts as finished.
  void CallRecvTensor(const rpc::RecvTensorRequest& request,
                      std::function<void(absl::Status, const grpc::ByteBuffer&)> on_answer);
  // One RecvTensor call for the next chunk of a transfer, until the tensor is complete.
  struct Transfer;
  void RecvTensorChunk(std::shared_ptr<Transfer> transfer);
  void OnRecvTensorAnswer(std::shared_ptr<Transfer> transfer, absl::Status status,
                          const grpc::ByteBuffer& answer);
  // After a same-host answer: copies the tensor from the sender's memory and releases it, or
  // asks for the bytes over gRPC when the copy fails.
  void ReadFromSender(std::shared_ptr<Transfer> transfer);
  // After a sealed-stream answer: reads the stream on a thread of its own, or asks for the
  // bytes over gRPC when the stream's port cannot be reached.
  void ReadSealedStream(std::shared_ptr<Transfer> transfer);
  // Asks the sender for the bytes of an out-of-band answer over gRPC after all.
  void AskForBytes(std::shared_ptr<Transfer> transfer);
  void Finish(const std::shared_ptr<Transfer>& transfer, const absl::Status& status);

  const std::string task_;
  const GrpcWorkerOptions options_;
  std::unique_ptr<::tensorflow::grpc::WorkerService::Stub> stub_;
  grpc::GenericStub generic_stub_;  // RecvTensor, whose answer is decoded by hand.

  absl::Mutex mu_;
  std::map<grpc::ClientContext*, int64_t> in_flight_ ABSL_GUARDED_BY(mu_);  // -> step id
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  // Sealed streams being read: their sockets, by step (AbortStep shuts them down), and how many
  // threads read them (the destructor waits for none).
  std::map<int, int64_t> stream_sockets_ ABSL_GUARDED_BY(mu_);
  int stream_threads_ ABSL_GUARDED_BY(mu_) = 0;
  // Steps aborted lately, oldest first: a step's abort can come before its RunGraph starts
  // (a deadline or a client gone at that moment), and then the RunGraph must not run.
  static constexpr size_t kRememberedAbortedSteps = 4096;
  RecentIds aborted_steps_ ABSL_GUARDED_BY(mu_){kRememberedAbortedSteps};
  // Set once this process may not read the server's memory (ptrace rules, seccomp): later
  // transfers go over gRPC without trying again.
  std::atomic<bool> same_host_refused_{false};
  // Set once the sender's sealed stream port could not be reached (a firewall that lets only
  // the task's port through): later transfers go over gRPC's TLS.
  std::atomic<bool> sealed_refused_{false};
};

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_WORKER_H_
