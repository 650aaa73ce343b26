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
#include "tools/session_flags.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice run MODEL.onnx|GRAPH.pb|GRAPH.pbtxt [options]

Runs a model in an embedded session and prints one line per output. With --output-dir,
each output is written as an ONNX TensorProto file output_<i>.pb whose name is the output's.

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
  --help                 this text
)";

std::string Summary(const std::string& name, const Tensor& t) {
  std::string s = absl::StrCat(name, ": ", DataTypeString(t.dtype()), " ", t.shape().DebugString());
  if (t.NumElements() == 0) return s;
  if (DataTypeIsFloating(t.dtype()) || DataTypeIsInteger(t.dtype()) || t.dtype() == DT_BOOL) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
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
          lo = std::min(lo, d);
          hi = std::max(hi, d);
          sum += d;
        }
      }
    });
    absl::StrAppend(&s, " min=", lo, " max=", hi, " mean=", sum / t.NumElements());
  }
  std::string values = t.DebugString(6);  // "Tensor<float [3,2]: 5.5 0 ...>"
  size_t colon = values.find(':');
  absl::StrAppend(&s, " values:", values.substr(colon + 1, values.size() - colon - 2));
  return s;
}

// "placement: DEVICE: N nodes (S _Send, R _Recv)" per device, from the partition graphs.
void PrintPlacement(const RunMetadata& metadata) {
  std::map<std::string, std::array<int, 3>> by_device;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      auto& c = by_device[n.device()];
      ++c[0];
      c[1] += n.op() == "_Send";
      c[2] += n.op() == "_Recv";
    }
  }
  for (const auto& [device, c] : by_device) {
    std::printf("placement: %s: %d nodes (%d _Send, %d _Recv)\n", device.c_str(), c[0], c[1], c[2]);
  }
}

struct Plan {
  GraphDef graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;       // Tensors to fetch.
  std::vector<std::string> output_names;  // How to call them.
};

absl::Status PlanOnnx(const std::string& path, const std::vector<std::string>& inputs, Plan* plan) {
  SL_ASSIGN_OR_RETURN(OnnxGraph g, ImportOnnxFile(path));
  std::vector<const OnnxValue*> required;
  for (const auto& in : g.inputs) {
    if (!in.has_default) required.push_back(&in);
  }
  size_t next = 0;
  for (const std::string& spec : inputs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    const std::string& file = kv.size() == 2 ? kv[1] : kv[0];
    const OnnxValue* target = nullptr;
    if (kv.size() == 2) {
      for (const auto& in : g.inputs) {
        if (in.name == kv[0]) target = &in;
      }
      if (target == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("the model has no input named '", kv[0], "'"));
      }
    } else {
      if (next >= required.size()) {
        return absl::InvalidArgumentError(absl::StrCat("more --input files than the model's ",
                                                       required.size(), " inputs"));
      }
      target = required[next++];
    }
    // A TensorProto, or a SequenceProto or OptionalProto for inputs of those types.
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxValueFile(file, target->type));
    plan->feeds.emplace_back(target->tensor, std::move(t));
  }
  if (inputs.empty()) {
    std::mt19937 rng(0);
    for (const OnnxValue* in : required) {
      SL_ASSIGN_OR_RETURN(Tensor t, RandomTensor(in->dtype, in->shape, &rng));
      std::printf("random input %s: %s %s\n", in->name.c_str(), DataTypeString(t.dtype()).c_str(),
                  t.shape().DebugString().c_str());
      plan->feeds.emplace_back(in->tensor, std::move(t));
    }
  }
  for (const auto& out : g.outputs) {
    plan->fetches.push_back(out.tensor);
    plan->output_names.push_back(out.name);
  }
  plan->graph = std::move(g.graph);
  return absl::OkStatus();
}

absl::Status PlanGraphDef(const std::string& path, const std::vector<std::string>& inputs,
                          std::vector<std::string> outputs, Plan* plan) {
  SL_ASSIGN_OR_RETURN(plan->graph, ReadGraphDef(path));
  for (const std::string& spec : inputs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::string file = kv.size() == 2 ? kv[1] : kv[0];
    std::string name_in_file;
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxTensorFile(file, &name_in_file));
    std::string name = kv.size() == 2 ? kv[0] : name_in_file;
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", file, "' has no tensor name; use --input NAME=", file));
    }
    plan->feeds.emplace_back(name, std::move(t));
  }
  if (outputs.empty()) {
    std::set<std::string> consumed;
    for (const NodeDef& n : plan->graph.node()) {
      for (const std::string& in : n.input()) {
        auto id = ParseTensorName(in);
        if (id.ok() && id->index != kControlSlot) consumed.insert(absl::StrCat(id->node, ":", id->index));
      }
    }
    for (const NodeDef& n : plan->graph.node()) {
      std::string first = absl::StrCat(n.name(), ":0");
      if (n.op() == "NoOp" || n.op() == "Placeholder" || consumed.count(first)) continue;
      outputs.push_back(first);
    }
  }
  plan->fetches = outputs;
  plan->output_names = outputs;
  return absl::OkStatus();
}

}  // namespace

int RunVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s%s", kHelp, kSessionFlagsHelp);
    return 0;
  }
  std::vector<std::string> inputs = args.TakeAll("--input");
  std::vector<std::string> outputs = args.TakeAll("--output");
  std::string output_dir = args.Take("--output-dir");
  std::string devices = args.Take("--devices", "1");
  const bool show_placement = args.Has("--show-placement");
  const std::string trace_file = args.Take("--trace");
  SessionOptions options;
  absl::Status flags = TakeSessionFlags(args, &options);
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
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "sluice run: %s\n", StatusToString(s).c_str());
    return 1;
  };
  const std::string& path = (*positional)[0];
  Plan plan;
  absl::Status s;
  if (absl::EndsWith(path, ".onnx")) {
    if (!outputs.empty()) return fail(absl::InvalidArgumentError("--output applies to GraphDefs only"));
    s = PlanOnnx(path, inputs, &plan);
  } else {
    s = PlanGraphDef(path, inputs, outputs, &plan);
  }
  if (!s.ok()) return fail(s);

  (*options.config.mutable_device_count())["CPU"] = std::max(1, std::atoi(devices.c_str()));
  auto session = NewSession(options);
  if (!session.ok()) return fail(session.status());
  s = (*session)->Create(plan.graph);
  if (!s.ok()) return fail(s);
  std::vector<Tensor> results;
  RunOptions run_options;
  run_options.set_output_partition_graphs(show_placement);
  if (!trace_file.empty()) run_options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  s = (*session)->Run(run_options, plan.feeds, plan.fetches, {}, &results, &metadata);
  if (!s.ok()) return fail(s);
  if (!output_dir.empty()) std::filesystem::create_directories(output_dir);
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\n", Summary(plan.output_names[i], results[i]).c_str());
    if (!output_dir.empty()) {
      std::string file = absl::StrCat(output_dir, "/output_", i, ".pb");
      s = WriteOnnxValueFile(file, results[i], plan.output_names[i]);
      if (!s.ok()) return fail(s);
    }
  }
  if (show_placement) PrintPlacement(metadata);
  if (!trace_file.empty()) {
    auto events = WriteChromeTrace(trace_file, metadata.step_stats());
    if (!events.ok()) return fail(events.status());
    std::printf("trace: %s (%d node executions on %d devices)\n", trace_file.c_str(), *events,
                metadata.step_stats().dev_stats_size());
  }
  return 0;
}

}  // namespace sluice
