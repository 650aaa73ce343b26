// RecvTensor throughput over loopback against a plain memcpy of the same bytes, and against raw
// TCP, for tensors of 1 MiB to 1 GiB: task 1 of an in-process two-task cluster holds the
// tensor in a step's rendezvous, a GrpcWorker client fetches it the way a cross-task _Recv
// does. The second argument picks the path: 0 gRPC in plaintext (`sluice serve --insecure`;
// zero-copy send, one copy on receipt), 1 same-host (the client copies from the sender's
// memory, rpc/same_host_transfer.h), 2 a cluster with a secret between machines (TLS derived
// from the secret; tensors of 1 MiB and more on a sealed stream, rpc/sealed_stream.h), 3 the
// same with the bytes in gRPC's own TLS frames (SLUICE_SEALED_STREAMS=0). BM_RawTcp moves the
// bytes through one loopback TCP connection with write/read: the wire's ceiling here.
//
//   bazel run -c opt //bench:recv_tensor_bench
//   bazel run -c opt //bench:recv_tensor_bench -- --benchmark_filter='(RecvTensor|RawTcp)/256/'

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_server.h"
#include "rpc/cluster_spec.h"
#include "rpc/grpc_util.h"
#include "rpc/grpc_worker.h"

namespace sluice {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Task 1 of a cluster, serving; the bench's own process is the receiving side. `secret`:
// TLS derived from it (rpc/derived_tls.h), or none.
struct Sender {
  explicit Sender(const std::string& secret) {
    ServerDef def;
    *def.mutable_cluster() = *ParseClusterSpec(
        absl::StrCat("worker=127.0.0.1:", FreePort(), ",127.0.0.1:", FreePort()));
    def.set_job_name("worker");
    def.set_task_index(1);
    GrpcServerOptions options;
    options.same_host_recv_tensor = true;  // Answers same-host offers (clients[1] makes them).
    options.security.secret = secret;
    server = *GrpcServer::Create(def, options);
    if (!server->Start().ok()) std::abort();
    // Channels present what the server asks; the process's security is another sender's.
    GrpcSecurity security;
    security.secret = secret;
    if (!UseTlsFromSecret({}, &security).ok()) std::abort();
    GrpcWorkerOptions grpc_only;
    grpc_only.same_host_recv_tensor = false;
    grpc_only.sealed_stream = true;  // Answered so only over TLS.
    grpc_only.peer_address = server->address();
    clients[0] = std::make_unique<GrpcWorker>(server->task_name(),
                                              NewGrpcChannel(server->address(), security), grpc_only);
    grpc_only.sealed_stream = false;
    clients[2] = std::make_unique<GrpcWorker>(server->task_name(),
                                              NewGrpcChannel(server->address(), security), grpc_only);
    GrpcWorkerOptions same_host;
    same_host.same_host_recv_tensor = true;
    same_host.peer_address = server->address();
    clients[1] = std::make_unique<GrpcWorker>(server->task_name(),
                                              NewGrpcChannel(server->address(), security), same_host);
    std::vector<DeviceAttributes> devices;
    if (!server->worker()->GetStatus(&devices).ok()) std::abort();
    device = devices[0];
  }
  std::unique_ptr<GrpcServer> server;
  std::unique_ptr<GrpcWorker> clients[3];  // gRPC (sealed streams over TLS); same-host; gRPC only.
  DeviceAttributes device;
};

Sender& TheSender(bool tls) {
  static Sender* plain = new Sender("");
  static Sender* secured = new Sender("recv-tensor-bench-cluster-secret");
  return tls ? *secured : *plain;
}

void BM_RecvTensor(benchmark::State& state) {
  const int64_t path = state.range(1);
  Sender& s = TheSender(path >= 2);
  const int64_t bytes = state.range(0) << 20;
  GrpcWorker* client = s.clients[path == 1 ? 1 : path == 3 ? 2 : 0].get();
  state.SetLabel(path == 0 ? "grpc" : path == 1 ? "same-host" : path == 2 ? "tls" : "tls in grpc frames");
  Tensor t(DT_FLOAT, TensorShape({bytes / 4}));
  std::memset(t.raw_data(), 1, bytes);
  const std::string key = Rendezvous::CreateKey(s.device.name(), s.device.incarnation(),
                                                "/job:worker/replica:0/task:0/device:CPU:0", "t:0",
                                                FrameAndIter{});
  auto parsed = *Rendezvous::ParseKey(key);
  static int64_t step = 1;  // Never reused: a cleaned-up step stays closed.
  auto transfer = [&]() -> absl::Status {
    s.server->worker()->StepRendezvous(step)->Send(parsed, t).IgnoreError();
    RecvTensorRequest request{step, key, 0};
    RecvTensorResponse response;
    absl::Notification done;
    absl::Status status;
    client->RecvTensorAsync(&request, &response, [&](const absl::Status& st) {
      status = st;
      done.Notify();
    });
    done.WaitForNotification();
    s.server->worker()->CleanupGraph(step++);
    if (status.ok() && response.tensor.AllocatedBytes() != static_cast<size_t>(bytes)) {
      return absl::InternalError("a tensor of the wrong size");
    }
    return status;
  };
  // One untimed transfer first, as a pipeline's steps after its first: the receiver's buffer
  // then comes from its pool, where the first step's faulted in (BM_Memcpy shows that cost).
  if (absl::Status st = transfer(); !st.ok()) {
    state.SkipWithError(std::string(st.message()).c_str());
    return;
  }
  for (auto _ : state) {
    if (absl::Status st = transfer(); !st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_RecvTensor)
    ->ArgsProduct({{1, 4, 16, 64, 256, 1024}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same bytes through one loopback TCP connection: a thread writes them, this one reads
// them into a buffer already written once.
void BM_RawTcp(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    state.SkipWithError("cannot listen on loopback");
    return;
  }
  const int sender = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(sender, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
  const int receiver = accept(listener, nullptr, nullptr);
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  std::atomic<int> rounds{0};
  std::thread writer([&] {
    for (int round = 0;; ++round) {
      while (rounds.load() <= round) {
        if (rounds.load() < 0) return;
        std::this_thread::yield();
      }
      for (int64_t sent = 0; sent < bytes;) {
        const ssize_t n = write(sender, src.data() + sent, bytes - sent);
        if (n <= 0) return;
        sent += n;
      }
    }
  });
  for (auto _ : state) {
    rounds.fetch_add(1);
    for (int64_t got = 0; got < bytes;) {
      const ssize_t n = read(receiver, dst.data() + got, bytes - got);
      if (n <= 0) std::abort();
      got += n;
    }
  }
  rounds.store(-1);
  shutdown(sender, SHUT_RDWR);
  writer.join();
  close(sender);
  close(receiver);
  close(listener);
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_RawTcp)->RangeMultiplier(4)->Range(1, 1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  Tensor src(DT_FLOAT, TensorShape({bytes / 4}));
  std::memset(src.raw_data(), 1, bytes);
  for (auto _ : state) {
    Tensor dst(DT_FLOAT, TensorShape({bytes / 4}));  // A fresh buffer, as a receiver's.
    std::memcpy(dst.raw_data(), src.raw_data(), bytes);
    benchmark::DoNotOptimize(dst.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_Memcpy)->RangeMultiplier(4)->Range(1, 1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same into a buffer already written once (no page faults): the bandwidth ceiling.
void BM_MemcpyWarm(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  Tensor src(DT_FLOAT, TensorShape({bytes / 4})), dst(DT_FLOAT, TensorShape({bytes / 4}));
  std::memset(src.raw_data(), 1, bytes);
  std::memset(dst.raw_data(), 0, bytes);
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), bytes);
    benchmark::DoNotOptimize(dst.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_MemcpyWarm)->RangeMultiplier(4)->Range(1, 1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sluice
