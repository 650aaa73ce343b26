// The ONNX verbs of `sluice`: test-onnx and convert, and `run` for .onnx models.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "framework/status.h"
#include "framework/file_util.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/optimized_model.h"
#include "frontend/onnx/onnx_tensor.h"
#include "optimizer/graph_item.h"
#include "optimizer/meta_optimizer.h"
#include "google/protobuf/text_format.h"
#include "master/session.h"
#include "tools/error_hints.h"
#include "tools/json.h"
#include "tools/model_inputs.h"
#include "tools/onnx_test_runner.h"
#include "tools/partition_view.h"
#include "tools/progress.h"
#include "tools/session_flags.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kTestHelp[] = R"(usage: sluice test-onnx PATH... [options]

Runs ONNX backend test cases. Each PATH is a case folder (model.onnx, test_data_set_N/
input_i.pb, output_i.pb) or a folder of them. Prints one line per case (PASS name,
FAIL name: reason, SKIP name: reason), then "N passed, N failed, N skipped" alone on the
last line. Exit status 0 only when nothing failed.
Tolerance: |got - want| <= 1e-5 + 1e-3 * |want|; exact for integers, bools and strings.
Each case runs in its own process, so a crash or hang fails that case, not the run.
When stderr is a terminal, a progress line there ("test-onnx: 312/922 cases, 3 failed") is
rewritten as cases end and erased at the end.

options:
  --json FILE        write every case's outcome, reason and time as JSON:
                       {"passed": N, "failed": N, "skipped": N,
                        "cases": [{"name", "outcome": "pass"|"fail"|"skip", "ms", "reason"}]}
                     --json - prints that object alone on stdout, instead of the lines
  --timeout SECONDS  per case (default 120)
  --no-fork          run cases in this process (for debugging)
  --trace FILE.json  a Chrome trace of each case's first run (as `sluice run --trace`); with
                     several cases, one file each, named after the case: t.json ->
                     t.test_relu.json
  --help             this text
)";

constexpr char kConvertHelp[] = R"(usage: sluice convert MODEL.onnx [-o GRAPH.pb|GRAPH.pbtxt|OPT.onnx] [--dot FILE] [options]

Imports an ONNX model and writes the Sluice GraphDef: TensorFlow's GraphDef layout, field
names and numbers (node name, op, input as "node", "node:k" or "^node", device, attr map;
versions.producer set), so TensorFlow's graph viewers (TensorBoard, Netron) open it. The
graph's inputs and outputs are listed on stdout as "input NAME -> TENSOR" / "output NAME ->
TENSOR".

The graph optimizer runs on the way (--optimize, the default): the master's passes, as it
runs them on a graph placed on one CPU device, and what each pass rewrote is printed as "pass
NAME: N rewrites, M nodes after"; --no-optimize writes the graph as imported. With --dot, or
with --devices N, --placement or --target, the master places and optimizes one step of the
model itself (see --dot) and the passes printed are those it ran on that placed graph (the file
written with -o stays the one-CPU graph).

options:
  -o, --output GRAPH   where the GraphDef goes
  --format pbtxt|pb|onnx
                       text or binary GraphDef, or an ONNX model that holds the GraphDef
                       in one node of domain ai.sluice (ONNX Runtime's optimized model:
                       loads in Sluice only) (default: text for a .pbtxt or .txt GRAPH, onnx
                       for a .onnx one, binary otherwise)
  --dot FILE           a Graphviz view of the graph as a step that feeds the model's inputs
                       and fetches its outputs runs it: partitioned by device by the master,
                       one cluster per device, each _Send joined to its _Recv by a dashed
                       edge labelled with the tensor (render: dot -Tpng FILE -o g.png). The
                       model runs once, as `sluice run` runs it (random inputs of the declared
                       shapes unless --input is given), to obtain the master's partitions
  --input [NAME=]FILE.pb
                       for the master's step, an input instead of random values, as in
                       `sluice run`; repeatable
  --devices N          CPU devices the master places the step on (default 1, as `sluice
                       run`); with --target, the cluster's devices instead
  --placement, --device-map, --target
                       as in `sluice run` (e.g. --devices 2 --placement pipeline splits the
                       model over two devices); the master's step runs as for --dot
  --json   print one JSON object instead of the lines:
             {"file": GRAPH, "format": "pbtxt"|"pb", "nodes": N,
              "inputs": [{"name", "tensor", "dtype", "shape", "has_default"}],
              "outputs": [{"name", "tensor", "dtype"}],
              "passes": [{"pass", "rewrites", "nodes_after"}], "passes_of": WHOSE,
              "dot": {"file", "devices": [{"device", "nodes", "sends", "recvs"}]}}
           (shape as a string: "[N,3]", "[?,3]" or "<unknown>"; file and format with -o,
           dot with --dot)
)";

