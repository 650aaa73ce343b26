// The ONNX verbs of `sluice`: test-onnx and convert, and `run` for .onnx models.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "frontend/onnx/optimize.h"
#include "google/protobuf/text_format.h"
#include "tools/session_flags.h"
#include "tools/json.h"
#include "tools/onnx_test_runner.h"
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

constexpr char kConvertHelp[] = R"(usage: sluice convert MODEL.onnx -o GRAPH.pb|GRAPH.pbtxt

Imports an ONNX model and writes the Sluice GraphDef (text format for .pbtxt). The graph's
inputs and outputs are listed on stdout as "input NAME -> TENSOR" / "output NAME -> TENSOR".

The graph optimizer runs on the way (--optimize, the default) and what each pass rewrote is
printed as "pass NAME: N rewrites, M nodes after"; --no-optimize writes the graph as imported.

options:
  --json   print one JSON object instead of the lines:
             {"file": GRAPH, "nodes": N,
              "inputs": [{"name", "tensor", "dtype", "shape", "has_default"}],
              "outputs": [{"name", "tensor", "dtype"}],
              "passes": [{"pass", "rewrites", "nodes_after"}]}
           (shape as a string: "[N,3]", "[?,3]" or "<unknown>")
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
  auto report = [&](OnnxCaseResult r) {
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
  }
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
    }
    for (const std::string& dir : cases_of_path[p]) {
      const std::string trace_file = trace_file_of(dir);
      report(no_fork ? RunOnnxTestCase(dir, options, trace_file)
                     : RunIsolated(dir, options, timeout, trace_file));
    }
  }
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

int ConvertVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s\noptimizer passes, in order:\n", kConvertHelp, kOptimizeFlagsHelp);
    for (const OptimizerPass& p : OptimizerPasses()) std::printf("  %-24s %s\n", p.name, p.summary);
    return 0;
  }
  OnnxImportOptions import;
  if (absl::Status flags = TakeOptimizeFlags(args, &import); !flags.ok()) {
    std::fprintf(stderr, "sluice convert: %s\n%s", std::string(flags.message()).c_str(), kConvertHelp);
    return 2;
  }
  std::string out = args.Take("-o");
  if (out.empty()) out = args.Take("--output");
  const bool json = args.Has("--json");
  auto positional = args.Positional(1);
  if (!positional.ok() || positional->size() != 1 || out.empty()) {
    std::fprintf(stderr, "sluice convert: %s\n%s",
                 positional.ok() ? "expected MODEL.onnx and -o GRAPH" : std::string(positional.status().message()).c_str(),
                 kConvertHelp);
    return 2;
  }
  auto g = ImportOnnxFile((*positional)[0], import);
  if (!g.ok()) {
    std::fprintf(stderr, "sluice convert: %s\n", StatusToString(g.status()).c_str());
    return 1;
  }
  std::ofstream file(out, std::ios::binary);
  bool ok;
  if (absl::EndsWith(out, ".pbtxt") || absl::EndsWith(out, ".txt")) {
    std::string text;
    ok = google::protobuf::TextFormat::PrintToString(g->graph, &text) && (file << text);
  } else {
    ok = g->graph.SerializeToOstream(&file);
  }
  if (!ok) {
    std::fprintf(stderr, "sluice convert: cannot write '%s'\n", out.c_str());
    return 1;
  }
  if (json) {
    std::vector<std::string> inputs, outputs;
    for (const auto& in : g->inputs) {
      inputs.push_back(JsonObject()
                           .AddString("name", in.name)
                           .AddString("tensor", in.tensor)
                           .AddString("dtype", DataTypeString(in.dtype))
                           .AddString("shape", in.shape.DebugString())
                           .AddBool("has_default", in.has_default)
                           .ToString());
    }
    for (const auto& o : g->outputs) {
      outputs.push_back(JsonObject()
                            .AddString("name", o.name)
                            .AddString("tensor", o.tensor)
                            .AddString("dtype", DataTypeString(o.dtype))
                            .ToString());
    }
    std::vector<std::string> passes;
    for (const auto& r : g->optimizations) {
      passes.push_back(JsonObject()
                           .AddString("pass", r.pass)
                           .AddInt("rewrites", r.rewrites)
                           .AddInt("nodes_after", r.nodes_after)
                           .ToString());
    }
    std::printf("%s\n", JsonObject()
                            .AddString("file", out)
                            .AddInt("nodes", g->graph.node_size())
                            .AddRaw("inputs", JsonArray(inputs))
                            .AddRaw("outputs", JsonArray(outputs))
                            .AddRaw("passes", JsonArray(passes))
                            .ToString()
                            .c_str());
    return 0;
  }
  for (const auto& in : g->inputs) {
    std::printf("input %s -> %s (%s %s%s)\n", in.name.c_str(), in.tensor.c_str(),
                DataTypeString(in.dtype).c_str(), in.shape.DebugString().c_str(), in.has_default ? ", has default" : "");
  }
  for (const auto& o : g->outputs) {
    std::printf("output %s -> %s (%s)\n", o.name.c_str(), o.tensor.c_str(), DataTypeString(o.dtype).c_str());
  }
  for (const auto& r : g->optimizations) {
    std::printf("pass %s: %d rewrites, %d nodes after\n", r.pass.c_str(), r.rewrites, r.nodes_after);
  }
  std::printf("wrote %s (%d nodes)\n", out.c_str(), g->graph.node_size());
  return 0;
}

absl::StatusOr<Tensor> RandomTensor(DataType dt, const PartialShape& shape, std::mt19937* rng) {
  DimVector dims;
  if (!shape.unknown_rank()) {
    for (int64_t d : shape.dims()) dims.push_back(d < 0 ? 1 : d);
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, TensorShape(dims)));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  bool ok = VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& v : t.flat<T>()) {
      if constexpr (std::is_same_v<T, tstring>) {
        v = "x";
      } else if constexpr (std::is_same_v<T, bool>) {
        v = uniform(*rng) > 0;
      } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        v = T(uniform(*rng), uniform(*rng));
      } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(static_cast<int>((uniform(*rng) + 1) * 4));
      } else {
        v = T(uniform(*rng));
      }
    }
  });
  if (!ok) return absl::UnimplementedError(absl::StrCat("no random values for ", DataTypeString(dt)));
  return t;
}

}  // namespace sluice
