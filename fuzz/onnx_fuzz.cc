#include "fuzz/onnx_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/graph.h"
#include "framework/status.h"
#include "framework/tensor.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"
#include "master/session.h"
#include "ops/op_registry.h"

namespace sluice {
namespace fuzz {
namespace {

// Fed tensors stay tiny: unknown dims become 1 and larger feeds are not run.
constexpr int64_t kMaxFeedElements = 4096;
// A step that takes longer is cancelled (DEADLINE_EXCEEDED); libFuzzer's -timeout is above it.
constexpr int64_t kStepTimeoutMs = 1000;

// Deterministic, small and varied: includes 0 and -1 so divisions and indices are exercised.
template <typename T>
void Fill(Tensor* t) {
  auto f = t->flat<T>();
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<T>(static_cast<int>(i % 5) - 1);
}

// A feed for a graph input, or an error when it cannot (or should not) be made.
absl::StatusOr<Tensor> FeedFor(const OnnxValue& value) {
  if (value.shape.unknown_rank()) return absl::InvalidArgumentError("unknown rank");
  std::vector<int64_t> dims;
  int64_t elements = 1;
  for (int64_t d : value.shape.dims()) {
    d = d < 0 ? 1 : d;
    if (d > kMaxFeedElements) return absl::InvalidArgumentError("big feed");
    elements *= d;
    if (elements > kMaxFeedElements) return absl::InvalidArgumentError("big feed");
    dims.push_back(d);
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(value.dtype, TensorShape(dims)));
  switch (value.dtype) {
    case DT_FLOAT: Fill<float>(&t); break;
    case DT_DOUBLE: Fill<double>(&t); break;
    case DT_INT8: Fill<int8_t>(&t); break;
    case DT_UINT8: Fill<uint8_t>(&t); break;
    case DT_INT16: Fill<int16_t>(&t); break;
    case DT_UINT16: Fill<uint16_t>(&t); break;
    case DT_INT32: Fill<int32_t>(&t); break;
    case DT_UINT32: Fill<uint32_t>(&t); break;
    case DT_INT64: Fill<int64_t>(&t); break;
    case DT_UINT64: Fill<uint64_t>(&t); break;
    case DT_BOOL: Fill<bool>(&t); break;
    case DT_STRING: break;  // Constructed empty.
    default: return absl::InvalidArgumentError("dtype not fed here");
  }
  return t;
}

void RunGraph(const OnnxGraph& g) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const OnnxValue& in : g.inputs) {
    if (in.has_default) continue;
    absl::StatusOr<Tensor> t = FeedFor(in);
    if (!t.ok()) return;
    feeds.emplace_back(in.tensor, *std::move(t));
  }
  std::vector<std::string> fetches;
  for (const OnnxValue& out : g.outputs) fetches.push_back(out.tensor);

  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(1);
  options.config.set_inter_op_parallelism_threads(1);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  if (!session.ok()) {
    std::fprintf(stderr, "onnx_fuzz: no embedded session: %s\n", session.status().ToString().c_str());
    std::abort();
  }
  if (!(*session)->Create(g.graph).ok()) return;
  RunOptions run_options;
  run_options.set_timeout_in_ms(kStepTimeoutMs);
  std::vector<Tensor> outputs;
  absl::Status s = (*session)->Run(run_options, feeds, fetches, {}, &outputs, nullptr);
  if (s.ok() && outputs.size() != fetches.size()) {
    std::fprintf(stderr, "onnx_fuzz: Run returned OK with %zu outputs for %zu fetches\n",
                 outputs.size(), fetches.size());
    std::abort();
  }
}

}  // namespace

void FuzzOnnxModel(const onnx::ModelProto& model, bool run) {
  absl::StatusOr<OnnxGraph> g = ImportOnnxModel(model);
  if (!g.ok()) {
    if (g.status().message().empty()) {
      std::fprintf(stderr, "onnx_fuzz: import failed with code %d and no message\n",
                   static_cast<int>(g.status().code()));
      std::abort();
    }
    return;
  }
  absl::StatusOr<std::unique_ptr<Graph>> graph = Graph::FromGraphDef(g->graph, *OpRegistry::Global());
  if (!graph.ok()) {
    std::fprintf(stderr, "onnx_fuzz: the importer returned a graph that does not validate: %s\n",
                 graph.status().ToString().c_str());
    std::abort();
  }
  if (run) RunGraph(*g);
}

void FuzzOnnxModelBytes(const uint8_t* data, size_t size, bool run) {
  if (size > kMaxOnnxInputBytes) return;
  // No base directory: external data is refused, as it must be for bytes from anywhere.
  absl::StatusOr<onnx::ModelProto> model =
      ParseOnnxModel(std::string(reinterpret_cast<const char*>(data), size), "");
  if (!model.ok()) return;
  FuzzOnnxModel(*model, run);
}

}  // namespace fuzz
}  // namespace sluice
