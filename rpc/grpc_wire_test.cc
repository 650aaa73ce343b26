// What crosses the wire: every connection of a two-task cluster and its client goes through a
// recording proxy while a step moves a known 64 MiB tensor (client -> task 0 -> task 1 -> task 0
// -> client). With the cluster secret, the capture holds neither the secret nor any 64-byte run
// of the tensor's bytes; without credentials (--insecure), the same capture does hold them,
// which shows the check would see them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "rpc/cluster_spec.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_server.h"
#include "rpc/test_cluster.h"

namespace sluice {
namespace {

constexpr char kSecret[] = "0123456789abcdef-wire-test-secret";

// Forwards every connection to `target` and keeps every byte both ways; `tamper` flips one
// byte of what the target answers.
class RecordingProxy {
 public:
  RecordingProxy(std::string target_host, int target_port, std::string* capture, absl::Mutex* mu,
                 bool tamper = false)
      : host_(std::move(target_host)), port_(target_port), capture_(capture), mu_(mu), tamper_(tamper) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener_, 64), 0);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    listen_port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~RecordingProxy() {
    shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    {
      absl::MutexLock lock(&fds_mu_);
      for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : pumps_) t.join();
    for (int fd : fds_) close(fd);
    close(listener_);
  }
  int port() const { return listen_port_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", listen_port_); }

 private:
  void Accept() {
    for (;;) {
      const int in = accept(listener_, nullptr, nullptr);
      if (in < 0) return;
      const int out = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      inet_pton(AF_INET, host_.c_str(), &addr.sin_addr);
      addr.sin_port = htons(port_);
      if (connect(out, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        close(in);
        close(out);
        continue;
      }
      absl::MutexLock lock(&fds_mu_);
      fds_.push_back(in);
      fds_.push_back(out);
      pumps_.emplace_back([this, in, out] { Pump(in, out, false); });
      pumps_.emplace_back([this, in, out] { Pump(out, in, tamper_); });
    }
  }
  void Pump(int from, int to, bool tamper) {
    std::vector<char> buffer(1 << 20);
    ssize_t n;
    while ((n = read(from, buffer.data(), buffer.size())) > 0) {
      if (tamper) {
        buffer[n / 2] ^= 0x10;
        tamper = false;
      }
      {
        absl::MutexLock lock(mu_);
        capture_->append(buffer.data(), static_cast<size_t>(n));
      }
      for (ssize_t sent = 0; sent < n;) {
        const ssize_t w = send(to, buffer.data() + sent, n - sent, MSG_NOSIGNAL);
        if (w <= 0) return;
        sent += w;
      }
    }
    shutdown(to, SHUT_WR);
  }

  const std::string host_;
  const int port_;
  std::string* capture_;
  absl::Mutex* mu_;
  const bool tamper_;
  int listener_ = -1;
  int listen_port_ = 0;
  std::thread acceptor_;
  absl::Mutex fds_mu_;
  std::vector<int> fds_ ABSL_GUARDED_BY(fds_mu_);
  std::vector<std::thread> pumps_;
};

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// Every 32 bytes of the tensor start with these two floats (the rest is random): any 64-byte
// run of the tensor holds one of them whole, and so does any run of its negation (whose
// marker is the negated pair). Eight given bytes turn up by chance in a few hundred MiB of
// ciphertext with odds of about 2^-35.
constexpr float kMarker[2] = {1234.5678f, -8765.4321f};

Tensor MarkedTensor(int64_t elements) {
  Tensor t = Tensor::FromVector<float>(std::vector<float>(elements, 0.0f), TensorShape({elements}));
  float* v = static_cast<float*>(t.raw_data());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-100, 100);
  for (int64_t i = 0; i < elements; ++i) v[i] = i % 8 == 0 ? kMarker[0] : i % 8 == 1 ? kMarker[1] : dist(rng);
  return t;
}

std::string MarkerBytes(float sign) {
  const float pair[2] = {sign * kMarker[0], sign * kMarker[1]};
  return std::string(reinterpret_cast<const char*>(pair), sizeof(pair));
}

struct Capture {
  std::string bytes;
  absl::Status run;
  bool matched = false;
};

// What happens to sealed streams on the way.
enum class Streams { kRecorded, kPortClosed, kTampered };

// Two tasks (with `security`) whose every connection to each other, from the client, and for
// sealed streams goes through a recording proxy; runs kNegatedOnTask1 on a 64 MiB x.
Capture RunThroughProxies(const GrpcSecurity& security, Streams streams = Streams::kRecorded) {
  SetProcessGrpcSecurity(security);  // The tasks' channels and the client's.
  Capture result;
  absl::Mutex mu;
  std::vector<std::unique_ptr<RecordingProxy>> proxies;
  absl::Mutex proxies_mu;
  GrpcServerOptions options;
  options.security = security;
  options.same_host_recv_tensor = false;  // As between machines: the bytes cross sockets.
  options.worker_rpc.same_host_recv_tensor = false;
  options.worker_rpc.sealed_stream_route = [&, streams](const std::string& host, uint32_t port) {
    if (streams == Streams::kPortClosed) return std::make_pair(std::string("127.0.0.1"), uint32_t{1});
    absl::MutexLock lock(&proxies_mu);
    proxies.push_back(std::make_unique<RecordingProxy>(host, static_cast<int>(port), &result.bytes, &mu,
                                                       streams == Streams::kTampered));
    return std::make_pair(std::string("127.0.0.1"), static_cast<uint32_t>(proxies.back()->port()));
  };
  auto started = StartLoopbackTasks(2, options);
  EXPECT_OK(started.status());
  std::vector<std::unique_ptr<GrpcServer>> servers = *std::move(started);
  RecordingProxy to0("127.0.0.1", PortOf(servers[0]->address()), &result.bytes, &mu);
  RecordingProxy to1("127.0.0.1", PortOf(servers[1]->address()), &result.bytes, &mu);
  // Each task reaches the other through its proxy.
  const ClusterDef seen_by_0 = *ParseClusterSpec(absl::StrCat("worker=", servers[0]->address(), ",", to1.address()));
  const ClusterDef seen_by_1 = *ParseClusterSpec(absl::StrCat("worker=", to0.address(), ",", servers[1]->address()));
  EXPECT_OK(servers[0]->CompleteCluster(seen_by_0));
  EXPECT_OK(servers[1]->CompleteCluster(seen_by_1));

  SessionOptions session_options;
  session_options.target = absl::StrCat("grpc://", to0.address());
  auto session = NewSession(session_options);
  EXPECT_OK(session.status());
  GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kNegatedOnTask1, &graph));
  const Tensor x = MarkedTensor(int64_t{16} << 20);  // 64 MiB.
  result.run = (*session)->Create(graph);
  std::vector<Tensor> out;
  if (result.run.ok()) result.run = (*session)->Run({{"x", x}}, {"y"}, {}, &out);
  if (result.run.ok()) {
    result.matched = out[0].AllocatedBytes() == x.AllocatedBytes() &&
                     std::memcmp(out[0].raw_data(), x.raw_data(), x.AllocatedBytes()) == 0;
  }
  (*session)->Close().IgnoreError();
  session->reset();
  for (auto& server : servers) server->Stop();
  servers.clear();
  absl::MutexLock lock(&proxies_mu);
  proxies.clear();
  return result;
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(GrpcWireTest, WithTheSecretNeitherItNorTheTensorCrossesTheWire) {
  GrpcSecurity security;
  security.secret = kSecret;
  Capture c = RunThroughProxies(security);
  ASSERT_OK(c.run);
  EXPECT_TRUE(c.matched);
  // The tensor crossed four times (feed, task 0 -> 1, 1 -> 0, fetch), sealed.
  EXPECT_GT(c.bytes.size(), size_t{4} * (64 << 20));
  EXPECT_EQ(Count(c.bytes, kSecret), 0u);
  EXPECT_EQ(Count(c.bytes, MarkerBytes(1)), 0u) << "a run of x in clear";
  EXPECT_EQ(Count(c.bytes, MarkerBytes(-1)), 0u) << "a run of -x in clear";
}

