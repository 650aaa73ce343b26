// `sluice serve`: one task of a cluster, a worker and a master behind gRPC, until SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <cstdio>

#include "absl/strings/numbers.h"
#include "framework/status.h"
#include "rpc/grpc_server.h"
#include "tools/verbs.h"
#include "rpc/cluster_spec.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice serve --cluster SPEC --job NAME --task I [options]

Runs one task of a cluster: a worker for this task's devices and a master that clients reach
with --target grpc://HOST:PORT. Listens on the task's own address in SPEC and nowhere else,
prints one line when ready, and stops cleanly on SIGTERM or SIGINT.

options:
  --cluster SPEC   every job's tasks: worker=host:port,host:port;ps=host:port
  --job NAME       this task's job
  --task I         this task's index in its job (from 0)
  --devices N      CPU devices of this task (default 1)
  --threads N      inter-op and intra-op threads (default: the machine's core count)
  --max-request-mb N
                   largest request accepted, in MiB (default 1024); larger RunStep feeds
                   and RunGraph sends are refused with RESOURCE_EXHAUSTED
  --help           this text
)";

}  // namespace

int ServeVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s", kHelp);
    return 0;
  }
  const std::string spec = args.Take("--cluster"), job = args.Take("--job");
  const std::string task_s = args.Take("--task"), devices_s = args.Take("--devices", "1");
  const std::string threads_s = args.Take("--threads", "0");
  const std::string max_request_s = args.Take("--max-request-mb", "1024");
  int task = -1, devices = 0, threads = -1;
  int64_t max_request_mb = 0;
  auto positional = args.Positional(0);
  std::string usage_error;
  if (!positional.ok()) usage_error = std::string(positional.status().message());
  else if (spec.empty() || job.empty() || task_s.empty()) usage_error = "--cluster, --job and --task are required";
  else if (!absl::SimpleAtoi(task_s, &task) || task < 0) usage_error = "bad --task '" + task_s + "'";
  else if (!absl::SimpleAtoi(devices_s, &devices) || devices < 1) usage_error = "bad --devices '" + devices_s + "'";
  else if (!absl::SimpleAtoi(threads_s, &threads) || threads < 0) usage_error = "bad --threads '" + threads_s + "'";
  else if (!absl::SimpleAtoi(max_request_s, &max_request_mb) || max_request_mb < 1 || max_request_mb > 2047) {
    usage_error = "bad --max-request-mb '" + max_request_s + "' (1 to 2047)";
  }
  if (!usage_error.empty()) {
    std::fprintf(stderr, "sluice serve: %s\n%s", usage_error.c_str(), kHelp);
    return 2;
  }
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "sluice serve: %s\n", StatusToString(s).c_str());
    return 1;
  };
  auto cluster = ParseClusterSpec(spec);
  if (!cluster.ok()) return fail(cluster.status());

  // Signals are taken by sigwait below: block them before gRPC starts its threads, which
  // inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerDef def;
  *def.mutable_cluster() = *cluster;
  def.set_job_name(job);
  def.set_task_index(task);
  def.set_protocol("grpc");
  GrpcServerOptions options;
  options.num_cpu_devices = devices;
  options.inter_op_threads = threads;
  options.intra_op_threads = threads;
  options.max_request_bytes = max_request_mb << 20;
  auto server = GrpcServer::Create(def, options);
  if (!server.ok()) return fail(server.status());
  absl::Status s = (*server)->Start();
  if (!s.ok()) return fail(s);
  std::printf("sluice serve: %s ready on %s (%d CPU device%s; cluster %s)\n",
              (*server)->task_name().c_str(), (*server)->address().c_str(), devices,
              devices == 1 ? "" : "s", ClusterSpecString(*cluster).c_str());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  (*server)->Stop();
  std::printf("sluice serve: %s stopped (%s)\n", (*server)->task_name().c_str(),
              signal == SIGTERM ? "SIGTERM" : "SIGINT");
  std::fflush(stdout);
  return 0;
}

}  // namespace sluice
