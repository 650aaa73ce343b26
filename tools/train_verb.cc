// `sluice train`: trains an ONNX model through its TrainingInfoProto.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "framework/status.h"
#include "frontend/onnx/onnx_tensor.h"
#include "training/checkpoint.h"
#include "training/trainer.h"
#include "tools/chrome_trace.h"
#include "tools/error_hints.h"
#include "tools/json.h"
#include "tools/progress.h"
#include "tools/session_flags.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice train MODEL.onnx --steps N [options]

Runs each training_info's initialization once, then its algorithm N times, writing the
algorithm's update_binding outputs back to the model's initializers. Prints the algorithm's
other outputs (the loss) every step; when stdout is a terminal, as one line rewritten in
place with a progress bar (about ten times a second), the last step's left on it.

options:
  --steps N              algorithm runs (required)
  --feed NAME=FILE.pb    a value for an input of the model or the algorithm, the same every
                         step; repeatable. Data-parallel, each replica's share is sent to its
                         task once, with the graph, not with every step
  --save OUT.onnx        write the trained model (initializers updated, training_info kept)
  --threads N            intra-op and inter-op threads (default: all cores)
  --inter-op N           threads running ready nodes, so that independent branches (the
                         gradients of different layers) run at once (default: as --threads;
                         1 runs nodes one after another, each with all intra-op threads)
  --strategy S           with --target on a cluster: auto (default), allreduce or ps
  --bucket-mb N          all-reduce: gradients fused into buckets of up to N MiB (default 25);
                         the last ones made shrink to N/16, so little is left at the end
  --checkpoint-dir DIR   resume from DIR's last complete checkpoint (weights and optimizer
                         state; a damaged one is named and passed over for the one before)
                         and write checkpoints there (ckpt-<step>.onnx and .json manifests,
                         written then renamed; the two most recent kept)
  --checkpoint-every K   a checkpoint after every K steps (default with a DIR: 10; and one
                         after the last step)
  --restart-on-failure   when a step fails (a task lost), wait for the cluster to be whole
                         again and resume from the last checkpoint: a lost machine costs at
                         most K steps
  --restart-wait S       how long to wait for the cluster each time (default 600 seconds)
  --profile              after the steps, one more step traced (it trains too): time per op
                         type in each phase (forward, backward, update, all-reduce, other),
                         most expensive first; with --json as "profile": [{"phase", "op",
                         "ms", "nodes"}]; on a data-parallel all-reduce run it also prints
                         the exposed all-reduce: how long each replica's all-reduce went on
                         after its backward pass ended, and the step's past every replica's
                         (JSON "exposed", that one as device "step")
  --trace FILE.json      the traced step of --profile (implied) as a Chrome trace: a track
                         per device, an event per node execution, _Send and _Recv included
  --json                 print one JSON object instead of the lines:
                           {"replicas": N, "strategy": "allreduce"|"ps"|"",
                            "steps": [{"step": 1, "ms": T, "outputs": {"loss": X}}, ...],
                            "saved": "OUT.onnx"}
                         (scalar outputs as numbers, at full precision; others as strings)
  --help                 this text

With --target on a cluster of two or more "worker" tasks, the algorithm runs data-parallel,
one replica per worker task, each on an equal share of every fed input of rank >= 1; the
replicas' gradients and losses are averaged (the single-process result when the loss is a
mean over the batch). Without a "ps" job (or with --strategy allreduce) every worker holds
its own copy of the weights and the gradients are averaged by a ring all-reduce, bucket by
bucket while the backward pass goes on. With a "ps" job (or --strategy ps) the weights live
in variables on /job:ps/task:0, which applies the updates.
)";

struct ExposedAllReduce {
  std::string device;
  double exposed_ms = 0, step_ms = 0;
};

