// `sluice bench`: times whole runs of an ONNX model (or GraphDef) in an embedded session.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "master/session.h"
#include "tools/session_flags.h"
#include "tools/chrome_trace.h"
#include "tools/error_hints.h"
#include "tools/json.h"
#include "tools/progress.h"
#include "tools/run_plan.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice bench MODEL.onnx|GRAPH.pb|GRAPH.pbtxt [options]

Runs the model (or GraphDef) repeatedly in an embedded session (or on --target's cluster) and
reports the time of whole runs (feeds in, fetches out). The last line is JSON:
  {"model": ..., "threads": N, "iters": N, "median_ms": X, "min_ms": Y, "concurrency": C,
   "runs_per_s": R, "p50_ms": X, "p90_ms": X, "p99_ms": X}
(latencies of single runs; runs_per_s counts every timed run over the time they all took).
When stderr is a terminal, a progress line there ("bench: 14/50 iterations") is rewritten as
runs end and erased before the results.

options:
  --input FILE.pb | NAME=FILE.pb   inputs as in `sluice run` (default: random inputs; for a
                 GraphDef, random values of each unfed Placeholder's dtype and shape)
  --output NAME  (GraphDef only) fetch NAME; repeatable (default as in `sluice run`)
  --iters N      timed runs (default 20)
  --warmup N     untimed runs first (default 3)
  --concurrency N
                 N client threads run at once, sharing the --iters runs (default 1): the
                 throughput of a pipeline whose stages are on several devices or tasks
  --threads N    intra-op threads (oneDNN's OpenMP team, the compute pool, OpenBLAS; default 1)
  --inter-op N   threads running ready nodes (default 1: nodes run one after another, each
                 with all intra-op threads, as ONNX Runtime's default sequential executor)
  --profile      after timing, one traced run: time per op type, most expensive first
  --trace FILE.json
                 after timing, one traced run written as a Chrome trace (as `sluice run`)
  --json         print only one JSON object: the last line's members, and
                   "profile": [{"op", "ms", "nodes"}] with --profile,
                   "trace": {"file", "events", "devices"} with --trace
  --help         this text
)";

// Time per op type over one traced run, most first: a JSON array of {op, ms, nodes}, and a
// table on stdout when `print`.
std::string ProfileByOp(const StepStats& stats, bool print) {
  std::map<std::string, std::pair<double, int>> by_op;
  double total = 0;
  for (const auto& dev : stats.dev_stats()) {
    for (const auto& n : dev.node_stats()) {
      auto& e = by_op[n.timeline_label()];
      e.first += n.all_end_rel_nanos() / 1e6;
      e.second += 1;
      total += n.all_end_rel_nanos() / 1e6;
    }
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [op, e] : by_op) rows.emplace_back(e.first, op);
  std::sort(rows.rbegin(), rows.rend());
  if (print) std::printf("%-24s %10s %6s %6s\n", "op", "ms", "nodes", "share");
  std::vector<std::string> profile_json;
  for (const auto& [t, op] : rows) {
    if (print) std::printf("%-24s %10.3f %6d %5.1f%%\n", op.c_str(), t, by_op[op].second, 100 * t / total);
    profile_json.push_back(
        JsonObject().AddString("op", op).AddRaw("ms", absl::StrFormat("%.3f", t)).AddInt("nodes", by_op[op].second).ToString());
  }
  return JsonArray(profile_json);
}

}  // namespace

int BenchVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s%s", kHelp, kSessionFlagsHelp, kOptimizeFlagsHelp);
    return 0;
  }
  std::vector<std::string> inputs = args.TakeAll("--input");
  std::vector<std::string> outputs = args.TakeAll("--output");
  int iters = 20, warmup = 3, threads = 1, inter_op = 1, concurrency = 1;
  for (auto [flag, value] : {std::pair<const char*, int*>{"--iters", &iters}, {"--warmup", &warmup},
                             {"--threads", &threads}, {"--inter-op", &inter_op},
                             {"--concurrency", &concurrency}}) {
    std::string v = args.Take(flag);
    if (!v.empty() && (!absl::SimpleAtoi(v, value) || *value < (std::string(flag) == "--warmup" ? 0 : 1))) {
      std::fprintf(stderr, "sluice bench: bad %s '%s'\n", flag, v.c_str());
      return 2;
    }
  }
  const bool profile = args.Has("--profile");
  const std::string trace_file = args.Take("--trace");
  const bool json = args.Has("--json");
  SessionOptions options;
  absl::Status flags = TakeSessionFlags(args, &options);
  OnnxImportOptions import;
  flags.Update(TakeOptimizeFlags(args, &options));
  if (!flags.ok()) {
    std::fprintf(stderr, "sluice bench: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  auto positional = args.Positional(1);
  if (!positional.ok() || positional->size() != 1) {
    std::fprintf(stderr, "sluice bench: %s\n%s",
                 positional.ok() ? "expected one MODEL" : std::string(positional.status().message()).c_str(), kHelp);
    return 2;
  }
  ErrorHintContext hints;
  hints.target = options.target;
  ProgressLine progress;  // On stderr, when it is a terminal.
  auto fail = [&](const absl::Status& s) {
    progress.Clear();
    return ReportFailure("bench", s, hints);
  };
  const std::string& path = (*positional)[0];
  Plan plan;
  absl::Status planned = PlanModel(path, inputs, outputs, import, /*random_placeholders=*/true, &plan);
  hints.input_names = plan.input_names;
  if (!planned.ok()) return fail(planned);
  const std::vector<std::pair<std::string, Tensor>>& feeds = plan.feeds;
  const std::vector<std::string>& fetches = plan.fetches;
  options.config.set_intra_op_parallelism_threads(threads);
  // Each inter-op thread that starts an OpenMP region gets its own team; with more teams than
  // cores libgomp stops spinning between regions, and every small convolution then waits for
  // its team to wake (MobileNetV2 at 2 threads ran no faster than at 1).
  options.config.set_inter_op_parallelism_threads(inter_op);
  auto session = NewSession(options);
  if (!session.ok()) return fail(session.status());
  absl::Status s = (*session)->Create(std::move(plan.graph));  // Held once, by the session.
  if (!s.ok()) return fail(s);
  std::vector<Tensor> out;
  for (int i = 0; i < warmup; ++i) {
    progress.Update(absl::StrCat("bench: warmup ", i, "/", warmup));
    s = (*session)->Run(feeds, fetches, {}, &out);
    if (!s.ok()) return fail(s);
  }
  // `concurrency` threads take runs until `iters` have started; each times its own.
  std::vector<double> ms(iters, 0.0);
  std::atomic<int> next{0}, finished{0};
  absl::Mutex error_mu;
  absl::Status error;
  auto client = [&] {
    std::vector<Tensor> fetched;
    for (int i = next++; i < iters; i = next++) {
      auto start = std::chrono::steady_clock::now();
      absl::Status r = (*session)->Run(feeds, fetches, {}, &fetched);
      auto end = std::chrono::steady_clock::now();
      if (!r.ok()) {
        absl::MutexLock lock(&error_mu);
        if (error.ok()) error = r;
        next = iters;  // The others stop after their current run.
        return;
      }
      ms[i] = std::chrono::duration<double, std::milli>(end - start).count();
      ++finished;
    }
  };
  const auto all_start = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int c = 1; c < concurrency; ++c) clients.emplace_back(client);
  if (concurrency == 1) {
    for (int i = 0; i < iters && error.ok(); ++i) {
      progress.Update(absl::StrCat("bench: ", i, "/", iters, " iterations"));
      std::vector<Tensor> fetched;
      auto start = std::chrono::steady_clock::now();
      s = (*session)->Run(feeds, fetches, {}, &fetched);
      auto end = std::chrono::steady_clock::now();
      if (!s.ok()) error = s;
      ms[i] = std::chrono::duration<double, std::milli>(end - start).count();
    }
  } else {
    client();
  }
  for (std::thread& t : clients) t.join();
  const double all_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - all_start).count();
  if (!error.ok()) return fail(error);
  progress.Done();
  RunMetadata metadata;
  if (profile || !trace_file.empty()) {
    RunOptions trace;
    trace.set_trace_level(RunOptions::FULL_TRACE);
    s = (*session)->Run(trace, feeds, fetches, {}, &out, &metadata);
    if (!s.ok()) return fail(s);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  // Nearest rank: the smallest latency that `q` of the runs do not exceed.
  auto percentile = [&](double q) {
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
  };
  JsonObject doc;
  doc.AddString("model", std::filesystem::path(path).filename().string())
      .AddInt("threads", threads)
      .AddInt("iters", iters)
      .AddRaw("median_ms", absl::StrFormat("%.3f", median))
      .AddRaw("min_ms", absl::StrFormat("%.3f", sorted.front()))
      .AddInt("concurrency", concurrency)
      .AddRaw("runs_per_s", absl::StrFormat("%.3f", iters * 1000.0 / all_ms))
      .AddRaw("p50_ms", absl::StrFormat("%.3f", percentile(0.5)))
      .AddRaw("p90_ms", absl::StrFormat("%.3f", percentile(0.9)))
      .AddRaw("p99_ms", absl::StrFormat("%.3f", percentile(0.99)));
  if (!trace_file.empty()) {
    auto events = WriteChromeTrace(trace_file, metadata.step_stats());
    if (!events.ok()) return fail(events.status());
    const int devices = metadata.step_stats().dev_stats_size();
    if (!json) std::printf("trace: %s (%d node executions on %d devices)\n", trace_file.c_str(), *events, devices);
    doc.AddRaw("trace", JsonObject().AddString("file", trace_file).AddInt("events", *events).AddInt("devices", devices).ToString());
  }
  if (profile) doc.AddRaw("profile", ProfileByOp(metadata.step_stats(), /*print=*/!json));
  if (json) {
    std::printf("%s\n", doc.ToString().c_str());
  } else {
    std::printf("{\"model\": \"%s\", \"threads\": %d, \"iters\": %d, \"median_ms\": %.3f, \"min_ms\": %.3f, "
                "\"concurrency\": %d, \"runs_per_s\": %.3f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f}\n",
                std::filesystem::path(path).filename().string().c_str(), threads, iters, median, sorted.front(),
                concurrency, iters * 1000.0 / all_ms, percentile(0.5), percentile(0.9), percentile(0.99));
  }
  return 0;
}

}  // namespace sluice