// Runs one case in a child process so that a crash or a hang fails only that case.
OnnxCaseResult RunIsolated(const std::string& dir, const SessionOptions& options, int timeout_s,
                           const std::string& trace_file) {
  int fds[2];
  if (pipe(fds) != 0) return RunOnnxTestCase(dir, options, trace_file);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    OnnxCaseResult r = RunOnnxTestCase(dir, options, trace_file);
    std::string msg = absl::StrCat(static_cast<int>(r.outcome), "\t", r.millis, "\t", r.reason);
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t n = write(fds[1], msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += n;
    }
    _exit(0);
  }
  close(fds[1]);
  OnnxCaseResult r;
  r.name = std::filesystem::path(dir).filename().string();
  std::string data;
  char buf[4096];
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    data.append(buf, n);
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) {
    r.reason = absl::StrCat("timed out after ", timeout_s, " s");
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.reason = absl::StrCat("crashed with signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
    return r;
  }
  std::vector<std::string> parts = absl::StrSplit(data, absl::MaxSplits('\t', 2));
  int outcome = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &outcome)) {
    r.reason = "the case's process ended without a result";
    return r;
  }
  r.outcome = static_cast<OnnxCaseResult::Outcome>(outcome);
  if (!absl::SimpleAtod(parts[1], &r.millis)) r.millis = 0;
  r.reason = parts[2];
  return r;
}

}  // namespace

int TestOnnxVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s", kTestHelp, kSessionFlagsHelp);
    return 0;
  }
  std::string json = args.Take("--json");
  const std::string trace = args.Take("--trace");
  int timeout = 120;
  std::string timeout_s = args.Take("--timeout");
  if (!timeout_s.empty() && (!absl::SimpleAtoi(timeout_s, &timeout) || timeout <= 0)) {
    std::fprintf(stderr, "sluice test-onnx: bad --timeout '%s'\n", timeout_s.c_str());
    return 2;
  }
  bool no_fork = args.Has("--no-fork");
  SessionOptions options;
  absl::Status flags = TakeSessionFlags(args, &options);
  if (!flags.ok()) {
    std::fprintf(stderr, "sluice test-onnx: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  auto paths = args.Positional(1 << 20);
  if (!paths.ok() || paths->empty()) {
    std::fprintf(stderr, "sluice test-onnx: %s\n%s",
                 paths.ok() ? "expected at least one PATH" : std::string(paths.status().message()).c_str(),
                 kTestHelp);
    return 2;
  }
  std::vector<OnnxCaseResult> results;
  int passed = 0, failed = 0, skipped = 0;
  const bool lines = json != "-";
  ProgressLine progress;  // On stderr, when it is a terminal.
  size_t total = 0;       // Cases, and paths without any (each reported as one failure).
  auto report = [&](OnnxCaseResult r) {
    progress.Clear();
    if (!lines) {
      passed += r.outcome == OnnxCaseResult::kPass;
      failed += r.outcome == OnnxCaseResult::kFail;
      skipped += r.outcome == OnnxCaseResult::kSkip;
      results.push_back(std::move(r));
      return;
    }
    switch (r.outcome) {
      case OnnxCaseResult::kPass: ++passed; std::printf("PASS %s\n", r.name.c_str()); break;
      case OnnxCaseResult::kFail: ++failed; std::printf("FAIL %s: %s\n", r.name.c_str(), r.reason.c_str()); break;
      case OnnxCaseResult::kSkip: ++skipped; std::printf("SKIP %s: %s\n", r.name.c_str(), r.reason.c_str()); break;
    }
    std::fflush(stdout);
    results.push_back(std::move(r));
  };
  std::vector<std::vector<std::string>> cases_of_path;
  size_t total_cases = 0;
  for (const std::string& path : *paths) {
    cases_of_path.push_back(FindOnnxTestCases(path));
    total_cases += cases_of_path.back().size();
    total += std::max<size_t>(1, cases_of_path.back().size());
  }
  auto show_progress = [&] {
    progress.Update(absl::StrCat("test-onnx: ", results.size(), "/", total, " cases, ", failed, " failed"));
  };
  show_progress();
  // "t.json" for one case; "t.<case>.json" for each of several.
  auto trace_file_of = [&](const std::string& dir) -> std::string {
    if (trace.empty() || total_cases == 1) return trace;
    const std::filesystem::path t(trace);
    return (t.parent_path() / absl::StrCat(t.stem().string(), ".",
                                           std::filesystem::path(dir).filename().string(),
                                           t.extension().string()))
        .string();
  };
  for (size_t p = 0; p < paths->size(); ++p) {
    if (cases_of_path[p].empty()) {
      OnnxCaseResult r;
      r.name = (*paths)[p];
      r.reason = "no model.onnx here or in its subfolders";
      report(r);
      show_progress();
    }
    for (const std::string& dir : cases_of_path[p]) {
      const std::string trace_file = trace_file_of(dir);
      report(no_fork ? RunOnnxTestCase(dir, options, trace_file)
                     : RunIsolated(dir, options, timeout, trace_file));
      show_progress();
    }
  }
  progress.Done();
  if (!json.empty()) {
    std::vector<std::string> cases;
    for (const OnnxCaseResult& r : results) {
      const char* o[] = {"pass", "fail", "skip"};
      cases.push_back(JsonObject()
                          .AddString("name", r.name)
                          .AddString("outcome", o[r.outcome])
                          .AddDouble("ms", r.millis, 6)
                          .AddString("reason", r.reason)
                          .ToString());
    }
    const std::string doc = JsonObject()
                                .AddInt("passed", passed)
                                .AddInt("failed", failed)
                                .AddInt("skipped", skipped)
                                .AddRaw("cases", JsonArray(cases))
                                .ToString();
    if (lines) {
      std::ofstream(json) << doc << "\n";
    } else {
      std::printf("%s\n", doc.c_str());
    }
  }
  if (lines) std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}

// What the master's optimizer makes of an imported graph on one CPU device (feeds of the
// declared shapes), for `convert` to write; nothing with disable_meta_optimizer.
absl::StatusOr<std::vector<OptimizerPassSummary>> OptimizeImported(const RewriterConfig& config,
                                                                   OnnxGraph* g) {
  const OnnxGraphEnds ends = EndsOf(*g);
  SL_ASSIGN_OR_RETURN(auto report, OptimizeGraphDef(config, ends.inputs, ends.feed_shapes, ends.outputs, &g->graph));
  std::vector<OptimizerPassSummary> passes;
  for (const OptimizerPassReport& r : report) {
    OptimizerPassSummary& p = passes.emplace_back();
    p.set_pass(r.pass);
    p.set_rewrites(r.rewrites);
    p.set_nodes_after(r.nodes_after);
  }
  return passes;
}

// What the master did with one step of the imported graph: its optimizer's passes over the
// placed graph and the partitions it made.
struct MasterStep {
  std::vector<OptimizerPassSummary> passes;
  std::map<std::string, GraphDef> partitions;  // Device -> its partition.
};

// Runs one step that feeds the model's inputs (`input_flags`, random values otherwise) and
// fetches each of its outputs once, in the session `options` makes, as `sluice run` runs it.
absl::StatusOr<MasterStep> RunMasterStep(const OnnxGraph& g, const GraphDef& imported,
                                         const std::vector<std::string>& input_flags,
                                         const SessionOptions& options) {
  SL_ASSIGN_OR_RETURN(auto step, OnnxInputs(g, input_flags));
  std::vector<std::string> fetches;
  for (const auto& o : g.outputs) {
    if (std::find(fetches.begin(), fetches.end(), o.tensor) == fetches.end()) fetches.push_back(o.tensor);
  }
  SL_ASSIGN_OR_RETURN(auto session, NewSession(options));
  SL_RETURN_IF_ERROR(session->Create(imported));
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> results;
  SL_RETURN_IF_ERROR(session->Run(run_options, step.feeds, fetches, {}, &results, &metadata));
  MasterStep out;
  out.passes.assign(metadata.optimizer_passes().begin(), metadata.optimizer_passes().end());
  out.partitions = PartitionsByDevice(metadata.partition_graphs());
  return out;
}

bool WriteGraphDef(const GraphDef& graph, const std::string& path, const std::string& format) {
  std::ofstream file(path, std::ios::binary);
  if (format == "pbtxt") {
    std::string text;
    return google::protobuf::TextFormat::PrintToString(graph, &text) && static_cast<bool>(file << text);
  }
  return graph.SerializeToOstream(&file);
}

// What convert prints: the lines, or with --json one object.
void PrintConvertSummary(const OnnxGraph& g, const std::vector<OptimizerPassSummary>& passes,
                         const std::string& passes_of, const std::vector<PartitionCounts>& dot_counts,
                         const std::string& out, const std::string& format, const std::string& dot,
                         bool json) {
  if (json) {
    std::vector<std::string> inputs, outputs, pass_docs, devices;
    for (const auto& in : g.inputs) {
      inputs.push_back(JsonObject()
                           .AddString("name", in.name)
                           .AddString("tensor", in.tensor)
                           .AddString("dtype", DataTypeString(in.dtype))
                           .AddString("shape", in.shape.DebugString())
                           .AddBool("has_default", in.has_default)
                           .ToString());
    }
    for (const auto& o : g.outputs) {
      outputs.push_back(JsonObject()
                            .AddString("name", o.name)
                            .AddString("tensor", o.tensor)
                            .AddString("dtype", DataTypeString(o.dtype))
                            .ToString());
    }
    for (const auto& r : passes) {
      pass_docs.push_back(JsonObject()
                              .AddString("pass", r.pass())
                              .AddInt("rewrites", r.rewrites())
                              .AddInt("nodes_after", r.nodes_after())
                              .ToString());
    }
    for (const PartitionCounts& c : dot_counts) {
      devices.push_back(JsonObject()
                            .AddString("device", c.device)
                            .AddInt("nodes", c.nodes)
                            .AddInt("sends", c.sends)
                            .AddInt("recvs", c.recvs)
                            .ToString());
    }
    JsonObject doc;
    if (!out.empty()) doc.AddString("file", out).AddString("format", format);
    doc.AddInt("nodes", g.graph.node_size())
        .AddRaw("inputs", JsonArray(inputs))
        .AddRaw("outputs", JsonArray(outputs))
        .AddRaw("passes", JsonArray(pass_docs))
        .AddString("passes_of", passes_of);
    if (!dot.empty()) {
      doc.AddRaw("dot", JsonObject().AddString("file", dot).AddRaw("devices", JsonArray(devices)).ToString());
    }
    std::printf("%s\n", doc.ToString().c_str());
    return;
  }
  for (const auto& in : g.inputs) {
    std::printf("input %s -> %s (%s %s%s)\n", in.name.c_str(), in.tensor.c_str(),
                DataTypeString(in.dtype).c_str(), in.shape.DebugString().c_str(),
                in.has_default ? ", has default" : "");
  }
  for (const auto& o : g.outputs) {
    std::printf("output %s -> %s (%s)\n", o.name.c_str(), o.tensor.c_str(), DataTypeString(o.dtype).c_str());
  }
  if (!passes.empty()) std::printf("passes of %s:\n", passes_of.c_str());
  for (const auto& r : passes) {
    std::printf("pass %s: %d rewrites, %d nodes after\n", r.pass().c_str(), r.rewrites(), r.nodes_after());
  }
  for (const PartitionCounts& c : dot_counts) {
    std::printf("dot: %s: %d nodes (%d _Send, %d _Recv)\n", c.device.c_str(), c.nodes, c.sends, c.recvs);
  }
  if (!dot.empty()) std::printf("wrote %s (%zu devices)\n", dot.c_str(), dot_counts.size());
  if (!out.empty()) std::printf("wrote %s (%d nodes)\n", out.c_str(), g.graph.node_size());
}

int ConvertVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s\noptimizer passes, in order:\n", kConvertHelp, kOptimizeFlagsHelp);
    for (const OptimizerPass& p : OptimizerPasses()) std::printf("  %-24s %s\n", p.name, p.summary);
    return 0;
  }
  auto usage = [](const std::string& message) {
    std::fprintf(stderr, "sluice convert: %s\n%s", message.c_str(), kConvertHelp);
    return 2;
  };
  OnnxImportOptions import;
  SessionOptions options;  // The optimizer's passes; for the master's step, devices and placement.
  if (absl::Status flags = TakeOptimizeFlags(args, &options); !flags.ok()) {
    return usage(std::string(flags.message()));
  }
  std::string out = args.Take("-o");
  if (out.empty()) out = args.Take("--output");
  std::string format = args.Take("--format");
  const std::string dot = args.Take("--dot");
  const std::vector<std::string> inputs = args.TakeAll("--input");
  const std::string devices_flag = args.Take("--devices");
  if (absl::Status flags = TakeSessionFlags(args, &options); !flags.ok()) {
    return usage(std::string(flags.message()));
  }
  const bool json = args.Has("--json");
  auto positional = args.Positional(1);
  if (!positional.ok()) return usage(std::string(positional.status().message()));
  if (positional->size() != 1 || (out.empty() && dot.empty())) {
    return usage("expected MODEL.onnx and -o GRAPH, --dot FILE or both");
  }
  if (format.empty()) {
    format = absl::EndsWith(out, ".pbtxt") || absl::EndsWith(out, ".txt") ? "pbtxt"
             : absl::EndsWith(out, ".onnx")                                 ? "onnx"
                                                                            : "pb";
  } else if (format != "pbtxt" && format != "pb" && format != "onnx") {
    return usage(absl::StrCat("--format '", format, "': expected pbtxt, pb or onnx"));
  }
  int devices = 1;
  if (!devices_flag.empty() && (!absl::SimpleAtoi(devices_flag, &devices) || devices < 1)) {
    return usage(absl::StrCat("--devices '", devices_flag, "': expected a number of devices >= 1"));
  }
  // The master's own step runs for --dot, and wherever placement is asked for (more devices,
  // a cluster, a policy): the passes are then reported as the master ran them on its placed graph.
  const PlacementOptions& placement = options.config.placement();
  const bool master_step = !dot.empty() || devices > 1 || !options.target.empty() ||
                           !placement.policy().empty() || placement.device_map_size() > 0;
  if (!inputs.empty() && !master_step) return usage("--input applies to --dot (or --devices N) only");
  auto model = LoadOnnxModel((*positional)[0]);
  if (!model.ok()) return ReportFailure("convert", model.status());
  const onnx::ModelProto header = ModelHeader(*model);
  auto g = ImportOnnxModel(*std::move(model), import);
  if (!g.ok()) return ReportFailure("convert", AddContext(g.status(), (*positional)[0]));
  GraphDef imported;
  if (master_step) imported = g->graph;
  auto passes = OptimizeImported(options.config.graph_options().rewrite_options(), &*g);
  if (!passes.ok()) return ReportFailure("convert", passes.status());
  std::string passes_of = "the master on one CPU device";
  if (!out.empty() && format == "onnx") {
    auto wrapped = WrapOptimizedGraph(header, *g);
    absl::Status written = wrapped.ok() ? WriteFileAtomically(out, wrapped->SerializeAsString()) : wrapped.status();
    if (!written.ok()) return ReportFailure("convert", AddContext(written, out));
  } else if (!out.empty() && !WriteGraphDef(g->graph, out, format)) {
    std::fprintf(stderr, "sluice convert: cannot write '%s'\n", out.c_str());
    return 1;
  }
  std::vector<PartitionCounts> dot_counts;
  if (master_step) {
    ErrorHintContext hints;
    hints.target = options.target;
    for (const auto& in : g->inputs) hints.input_names.push_back(in.name);
    (*options.config.mutable_device_count())["CPU"] = devices;
    auto step = RunMasterStep(*g, imported, inputs, options);
    if (!step.ok()) return ReportFailure("convert", AddContext(step.status(), dot.empty() ? "placing" : "--dot"), hints);
    *passes = std::move(step->passes);
    passes_of = absl::StrCat("the master's placed graph (", step->partitions.size(), " devices)");
    if (!dot.empty()) {
      std::ofstream file(dot, std::ios::binary);
      if (!(file << PartitionsToDot(step->partitions))) {
        std::fprintf(stderr, "sluice convert: cannot write '%s'\n", dot.c_str());
        return 1;
      }
      dot_counts = CountPartitions(step->partitions);
    }
  }
  PrintConvertSummary(*g, *passes, passes_of, dot_counts, out, format, dot, json);
  return 0;
}

}  // namespace sluice
