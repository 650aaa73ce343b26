// `sluice train`: trains an ONNX model through its TrainingInfoProto.
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "framework/status.h"
#include "frontend/onnx/onnx_tensor.h"
#include "training/trainer.h"
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
  --feed NAME=FILE.pb    a value for an input of the model or the algorithm; repeatable
  --save OUT.onnx        write the trained model (initializers updated, training_info kept)
  --threads N            intra-op and inter-op threads (default: all cores)
  --strategy S           with --target on a cluster: auto (default), allreduce or ps
  --bucket-mb N          all-reduce: gradients fused into buckets of about N MiB (default 25)
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
  int steps = 0, threads = 0;
  if (!absl::SimpleAtoi(args.Take("--steps", "0"), &steps) || steps <= 0) {
    std::fprintf(stderr, "sluice train: --steps N (N > 0) is required\n%s", kHelp);
    return 2;
  }
  std::string t = args.Take("--threads");
  if (!t.empty() && (!absl::SimpleAtoi(t, &threads) || threads <= 0)) {
    std::fprintf(stderr, "sluice train: bad --threads '%s'\n", t.c_str());
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
  if (threads > 0) {
    options.config.set_intra_op_parallelism_threads(threads);
    options.config.set_inter_op_parallelism_threads(threads);
  }
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
  absl::Status s = (*trainer)->Initialize();
  if (!s.ok()) return fail(s);
  // On a terminal the step lines rewrite one line, with a bar; the last one stays.
  ProgressLine progress(stdout);
  std::vector<std::string> steps_json;
  for (int step = 1; step <= steps; ++step) {
    const absl::Time started = absl::Now();
    auto out = (*trainer)->Step(feeds);
    const double step_ms = absl::ToDoubleMilliseconds(absl::Now() - started);
    if (!out.ok()) {
      progress.Clear();
      return fail(AddContext(out.status(), absl::StrCat("step ", step)));
    }
    if (json) {
      JsonObject outputs;
      for (const auto& [name, value] : *out) outputs.AddRaw(name, ScalarJson(value));
      steps_json.push_back(JsonObject()
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
  if (!save.empty()) {
    s = (*trainer)->Save(save);
    if (!s.ok()) return fail(s);
    if (!json) std::printf("saved %s\n", save.c_str());
  }
  if (json) {
    JsonObject doc;
    doc.AddInt("replicas", (*trainer)->replicas())
        .AddString("strategy", (*trainer)->strategy())
        .AddRaw("steps", JsonArray(steps_json));
    if (!save.empty()) doc.AddString("saved", save);
    std::printf("%s\n", doc.ToString().c_str());
  }
  return 0;
}

}  // namespace sluice
