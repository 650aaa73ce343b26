// `sluice serve`: one task of a cluster, a worker and a master behind gRPC, until SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_server.h"
#include "tools/cluster_config.h"
#include "tools/json.h"
#include "tools/verbs.h"
#include "rpc/cluster_spec.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"help(usage: sluice serve --cluster SPEC --job NAME --task I [options]
       sluice serve --cluster CLUSTERDEF_FILE --job NAME --task I [options]
       sluice serve --port P [--host H] [--cluster-file FILE] --job NAME --task I [options]
       TF_CONFIG='{"cluster": ..., "task": ...}' sluice serve [--job NAME --task I] [options]

Runs one task of a cluster: a worker for this task's devices and a master that clients reach
with --target grpc://HOST:PORT. Listens on one address and nowhere else, and stops cleanly on
SIGTERM or SIGINT. It prints one line once bound and one once ready to serve:
  sluice serve: listening on HOST:PORT
  sluice serve: /job:NAME/replica:0/task:I ready on HOST:PORT (N CPU devices; cluster SPEC)
and "sluice serve: /job:NAME/replica:0/task:I stopped (SIGTERM)" at the end.

The address is this task's in SPEC, or H:P. With --port and no SPEC the cluster is this task
alone. Port 0 binds a free port: the listening line says which.

--cluster also takes a file holding a ClusterDef in protobuf text format, each job's tasks
numbered from 0 without gaps:
  job { name: "worker" tasks { key: 0 value: "localhost:2222" }
                       tasks { key: 1 value: "localhost:2223" } }

With neither --cluster nor --port, the cluster comes from the TF_CONFIG environment variable
as TensorFlow's launchers and Kubernetes operators set it, and this task from its "task"
unless --job and --task are given (they must then agree with it):
  TF_CONFIG='{"cluster": {"worker": ["localhost:2222", "localhost:2223"]},
              "task": {"type": "worker", "index": 0}}'
Job names are kept ("chief", "worker", "ps", "evaluator", ...; not "localhost"); a missing
"index" is 0; other keys are ignored, except "rpc_layer", which must be "grpc" if given. A
malformed TF_CONFIG is a usage error (exit 2) naming the key. Clients in the same environment
reach this task's master with --target tf_config.

A cluster on free ports, without races: start every task with --port 0 and --cluster-file
FILE; each prints its listening line, then waits for FILE. Once every task has printed its
address, write SPEC into FILE whole (write FILE.tmp, then rename it to FILE). Each task checks
that SPEC gives it the address it listens on and prints its ready line; calls that need another
task before then wait for it. A task restarted later with --port P (its old port) and the same
FILE reads FILE at once.

Every call must be authenticated, by mutual TLS. Give every task and client the same cluster
secret (a file of 16 bytes or more: --cluster-secret-file FILE here, SLUICE_CLUSTER_SECRET_FILE=FILE
or SLUICE_CLUSTER_SECRET=VALUE in the environment of tasks and clients): each derives the
cluster's CA from it and issues itself a certificate, and the secret is never sent. Or give TLS
certificates signed by a CA of your own (--tls-cert/--tls-key/--tls-ca here, SLUICE_TLS_CERT/KEY/CA
in the environment); then the secret is not used. Callers without them fail the handshake.
--insecure serves without any, and says so.

