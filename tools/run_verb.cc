// `sluice run`: run a GraphDef with inputs and outputs as ONNX TensorProto files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/onnx_tensor.h"
#include "master/session.h"
#include "tools/cli.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice run GRAPH.pb|GRAPH.pbtxt [options]

Runs a GraphDef in an embedded session and writes each fetched tensor as an ONNX
TensorProto file output_<i>.pb (its name field is the tensor name).

options:
  --input NAME=FILE.pb   feed tensor NAME ("x" or "x:0") from an ONNX TensorProto file;
                         repeatable. "--input FILE.pb" feeds the tensor named inside the file.
  --output NAME          fetch NAME; repeatable. Default: every output of every node
                         that no other node consumes.
  --output-dir DIR       where output_<i>.pb files go (default: print only)
  --devices N            number of CPU devices in the embedded worker (default 1)
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
          double d = static_cast<double>(static_cast<float>(v));
          if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) d = static_cast<double>(v);
          lo = std::min(lo, d);
          hi = std::max(hi, d);
          sum += d;
        }
      }
    });
    absl::StrAppend(&s, " min=", lo, " max=", hi, " mean=", sum / t.NumElements());
  }
  std::string values = t.DebugString(6);  // "Tensor<float [3,2]: 5.5 0 ...>"
  absl::StrAppend(&s, " values:", values.substr(values.find(':') + 1, values.size() - values.find(':') - 2));
  return s;
}

}  // namespace

int RunVerb(Args& args) {
  if (args.Has("--help")) {
    std::printf("%s", kHelp);
    return 0;
  }
  std::vector<std::string> inputs = args.TakeAll("--input");
  std::vector<std::string> outputs = args.TakeAll("--output");
  std::string output_dir = args.Take("--output-dir");
  std::string devices = args.Take("--devices", "1");
  auto positional = args.Positional(1);
  if (!positional.ok() || positional->size() != 1) {
    std::fprintf(stderr, "sluice run: %s\n%s",
                 positional.ok() ? "expected one GRAPH file" : std::string(positional.status().message()).c_str(),
                 kHelp);
    return 2;
  }
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "sluice run: %s\n", StatusToString(s).c_str());
    return 1;
  };
  auto graph = ReadGraphDef((*positional)[0]);
  if (!graph.ok()) return fail(graph.status());

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& spec : inputs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::string file = kv.size() == 2 ? kv[1] : kv[0];
    std::string name_in_file;
    auto t = ReadOnnxTensorFile(file, &name_in_file);
    if (!t.ok()) return fail(t.status());
    std::string name = kv.size() == 2 ? kv[0] : name_in_file;
    if (name.empty()) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "'", file, "' has no tensor name; use --input NAME=", file)));
    }
    feeds.emplace_back(name, *std::move(t));
  }
  if (outputs.empty()) {
    // Default fetches: outputs nobody consumes.
    std::set<std::string> consumed;
    for (const NodeDef& n : graph->node()) {
      for (const std::string& in : n.input()) {
        auto id = ParseTensorName(in);
        if (id.ok() && id->index != kControlSlot) consumed.insert(absl::StrCat(id->node, ":", id->index));
      }
    }
    for (const NodeDef& n : graph->node()) {
      std::string first = absl::StrCat(n.name(), ":0");
      if (n.op() == "NoOp" || n.op() == "Placeholder" || consumed.count(first)) continue;
      outputs.push_back(first);
    }
  }
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = std::max(1, std::atoi(devices.c_str()));
  auto session = NewSession(options);
  if (!session.ok()) return fail(session.status());
  absl::Status s = (*session)->Create(*graph);
  if (!s.ok()) return fail(s);
  std::vector<Tensor> results;
  s = (*session)->Run(feeds, outputs, {}, &results);
  if (!s.ok()) return fail(s);
  if (!output_dir.empty()) std::filesystem::create_directories(output_dir);
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\n", Summary(outputs[i], results[i]).c_str());
    if (!output_dir.empty()) {
      std::string path = absl::StrCat(output_dir, "/output_", i, ".pb");
      s = WriteOnnxTensorFile(path, results[i], outputs[i]);
      if (!s.ok()) return fail(s);
    }
  }
  return 0;
}

}  // namespace sluice
