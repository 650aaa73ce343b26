// `sluice run`: run an ONNX model or a GraphDef; tensors in and out are ONNX TensorProto files.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "master/session.h"
#include "tools/chrome_trace.h"
#include "tools/cli.h"
#include "tools/error_hints.h"
#include "tools/json.h"
#include "tools/model_inputs.h"
#include "tools/run_plan.h"
#include "tools/session_flags.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice run MODEL.onnx|GRAPH.pb|GRAPH.pbtxt [options]

Runs a model in an embedded session and prints a table of the outputs, one line each, in
aligned columns: "NAME: DTYPE SHAPE min=X max=Y mean=Z values: FIRST..." (min, max and mean
for real and bool outputs; the first 6 values). With --output-dir, each output is written as
an ONNX TensorProto file output_<i>.pb whose name is the output's.
Errors start with their status code (INVALID_ARGUMENT: ...); where the fix is known a
"hint: ..." line follows (the --input to add, the model's input names, the --target to check).

options:
  --input FILE.pb        an input as an ONNX TensorProto file; repeat for several. Without
                         NAME=, inputs go to the model's graph inputs in order (for a GraphDef:
                         to the tensor named inside the file).
  --input NAME=FILE.pb   the input named NAME (an ONNX graph input, or "x"/"x:0" in a GraphDef)
                         With no --input at all, an ONNX model gets random inputs.
  --output NAME          (GraphDef only) fetch NAME; repeatable. Default: every output 0 of a
                         node that no other node consumes.
  --output-dir DIR       where output_<i>.pb files go (default: print only)
  --devices N            number of CPU devices in the embedded worker (default 1)
  --show-placement       after the outputs, one line per device: its nodes, _Send and _Recv
  --trace FILE.json      a Chrome trace of the run (chrome://tracing, Perfetto): a track per
                         device, an event per node, from every task of a cluster
  --json                 print one JSON object instead of the lines:
                           {"random_inputs": [{"name", "dtype", "shape"}],
                            "outputs": [{"name", "dtype", "shape", "min", "max", "mean",
                                         "values" (the first 6), "file"}],
                            "placement": [{"device", "nodes", "sends", "recvs"}],
                            "trace": {"file", "events", "devices"}}
                         (min, max, mean and values for real and bool outputs only;
                         placement with --show-placement, trace with --trace)
  --help                 this text
)";

// Min, max and mean of a real-valued tensor; none for strings, complex and variant values.
struct Stats {
  bool has = false;
  double min = INFINITY, max = -INFINITY, mean = 0;
  std::vector<double> first;  // The first kShownValues values.
};
constexpr int kShownValues = 6;

Stats StatsOf(const Tensor& t) {
  Stats st;
  if (t.NumElements() == 0 ||
      !(DataTypeIsFloating(t.dtype()) || DataTypeIsInteger(t.dtype()) || t.dtype() == DT_BOOL)) {
    return st;
  }
  double sum = 0;
  VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, tstring> && !std::is_same_v<T, complex64> &&
                  !std::is_same_v<T, complex128>) {
      for (const T& v : t.flat<T>()) {
        double d;
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
          d = static_cast<float>(v);
        } else {
          d = static_cast<double>(v);
        }
        st.min = std::min(st.min, d);
        st.max = std::max(st.max, d);
        sum += d;
        if (st.first.size() < kShownValues) st.first.push_back(d);
      }
    }
  });
  st.has = true;
  st.mean = sum / t.NumElements();
  return st;
}

// One row of the outputs table: "NAME:", dtype, shape, "min=X", "max=Y", "mean=Z", "values: ..."
// (cells empty where they do not apply).
std::vector<std::string> SummaryRow(const std::string& name, const Tensor& t) {
  std::vector<std::string> row = {absl::StrCat(name, ":"), DataTypeString(t.dtype()),
                                  t.shape().DebugString(), "", "", "", ""};
  if (t.NumElements() == 0) return row;
  const Stats st = StatsOf(t);
  if (st.has) {
    row[3] = absl::StrCat("min=", st.min);
    row[4] = absl::StrCat("max=", st.max);
    row[5] = absl::StrCat("mean=", st.mean);
  }
  std::string values = t.DebugString(kShownValues);  // "Tensor<float [3,2]: 5.5 0 ...>"
  size_t colon = values.find(':');
  row[6] = absl::StrCat("values:", values.substr(colon + 1, values.size() - colon - 2));
  return row;
}

// The rows with each column padded to its widest cell; columns empty in every row are left
// out. One output prints as "y:0: float [3,2] min=0 max=20.5 mean=4.58333 values: 5.5 0 ...".
std::vector<std::string> AlignedRows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (width[c] == 0) continue;
      if (!line.empty()) line += ' ';
      line += row[c];
      line.append(width[c] - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

// {"name", "dtype", "shape": [...], "min", "max", "mean", "values": [the first few]} ("file"
// when written); the statistics only for real values.
JsonObject OutputJson(const std::string& name, const Tensor& t) {
  JsonObject o;
  o.AddString("name", name).AddString("dtype", DataTypeString(t.dtype()));
  std::vector<std::string> dims;
  for (int64_t d : t.shape().dim_sizes()) dims.push_back(absl::StrCat(d));
  o.AddRaw("shape", JsonArray(dims));
  const Stats st = StatsOf(t);
  if (st.has) {
    std::vector<std::string> first;
    for (double v : st.first) first.push_back(JsonNumber(v));
    o.AddDouble("min", st.min).AddDouble("max", st.max).AddDouble("mean", st.mean).AddRaw("values", JsonArray(first));
  }
  return o;
}

// Per device of the partition graphs: its nodes, _Send and _Recv.
std::map<std::string, std::array<int, 3>> PlacementOf(const RunMetadata& metadata) {
  std::map<std::string, std::array<int, 3>> by_device;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      auto& c = by_device[n.device()];
      ++c[0];
      c[1] += n.op() == "_Send";
      c[2] += n.op() == "_Recv";
    }
  }
  return by_device;
}

}  // namespace

int RunVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s%s", kHelp, kSessionFlagsHelp, kOptimizeFlagsHelp);
    return 0;
  }
  std::vector<std::string> inputs = args.TakeAll("--input");
  std::vector<std::string> outputs = args.TakeAll("--output");
  std::string output_dir = args.Take("--output-dir");
  std::string devices = args.Take("--devices", "1");
  const bool show_placement = args.Has("--show-placement");
  const std::string trace_file = args.Take("--trace");
  const bool json = args.Has("--json");
  SessionOptions options;
  absl::Status flags = TakeSessionFlags(args, &options);
  OnnxImportOptions import;
  flags.Update(TakeOptimizeFlags(args, &options));
  if (!flags.ok()) {
    std::fprintf(stderr, "sluice run: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  auto positional = args.Positional(1);
  if (!positional.ok() || positional->size() != 1) {
    std::fprintf(stderr, "sluice run: %s\n%s",
                 positional.ok() ? "expected one MODEL or GRAPH file"
                                 : std::string(positional.status().message()).c_str(),
                 kHelp);
    return 2;
  }
  const std::string& path = (*positional)[0];
  Plan plan;
  ErrorHintContext hints;
  hints.target = options.target;
  auto fail = [&](const absl::Status& s) {
    hints.input_names = plan.input_names;
    return ReportFailure("run", s, hints);
  };
  absl::Status s = PlanModel(path, inputs, outputs, import, /*random_placeholders=*/false, &plan);
  if (!s.ok()) return fail(s);

  (*options.config.mutable_device_count())["CPU"] = std::max(1, std::atoi(devices.c_str()));
  auto session = NewSession(options);
  if (!session.ok()) return fail(session.status());
  s = (*session)->Create(std::move(plan.graph));
  if (!s.ok()) return fail(s);
  std::vector<Tensor> results;
  RunOptions run_options;
  run_options.set_output_partition_graphs(show_placement);
  if (!trace_file.empty()) run_options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  s = (*session)->Run(run_options, plan.feeds, plan.fetches, {}, &results, &metadata);
  if (!s.ok()) return fail(s);
  if (!output_dir.empty()) std::filesystem::create_directories(output_dir);
  std::vector<std::string> outputs_json, random_json;
  for (size_t i = 0; i < plan.random_inputs.size(); ++i) {
    const Tensor& t = plan.feeds[i].second;
    if (json) {
      JsonObject o;
      std::vector<std::string> dims;
      for (int64_t d : t.shape().dim_sizes()) dims.push_back(absl::StrCat(d));
      o.AddString("name", plan.random_inputs[i]).AddString("dtype", DataTypeString(t.dtype()));
      random_json.push_back(o.AddRaw("shape", JsonArray(dims)).ToString());
    } else {
      std::printf("random input %s: %s %s\n", plan.random_inputs[i].c_str(), DataTypeString(t.dtype()).c_str(),
                  t.shape().DebugString().c_str());
    }
  }
  if (!json) {
    std::vector<std::vector<std::string>> table;
    for (size_t i = 0; i < results.size(); ++i) table.push_back(SummaryRow(plan.output_names[i], results[i]));
    for (const std::string& line : AlignedRows(table)) std::printf("%s\n", line.c_str());
  }
  for (size_t i = 0; i < results.size(); ++i) {
    JsonObject o = OutputJson(plan.output_names[i], results[i]);
    if (!output_dir.empty()) {
      std::string file = absl::StrCat(output_dir, "/output_", i, ".pb");
      s = WriteOnnxValueFile(file, results[i], plan.output_names[i]);
      if (!s.ok()) return fail(s);
      o.AddString("file", file);
    }
    outputs_json.push_back(o.ToString());
  }
  JsonObject doc;
  doc.AddRaw("random_inputs", JsonArray(random_json)).AddRaw("outputs", JsonArray(outputs_json));
  if (show_placement) {
    std::vector<std::string> placement_json;
    for (const auto& [device, c] : PlacementOf(metadata)) {
      if (json) {
        placement_json.push_back(JsonObject()
                                     .AddString("device", device)
                                     .AddInt("nodes", c[0])
                                     .AddInt("sends", c[1])
                                     .AddInt("recvs", c[2])
                                     .ToString());
      } else {
        std::printf("placement: %s: %d nodes (%d _Send, %d _Recv)\n", device.c_str(), c[0], c[1], c[2]);
      }
    }
    doc.AddRaw("placement", JsonArray(placement_json));
  }
  if (!trace_file.empty()) {
    auto events = WriteChromeTrace(trace_file, metadata.step_stats());
    if (!events.ok()) return fail(events.status());
    const int devices = metadata.step_stats().dev_stats_size();
    doc.AddRaw("trace", JsonObject().AddString("file", trace_file).AddInt("events", *events).AddInt("devices", devices).ToString());
    if (!json) std::printf("trace: %s (%d node executions on %d devices)\n", trace_file.c_str(), *events, devices);
  }
  if (json) std::printf("%s\n", doc.ToString().c_str());
  return 0;
}

}  // namespace sluice