options:
  --cluster SPEC   every job's tasks: worker=host:port,host:port;ps=host:port, or a file
                   holding a ClusterDef in text format (default: TF_CONFIG's "cluster")
  --job NAME       this task's job (default: TF_CONFIG's task.type)
  --task I         this task's index in its job (from 0; default: TF_CONFIG's task.index)
  --port P         listen on H:P (0: a free port) instead of this task's address in SPEC
  --host H         with --port: the host to listen on (default 127.0.0.1; IPv6 as [::1])
  --cluster-file FILE
                   with --port: read SPEC from FILE once listening
  --cluster-wait SECONDS
                   how long to wait for FILE (default 60); then exit 1 with DEADLINE_EXCEEDED
  --devices N      CPU devices of this task (default 1)
  --threads N      inter-op and intra-op threads (default: the machine's core count)
  --max-request-mb N
                   largest request accepted, in MiB (default 1024); larger RunStep feeds
                   and RunGraph sends are refused with RESOURCE_EXHAUSTED
  --cluster-secret-file FILE
                   the cluster secret: TLS certificates derived from it (never sent)
  --tls-cert FILE, --tls-key FILE, --tls-ca FILE
                   TLS: this task's certificate and key (PEM), and the CA its peers' and
                   clients' certificates must be signed by
  --insecure       serve without authentication (anyone who reaches the port may call)
  --max-sessions N sessions open at once (default 1000); more: RESOURCE_EXHAUSTED
  --session-idle-timeout SECONDS
                   close sessions no call has used for this long (default 3600; 0: never)
  --session-memory-limit SIZE
                   bytes of tensors one session may hold at once on this task, e.g. 4G
                   (default: no limit beyond the session's own --memory-limit)
  --max-graph-nodes N
                   nodes one session's graph may have (default 1000000)
  --json           print the three lines as JSON objects, one per line:
                     {"event": "listening", "task": ..., "address": "HOST:PORT"}
                     {"event": "ready", "task": ..., "address": ..., "devices": N, "cluster": SPEC}
                     {"event": "stopped", "task": ..., "signal": "SIGTERM"}
  --help           this text
)help";

struct Announcer {
  bool json = false;
  std::string task;

  void Listening(const std::string& address) const {
    if (json) {
      Print(JsonObject().AddString("event", "listening").AddString("task", task).AddString("address", address).ToString());
    } else {
      Print(absl::StrCat("sluice serve: listening on ", address));
    }
  }
  void Ready(const std::string& address, int devices, const std::string& spec) const {
    if (json) {
      Print(JsonObject()
                .AddString("event", "ready")
                .AddString("task", task)
                .AddString("address", address)
                .AddInt("devices", devices)
                .AddString("cluster", spec)
                .ToString());
    } else {
      Print(absl::StrCat("sluice serve: ", task, " ready on ", address, " (", devices, " CPU device",
                         devices == 1 ? "" : "s", "; cluster ", spec, ")"));
    }
  }
  void Stopped(int signal) const {
    const char* name = signal == SIGTERM ? "SIGTERM" : "SIGINT";
    if (json) {
      Print(JsonObject().AddString("event", "stopped").AddString("task", task).AddString("signal", name).ToString());
    } else {
      Print(absl::StrCat("sluice serve: ", task, " stopped (", name, ")"));
    }
  }
  static void Print(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
};

// The cluster spec in `path` once it is there and not empty, or DEADLINE_EXCEEDED after
// `wait`. A stop signal while waiting sets *signal and returns OK with no cluster.
absl::StatusOr<ClusterDef> AwaitClusterFile(const std::string& path, absl::Duration wait,
                                            const sigset_t& stop_signals, int* signal) {
  const absl::Time deadline = absl::Now() + wait;
  constexpr timespec kPoll = {0, 100 * 1000 * 1000};  // A person's or a script's pace.
  for (;;) {
    absl::StatusOr<std::string> text = ReadRegularFile(path, "--cluster-file");
    if (text.ok()) {
      const std::string spec(absl::StripAsciiWhitespace(*text));
      if (!spec.empty()) return ParseClusterSpec(spec);
    } else if (!absl::IsNotFound(text.status())) {
      return text.status();  // A FIFO or a folder never becomes a cluster spec.
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no cluster spec in '", path, "' after ", absl::FormatDuration(wait)));
    }
    const int s = sigtimedwait(&stop_signals, nullptr, &kPoll);
    if (s > 0) {
      *signal = s;
      return ClusterDef();
    }
  }
}

// Fills *job and *task from TF_CONFIG's "task" where the flags left them empty; a usage error
// when a flag says otherwise than TF_CONFIG.
std::string TaskFromTfConfig(const TfConfig& config, std::string* job, std::string* task) {
  if (config.task_type.empty()) return "";
  if (job->empty()) {
    *job = config.task_type;
  } else if (*job != config.task_type) {
    return absl::StrCat("--job ", *job, " disagrees with TF_CONFIG's task.type \"", config.task_type,
                        "\" (give neither, or the same)");
  }
  int flag = -1;
  if (task->empty()) {
    *task = absl::StrCat(config.task_index);
  } else if (absl::SimpleAtoi(*task, &flag) && flag != config.task_index) {
    return absl::StrCat("--task ", *task, " disagrees with TF_CONFIG's task.index ", config.task_index,
                        " (give neither, or the same)");
  }
  return "";  // A --task that is not a number is reported with the other flags.
}

}  // namespace

int ServeVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s", kHelp);
    return 0;
  }
  const std::string spec = args.Take("--cluster");
  std::string job = args.Take("--job"), task_s = args.Take("--task");
  const std::string devices_s = args.Take("--devices", "1");
  const std::string port_s = args.Take("--port"), host = args.Take("--host", "127.0.0.1");
  const std::string cluster_file = args.Take("--cluster-file");
  const std::string wait_s = args.Take("--cluster-wait", "60");
  const std::string threads_s = args.Take("--threads", "0");
  const std::string max_request_s = args.Take("--max-request-mb", "1024");
  const std::string secret_file = args.Take("--cluster-secret-file");
  const std::string tls_cert = args.Take("--tls-cert"), tls_key = args.Take("--tls-key");
  const std::string tls_ca = args.Take("--tls-ca");
  const bool insecure = args.Has("--insecure");
  const std::string max_sessions_s = args.Take("--max-sessions", "1000");
  const std::string idle_s = args.Take("--session-idle-timeout", "3600");
  const std::string memory_limit_s = args.Take("--session-memory-limit");
  const std::string max_nodes_s = args.Take("--max-graph-nodes", std::to_string(kDefaultMaxGraphNodes));
  int64_t session_memory_limit = 0, max_graph_nodes = 0;
  Announcer announce;
  announce.json = args.Has("--json");
  int task = -1, devices = 0, threads = -1, port = -1, wait_seconds = 0;
  int64_t max_request_mb = 0;
  int max_sessions = 0, idle_seconds = 0;
  auto positional = args.Positional(0);
  std::string usage_error;
  // With neither --cluster nor --port, the cluster (and, unless --job and --task say, this
  // task) comes from TF_CONFIG, as TensorFlow's launchers set it.
  std::optional<TfConfig> tf_config;
  std::string tf_config_task_error;
  if (positional.ok() && spec.empty() && port_s.empty() && !TfConfigFromEnvironment().empty()) {
    auto parsed = ParseTfConfig(TfConfigFromEnvironment());
    if (!parsed.ok()) {
      std::fprintf(stderr, "sluice serve: %s\n", std::string(parsed.status().message()).c_str());
      return 2;
    }
    tf_config = *std::move(parsed);
    tf_config_task_error = TaskFromTfConfig(*tf_config, &job, &task_s);
  }
  if (!positional.ok()) usage_error = std::string(positional.status().message());
  else if (!tf_config_task_error.empty()) usage_error = tf_config_task_error;
  else if (job.empty() || task_s.empty()) {
    usage_error = tf_config ? "--job and --task are required: TF_CONFIG names no task"
                            : "--job and --task are required";
  }
  else if (!spec.empty() && !port_s.empty()) usage_error = "give either --cluster or --port, not both";
  else if (spec.empty() && port_s.empty() && !tf_config) {
    usage_error = "give --cluster or --port, or set TF_CONFIG";
  }
  else if (!cluster_file.empty() && port_s.empty()) usage_error = "--cluster-file needs --port";
  else if (!port_s.empty() && (!absl::SimpleAtoi(port_s, &port) || port < 0 || port > 65535)) {
    usage_error = "bad --port '" + port_s + "' (0 to 65535)";
  }
  else if (!absl::SimpleAtoi(wait_s, &wait_seconds) || wait_seconds < 1) usage_error = "bad --cluster-wait '" + wait_s + "'";
  else if (!absl::SimpleAtoi(task_s, &task) || task < 0) usage_error = "bad --task '" + task_s + "'";
  else if (!absl::SimpleAtoi(devices_s, &devices) || devices < 1) usage_error = "bad --devices '" + devices_s + "'";
  else if (!absl::SimpleAtoi(threads_s, &threads) || threads < 0) usage_error = "bad --threads '" + threads_s + "'";
  else if (!absl::SimpleAtoi(max_request_s, &max_request_mb) || max_request_mb < 1 || max_request_mb > 2047) {
    usage_error = "bad --max-request-mb '" + max_request_s + "' (1 to 2047)";
  }
  else if (!absl::SimpleAtoi(max_sessions_s, &max_sessions) || max_sessions < 1) {
    usage_error = "bad --max-sessions '" + max_sessions_s + "'";
  }
  else if (!absl::SimpleAtoi(idle_s, &idle_seconds) || idle_seconds < 0) {
    usage_error = "bad --session-idle-timeout '" + idle_s + "' (seconds; 0: never)";
  }
  else if (!absl::SimpleAtoi(max_nodes_s, &max_graph_nodes) || max_graph_nodes < 1) {
    usage_error = "bad --max-graph-nodes '" + max_nodes_s + "'";
  }
  if (usage_error.empty() && !memory_limit_s.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(memory_limit_s, "--session-memory-limit");
    if (bytes.ok()) session_memory_limit = *bytes;
    else usage_error = std::string(bytes.status().message());
  }
  if (!usage_error.empty()) {
    std::fprintf(stderr, "sluice serve: %s\n%s", usage_error.c_str(), kHelp);
    return 2;
  }
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "sluice serve: %s\n", StatusToString(s).c_str());
    return 1;
  };
  // Who may call: the flags, else the environment (rpc/grpc_security.h); nothing only when
  // asked for with --insecure.
  auto security = GrpcSecurityFromEnvironment();
  if (!security.ok()) return fail(security.status());
  if (!secret_file.empty()) {
    auto secret = ReadSecretFile(secret_file);
    if (!secret.ok()) return fail(secret.status());
    security->secret = *secret;
  }
  if (!tls_cert.empty() || !tls_key.empty() || !tls_ca.empty()) {
    absl::Status tls = LoadTls(tls_cert, tls_key, tls_ca, &*security);
    if (!tls.ok()) return fail(tls);
  }
  if (security->insecure() && !insecure) {
    return fail(absl::FailedPreconditionError(
        "refusing to serve without credentials: give --cluster-secret-file FILE (or set "
        "SLUICE_CLUSTER_SECRET or SLUICE_CLUSTER_SECRET_FILE), or --tls-cert, --tls-key and "
        "--tls-ca; --insecure serves anyone who reaches the port"));
  }
  if (insecure && security->insecure()) {
    std::fprintf(stderr,
                 "sluice serve: WARNING: --insecure: anyone who reaches this port can run graphs "
                 "and read their results\n");
  }
  ClusterDef cluster;
  if (tf_config) {
    cluster = tf_config->cluster;
  } else if (!spec.empty()) {
    auto parsed = ReadClusterFlag(spec);
    if (!parsed.ok()) return fail(parsed.status());
    cluster = *std::move(parsed);
  } else {  // This task alone, until the cluster file names the others.
    JobDef* j = cluster.add_job();
    j->set_name(job);
    (*j->mutable_tasks())[task] = absl::StrCat(host, ":", port);
  }

  // Signals are taken by sigwait below: block them before gRPC starts its threads, which
  // inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerDef def;
  *def.mutable_cluster() = cluster;
  def.set_job_name(job);
  def.set_task_index(task);
  def.set_protocol("grpc");
  GrpcServerOptions options;
  options.num_cpu_devices = devices;
  options.inter_op_threads = threads;
  options.intra_op_threads = threads;
  options.max_request_bytes = max_request_mb << 20;
  options.complete_cluster_later = !cluster_file.empty();
  options.security = *security;
  options.master.max_sessions = max_sessions;
  options.master.max_graph_nodes = max_graph_nodes;
  options.session_memory_limit_bytes = session_memory_limit;
  options.master.session_idle_timeout =
      idle_seconds == 0 ? absl::InfiniteDuration() : absl::Seconds(idle_seconds);
  auto server = GrpcServer::Create(def, options);
  if (!server.ok()) return fail(server.status());
  announce.task = (*server)->task_name();
  absl::Status s = (*server)->Start();
  if (!s.ok()) return fail(s);
  const std::string address = (*server)->address();
  announce.Listening(address);

  int signal = 0;
  if (cluster_file.empty()) {
    if (!port_s.empty()) (*cluster.mutable_job(0)->mutable_tasks())[task] = address;  // Port 0 bound.
  } else {
    auto full = AwaitClusterFile(cluster_file, absl::Seconds(wait_seconds), stop_signals, &signal);
    if (!full.ok()) return fail(full.status());
    if (signal == 0) {
      s = (*server)->CompleteCluster(*full);
      if (!s.ok()) return fail(AddContext(s, absl::StrCat("cluster file '", cluster_file, "'")));
      cluster = *std::move(full);
    }
  }
  if (signal == 0) {
    announce.Ready(address, devices, ClusterSpecString(cluster));
    sigwait(&stop_signals, &signal);
  }
  (*server)->Stop();
  announce.Stopped(signal);
  return 0;
}

}  // namespace sluice