// When a device's (or the step's) nodes ran: the first start and last end, and the last end
// of its backward and of its all-reduce nodes (INT64_MIN: none).
struct PhaseEnds {
  int64_t first = INT64_MAX, last = INT64_MIN, backward = INT64_MIN, allreduce = INT64_MIN;
  void Add(const PhaseEnds& o) {
    first = std::min(first, o.first);
    last = std::max(last, o.last);
    backward = std::max(backward, o.backward);
    allreduce = std::max(allreduce, o.allreduce);
  }
  bool has_allreduce() const { return allreduce != INT64_MIN && backward != INT64_MIN; }
  ExposedAllReduce Exposed(const std::string& device) const {
    return {device, std::max<int64_t>(0, allreduce - backward) / 1e6, (last - first) / 1e6};
  }
};

// For each device that ran all-reduce nodes: how long they went on after the device's last
// backward node ended (0 when they all ended before it), and the device's step (first node's
// start to last node's end). Then, as device "step", the same over all devices: from the
// last backward node's end on any replica (the slowest one's) to the last all-reduce node's
// end: what no backward pass hid. Across machines, that reads their clocks as one.
std::vector<ExposedAllReduce> ExposedAllReduceOf(const StepStats& stats, const OnnxTrainer& trainer) {
  std::vector<ExposedAllReduce> out;
  PhaseEnds step;
  for (const auto& dev : stats.dev_stats()) {
    PhaseEnds ends;
    for (const auto& n : dev.node_stats()) {
      const int64_t start = n.all_start_nanos(), end = start + n.all_end_rel_nanos();
      ends.first = std::min(ends.first, start);
      ends.last = std::max(ends.last, end);
      const std::string phase = trainer.PhaseOf(n.node_name());
      if (phase == "backward") ends.backward = std::max(ends.backward, end);
      if (phase == "all-reduce") ends.allreduce = std::max(ends.allreduce, end);
    }
    step.Add(ends);
    if (ends.has_allreduce()) out.push_back(ends.Exposed(dev.device()));
  }
  if (out.size() > 1) out.push_back(step.Exposed("step"));
  return out;
}

std::string Scalar(const Tensor& t) {
  if (t.NumElements() != 1) return absl::StrCat(DataTypeString(t.dtype()), t.shape().DebugString());
  // Every digit a float or double holds, so that loss curves compare at full precision.
  if (t.dtype() == DT_FLOAT) return absl::StrFormat("%.9g", t.flat<float>()[0]);
  if (t.dtype() == DT_DOUBLE) return absl::StrFormat("%.17g", t.flat<double>()[0]);
  std::string s = t.DebugString(1);
  const size_t colon = s.find(':');
  return s.substr(colon + 2, s.size() - colon - 3);
}

// A scalar output as a JSON number (every digit of its type); others as their description.
std::string ScalarJson(const Tensor& t) {
  if (t.NumElements() == 1 && t.dtype() == DT_FLOAT) return JsonNumber(t.flat<float>()[0], 9);
  if (t.NumElements() == 1 && t.dtype() == DT_DOUBLE) return JsonNumber(t.flat<double>()[0], 17);
  return JsonString(Scalar(t));
}

}  // namespace

int TrainVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s", kHelp, kSessionFlagsHelp);
    return 0;
  }
  std::vector<std::string> feeds_spec = args.TakeAll("--feed");
  SessionOptions options;
  absl::Status flags = TakeSessionFlags(args, &options);
  if (!flags.ok()) {
    std::fprintf(stderr, "sluice train: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  std::string save = args.Take("--save");
  const bool json = args.Has("--json");
  int steps = 0, threads = 0, inter_op = 0;
  if (!absl::SimpleAtoi(args.Take("--steps", "0"), &steps) || steps <= 0) {
    std::fprintf(stderr, "sluice train: --steps N (N > 0) is required\n%s", kHelp);
    return 2;
  }
  std::string t = args.Take("--threads");
  if (!t.empty() && (!absl::SimpleAtoi(t, &threads) || threads <= 0)) {
    std::fprintf(stderr, "sluice train: bad --threads '%s'\n", t.c_str());
    return 2;
  }
  std::string io = args.Take("--inter-op");
  if (!io.empty() && (!absl::SimpleAtoi(io, &inter_op) || inter_op <= 0)) {
    std::fprintf(stderr, "sluice train: bad --inter-op '%s'\n", io.c_str());
    return 2;
  }
  const std::string trace_file = args.Take("--trace");
  const bool profile = args.Has("--profile") || !trace_file.empty();
  const std::string checkpoint_dir = args.Take("--checkpoint-dir");
  const bool restart = args.Has("--restart-on-failure");
  int checkpoint_every = checkpoint_dir.empty() ? 0 : 10, restart_wait = 600;
  for (auto [flag, value] : {std::pair<const char*, int*>{"--checkpoint-every", &checkpoint_every},
                             {"--restart-wait", &restart_wait}}) {
    std::string v = args.Take(flag);
    if (!v.empty() && (!absl::SimpleAtoi(v, value) || *value <= 0)) {
      std::fprintf(stderr, "sluice train: bad %s '%s'\n", flag, v.c_str());
      return 2;
    }
  }
  if (checkpoint_dir.empty() && (checkpoint_every > 0 || restart)) {
    std::fprintf(stderr, "sluice train: --checkpoint-every and --restart-on-failure need --checkpoint-dir DIR\n");
    return 2;
  }
  TrainOptions train;
  train.strategy = args.Take("--strategy", "auto");
  const std::string bucket = args.Take("--bucket-mb");
  double bucket_mb = 0;
  if (!bucket.empty() && (!absl::SimpleAtod(bucket, &bucket_mb) || !(bucket_mb > 0) || bucket_mb > 1e6)) {
    std::fprintf(stderr, "sluice train: bad --bucket-mb '%s'\n", bucket.c_str());
    return 2;
  }
  if (bucket_mb > 0) train.bucket_bytes = static_cast<int64_t>(bucket_mb * (1 << 20));
  auto positional = args.Positional(1);
  if (!positional.ok() || positional->size() != 1) {
    std::fprintf(stderr, "sluice train: %s\n%s",
                 positional.ok() ? "expected one MODEL" : std::string(positional.status().message()).c_str(), kHelp);
    return 2;
  }
  auto fail = [&options](const absl::Status& s) {
    ErrorHintContext hints;
    hints.input_flag = "--feed";
    hints.target = options.target;
    return ReportFailure("train", s, hints);
  };
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& spec : feeds_spec) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return fail(absl::InvalidArgumentError(absl::StrCat("--feed wants NAME=FILE.pb, got '", spec, "'")));
    auto value = ReadOnnxTensorFile(kv[1]);
    if (!value.ok()) return fail(value.status());
    feeds.emplace_back(kv[0], *std::move(value));
  }
  // The same files every step: data-parallel replicas keep their shares (TrainOptions).
  for (const auto& [name, value] : feeds) train.fixed_feeds[name] = value;
  if (threads > 0) {
    options.config.set_intra_op_parallelism_threads(threads);
    options.config.set_inter_op_parallelism_threads(threads);
  }
  if (inter_op > 0) options.config.set_inter_op_parallelism_threads(inter_op);
  auto trainer = OnnxTrainer::Load((*positional)[0], options, train);
  if (!trainer.ok()) return fail(trainer.status());
  if ((*trainer)->replicas() > 1 && !json) {
    if ((*trainer)->strategy() == "allreduce") {
      std::printf("data-parallel: %d replicas on job worker, gradients all-reduced\n", (*trainer)->replicas());
    } else {
      std::printf("data-parallel: %d replicas on job worker, variables on /job:ps/task:0\n",
                  (*trainer)->replicas());
    }
  }
  // The step to go on from: after the last complete checkpoint, or 1 after initialization.
  int resumed_from = 0, restarts = 0;
  auto resume = [&](OnnxTrainer* t) -> absl::StatusOr<int> {
    if (!checkpoint_dir.empty()) {
      std::vector<std::string> skipped;
      SL_ASSIGN_OR_RETURN(std::optional<Checkpoint> found, FindCheckpoint(checkpoint_dir, &skipped));
      for (const std::string& why : skipped) std::fprintf(stderr, "sluice train: checkpoint passed over: %s\n", why.c_str());
      if (found.has_value()) {
        SL_RETURN_IF_ERROR(t->Restore(found->path));
        if (!json) std::printf("resumed from %s (step %d)\n", found->path.c_str(), static_cast<int>(found->step));
        resumed_from = static_cast<int>(found->step);
        return resumed_from + 1;
      }
    }
    SL_RETURN_IF_ERROR(t->Initialize());
    resumed_from = 0;
    return 1;
  };
  auto first = resume(trainer->get());
  if (!first.ok()) return fail(first.status());
  const int replicas = (*trainer)->replicas();
  const std::string strategy = (*trainer)->strategy();
  absl::Status s;
  // On a terminal the step lines rewrite one line, with a bar; the last one stays.
  ProgressLine progress(stdout);
  std::vector<std::pair<int, std::string>> steps_json;  // (step, its JSON object)
  for (int step = *first; step <= steps; ++step) {
    const absl::Time started = absl::Now();
    auto out = (*trainer)->Step(feeds);
    const double step_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
    const absl::StatusCode code = out.status().code();
    if (!out.ok() && restart && code != absl::StatusCode::kInvalidArgument &&
        code != absl::StatusCode::kUnimplemented && code != absl::StatusCode::kOutOfRange) {
      progress.Clear();
      std::fprintf(stderr,
                   "sluice train: step %d failed: %s\nsluice train: waiting up to %d s for the cluster, "
                   "then resuming from the last checkpoint\n",
                   step, StatusToString(out.status()).c_str(), restart_wait);
      trainer->reset();  // Best effort: a lost task keeps nothing to free.
      const absl::Time deadline = absl::Now() + absl::Seconds(restart_wait);
      absl::Status last = out.status();
      int next = 0;
      while (next == 0 && absl::Now() < deadline) {
        auto again = OnnxTrainer::Load((*positional)[0], options, train);
        // The same replicas as before, or the run would not be the one it was.
        if (again.ok() && ((*again)->replicas() != replicas || (*again)->strategy() != strategy)) {
          again = absl::UnavailableError(absl::StrCat("the cluster offers ", (*again)->replicas(),
                                                      " replicas, not ", replicas, " yet"));
        }
        if (again.ok()) {
          auto from = resume(again->get());
          if (from.ok()) {
            trainer = std::move(again);
            next = *from;
            break;
          }
          last = from.status();
        } else {
          last = again.status();
        }
        absl::SleepFor(absl::Seconds(1));
      }
      if (next == 0) return fail(AddContext(last, absl::StrCat("restarting after step ", step, " failed")));
      ++restarts;
      // Steps after the checkpoint run again; their earlier lines go.
      steps_json.erase(std::remove_if(steps_json.begin(), steps_json.end(),
                                      [&](const auto& entry) { return entry.first >= next; }),
                       steps_json.end());
      step = next - 1;
      continue;
    }
    if (!out.ok()) {
      progress.Clear();
      return fail(AddContext(out.status(), absl::StrCat("step ", step)));
    }
    if (checkpoint_every > 0 && (step % checkpoint_every == 0 || step == steps)) {
      auto bytes = (*trainer)->SerializeState();
      s = bytes.ok() ? WriteCheckpoint(checkpoint_dir, step, *bytes) : bytes.status();
      if (!s.ok()) return fail(AddContext(s, absl::StrCat("checkpoint after step ", step)));
    }
    if (json) {
      JsonObject outputs;
      for (const auto& [name, value] : *out) outputs.AddRaw(name, ScalarJson(value));
      steps_json.emplace_back(step, JsonObject()
                               .AddInt("step", step)
                               .AddDouble("ms", step_ms, 4)
                               .AddRaw("outputs", outputs.ToString())
                               .ToString());
      continue;
    }
    std::string line = absl::StrCat("step ", step);
    for (const auto& [name, value] : *out) absl::StrAppend(&line, " ", name, "=", Scalar(value));
    if (progress.active()) {
      constexpr int kWidth = 30;
      const int done = step * kWidth / steps;
      const std::string bar =
          absl::StrCat("[", std::string(done, '#'), std::string(kWidth - done, ' '), "] ", line);
      if (step == steps) {
        progress.Finish(bar);
      } else {
        progress.Update(bar);
      }
    } else {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  std::vector<std::string> profile_json, exposed_json;
  if (profile) {
    RunMetadata metadata;
    auto traced = (*trainer)->TracedStep(feeds, &metadata);
    if (!traced.ok()) return fail(AddContext(traced.status(), "the traced step of --profile"));
    std::map<std::pair<std::string, std::string>, std::pair<double, int>> by_op;  // (phase, op)
    std::map<std::string, double> by_phase;
    double total = 0;
    for (const auto& dev : metadata.step_stats().dev_stats()) {
      for (const auto& n : dev.node_stats()) {
        const std::string phase = (*trainer)->PhaseOf(n.node_name());
        const double ms = n.all_end_rel_nanos() / 1e6;
        auto& e = by_op[{phase, n.timeline_label()}];
        e.first += ms;
        e.second += 1;
        by_phase[phase] += ms;
        total += ms;
      }
    }
    if (!trace_file.empty()) {
      auto events = WriteChromeTrace(trace_file, metadata.step_stats());
      if (!events.ok()) return fail(events.status());
      if (!json) std::printf("trace of the profiled step: %s (%d node runs)\n", trace_file.c_str(), *events);
    }
    // The all-reduce that did not overlap the backward pass: on each device, from its last
    // backward node's end to its last all-reduce node's end, against the device's step.
    for (const ExposedAllReduce& e : ExposedAllReduceOf(metadata.step_stats(), **trainer)) {
      if (!json) {
        std::printf("exposed all-reduce %s %s: %.1f ms of a %.1f ms step (%.1f%%)\n",
                    e.device == "step" ? "of the" : "on", e.device == "step" ? "step, past every replica's backward pass" : e.device.c_str(),
                    e.exposed_ms, e.step_ms, e.step_ms > 0 ? 100 * e.exposed_ms / e.step_ms : 0.0);
      }
      exposed_json.push_back(JsonObject()
                                 .AddString("device", e.device)
                                 .AddDouble("exposed_ms", e.exposed_ms, 6)
                                 .AddDouble("step_ms", e.step_ms, 6)
                                 .ToString());
    }
    std::vector<std::tuple<double, std::string, std::string, int>> rows;
    for (const auto& [key, e] : by_op) rows.emplace_back(e.first, key.first, key.second, e.second);
    std::sort(rows.rbegin(), rows.rend());
    if (!json) {
      std::printf("profile of one step (node time summed over devices: %.1f ms)\n", total);
      for (const auto& [phase, ms] : by_phase) {
        std::printf("  %-10s %10.1f ms %5.1f%%\n", phase.c_str(), ms, total > 0 ? 100 * ms / total : 0.0);
      }
      std::printf("%-10s %-24s %10s %6s %6s\n", "phase", "op", "ms", "nodes", "share");
    }
    for (const auto& [ms, phase, op, nodes] : rows) {
      if (!json) {
        std::printf("%-10s %-24s %10.3f %6d %5.1f%%\n", phase.c_str(), op.c_str(), ms, nodes,
                    total > 0 ? 100 * ms / total : 0.0);
      }
      profile_json.push_back(JsonObject()
                                 .AddString("phase", phase)
                                 .AddString("op", op)
                                 .AddDouble("ms", ms, 6)
                                 .AddInt("nodes", nodes)
                                 .ToString());
    }
  }
  if (!save.empty()) {
    s = (*trainer)->Save(save);
    if (!s.ok()) return fail(s);
    if (!json) std::printf("saved %s\n", save.c_str());
  }
  if (json) {
    std::vector<std::string> step_objects;
    for (const auto& [step, object] : steps_json) step_objects.push_back(object);
    JsonObject doc;
    doc.AddInt("replicas", (*trainer)->replicas())
        .AddString("strategy", (*trainer)->strategy())
        .AddInt("resumed_from", resumed_from)
        .AddInt("restarts", restarts)
        .AddRaw("steps", JsonArray(step_objects));
    if (!save.empty()) doc.AddString("saved", save);
    if (profile) doc.AddRaw("profile", JsonArray(profile_json));
    if (!exposed_json.empty()) doc.AddRaw("exposed", JsonArray(exposed_json));
    std::printf("%s\n", doc.ToString().c_str());
  }
  return 0;
}

}  // namespace sluice