TEST(GrpcWireTest, WithoutCredentialsTheSameCaptureHoldsTheTensor) {
  Capture c = RunThroughProxies(GrpcSecurity());
  ASSERT_OK(c.run);
  EXPECT_TRUE(c.matched);
  // Every 32 bytes of x (three crossings) and of -x (one), but for the few that HTTP/2's frame
  // headers split.
  EXPECT_GE(Count(c.bytes, MarkerBytes(1)), size_t{3} * (2 << 20) * 99 / 100);
  EXPECT_GE(Count(c.bytes, MarkerBytes(-1)), (size_t{2} << 20) * 99 / 100);
}

// A firewall that lets only the tasks' ports through: the bytes come in gRPC's TLS frames.
TEST(GrpcWireTest, AStreamPortThatCannotBeReachedFallsBackToGrpc) {
  GrpcSecurity security;
  security.secret = kSecret;
  Capture c = RunThroughProxies(security, Streams::kPortClosed);
  ASSERT_OK(c.run);
  EXPECT_TRUE(c.matched);
  EXPECT_EQ(Count(c.bytes, MarkerBytes(1)), 0u);
  EXPECT_EQ(Count(c.bytes, MarkerBytes(-1)), 0u);
}

// A byte changed on the way fails the step with DATA_LOSS naming the task, never garbage.
TEST(GrpcWireTest, AChangedStreamFailsTheStep) {
  GrpcSecurity security;
  security.secret = kSecret;
  Capture c = RunThroughProxies(security, Streams::kTampered);
  EXPECT_EQ(c.run.code(), absl::StatusCode::kDataLoss) << c.run;
  EXPECT_THAT(std::string(c.run.message()), ::testing::HasSubstr("/job:worker/replica:0/task:1")) << c.run;
  EXPECT_THAT(std::string(c.run.message()), ::testing::HasSubstr("authentication tag")) << c.run;
}

}  // namespace
}  // namespace sluice
