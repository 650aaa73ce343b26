// A small CNN written twice: with TensorFlow's ops (NHWC Conv2D, BiasAdd, FusedBatchNormV3,
// Relu, MaxPool, MatMul + BiasAdd), as a TensorFlow C API or Go program would build it, and as
// its ONNX twin (Conv, BatchNormalization, Relu, MaxPool, Gemm), imported by the frontend. Both
// run in the same binary through the same master, which optimizes each; their times should
// match (the issue "One optimizer for every graph" asks for 5%). Same layers and sizes; the
// values differ (random weights of each layout).
//
//   bazel run -c opt //bench:tf_twin_bench -- --benchmark_repetitions=5
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/mutex_settings.h"
#include "frontend/onnx/importer.h"
#include "master/session.h"

namespace sluice {
namespace {

constexpr int64_t kSize = 56, kIn = 32, kBlocks = 4, kOut = 64, kClasses = 10;

float Value(int64_t i) { return std::sin(0.37f * static_cast<float>(i)) * 0.2f; }

Tensor Filled(std::vector<int64_t> dims, float offset = 0) {
  Tensor t(DT_FLOAT, TensorShape(absl::MakeConstSpan(dims)));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = offset + Value(i);
  return t;
}

// ---- TensorFlow's spelling.

struct TfBuilder {
  GraphDef g;
  NodeDef* Op(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const auto& in : inputs) n->add_input(in);
    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
    return n;
  }
  std::string Const(const std::string& name, const Tensor& value) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op("Const");
    (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
    value.AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
    return name;
  }
  void Ints(NodeDef* n, const char* attr, std::vector<int64_t> v) {
    for (int64_t x : v) (*n->mutable_attr())[attr].mutable_list()->add_i(x);
  }
  std::string ConvBlock(const std::string& name, const std::string& x, int64_t in, int64_t out, bool bn) {
    NodeDef* conv = Op(name + "/conv", "Conv2D", {x, Const(name + "/w", Filled({3, 3, in, out}))});
    Ints(conv, "strides", {1, 1, 1, 1});
    (*conv->mutable_attr())["padding"].set_s("SAME");
    std::string y = Op(name + "/bias", "BiasAdd", {name + "/conv", Const(name + "/b", Filled({out}))})->name();
    if (bn) {
      NodeDef* n = Op(name + "/bn", "FusedBatchNormV3",
                      {y, Const(name + "/scale", Filled({out}, 1)), Const(name + "/offset", Filled({out})),
                       Const(name + "/mean", Filled({out})), Const(name + "/var", Filled({out}, 1))});
      (*n->mutable_attr())["U"].set_type(DT_FLOAT);
      (*n->mutable_attr())["is_training"].set_b(false);
      y = n->name();
    }
    return Op(name + "/relu", "Relu", {y})->name();
  }
};

GraphDef TfCnn() {
  TfBuilder b;
  NodeDef* x = b.g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  for (int64_t d : {int64_t{1}, kSize, kSize, kIn}) (*x->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(d);
  std::string y = "x";
  for (int i = 0; i < kBlocks; ++i) y = b.ConvBlock("block" + std::to_string(i), y, kIn, kIn, true);
  NodeDef* pool = b.Op("pool", "MaxPool", {y});
  b.Ints(pool, "ksize", {1, 2, 2, 1});
  b.Ints(pool, "strides", {1, 2, 2, 1});
  (*pool->mutable_attr())["padding"].set_s("VALID");
  y = b.ConvBlock("last", "pool", kIn, kOut, false);
  Tensor shape = Tensor::FromVector<int32_t>({1, -1}, TensorShape({2}));
  NodeDef* s = b.g.add_node();
  s->set_name("flat_shape");
  s->set_op("Const");
  (*s->mutable_attr())["dtype"].set_type(DT_INT32);
  shape.AsProtoTensorContent((*s->mutable_attr())["value"].mutable_tensor());
  NodeDef* flat = b.Op("flat", "Reshape", {y, "flat_shape"});
  (*flat->mutable_attr())["Tshape"].set_type(DT_INT32);
  const int64_t features = kOut * (kSize / 2) * (kSize / 2);
  b.Op("mm", "MatMul", {"flat", b.Const("fc/w", Filled({features, kClasses}))});
  b.Op("logits", "BiasAdd", {"mm", b.Const("fc/b", Filled({kClasses}))});
  return b.g;
}

// ---- The ONNX twin.

struct OnnxBuilder {
  onnx::GraphProto* g;
  void Init(const std::string& name, const Tensor& t) {
    onnx::TensorProto* p = g->add_initializer();
    p->set_name(name);
    p->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.shape().dim_sizes()) p->add_dims(d);
    for (int64_t i = 0; i < t.NumElements(); ++i) p->add_float_data(t.flat<float>()[i]);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  }
  void Ints(onnx::NodeProto* n, const char* name, std::vector<int64_t> v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  std::string ConvBlock(const std::string& name, const std::string& x, int64_t in, int64_t out, bool bn) {
    Init(name + "/w", Filled({out, in, 3, 3}));
    Init(name + "/b", Filled({out}));
    Ints(Node("Conv", {x, name + "/w", name + "/b"}, name + "/conv"), "pads", {1, 1, 1, 1});
    std::string y = name + "/conv";
    if (bn) {
      Init(name + "/scale", Filled({out}, 1));
      Init(name + "/offset", Filled({out}));
      Init(name + "/mean", Filled({out}));
      Init(name + "/var", Filled({out}, 1));
      Node("BatchNormalization", {y, name + "/scale", name + "/offset", name + "/mean", name + "/var"}, name + "/bn");
      y = name + "/bn";
    }
    Node("Relu", {y}, name + "/relu");
    return name + "/relu";
  }
};

onnx::ModelProto OnnxCnn() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  OnnxBuilder b{m.mutable_graph()};
  b.g->set_name("twin");
  auto typed = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  typed(b.g->add_input(), "x", {1, kIn, kSize, kSize});
  std::string y = "x";
  for (int i = 0; i < kBlocks; ++i) y = b.ConvBlock("block" + std::to_string(i), y, kIn, kIn, true);
  onnx::NodeProto* pool = b.Node("MaxPool", {y}, "pool");
  b.Ints(pool, "kernel_shape", {2, 2});
  b.Ints(pool, "strides", {2, 2});
  y = b.ConvBlock("last", "pool", kIn, kOut, false);
  b.Node("Flatten", {y}, "flat");
  const int64_t features = kOut * (kSize / 2) * (kSize / 2);
  b.Init("fc/w", Filled({features, kClasses}));
  b.Init("fc/b", Filled({kClasses}));
  b.Node("Gemm", {"flat", "fc/w", "fc/b"}, "logits");
  typed(b.g->add_output(), "logits", {1, kClasses});
  return m;
}

void RunEachIteration(benchmark::State& state, const GraphDef& graph, const std::string& feed, const Tensor& x,
                      const std::string& fetch) {
  ConfigureMutexDeadlockDetection();
  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(static_cast<int>(state.range(0)));
  auto session = NewSession(options);
  if (!session.ok() || !(*session)->Create(graph).ok()) {
    state.SkipWithError("no session");
    return;
  }
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) (*session)->Run({{feed, x}}, {fetch}, {}, &out).IgnoreError();  // Warm up.
  for (auto _ : state) {
    if (!(*session)->Run({{feed, x}}, {fetch}, {}, &out).ok()) state.SkipWithError("run failed");
  }
}

void BM_TensorFlowSpelled(benchmark::State& state) {
  static const GraphDef* graph = new GraphDef(TfCnn());
  RunEachIteration(state, *graph, "x", Filled({1, kSize, kSize, kIn}), "logits");
}

void BM_OnnxTwin(benchmark::State& state) {
  static const OnnxGraph* graph = [] {
    auto g = ImportOnnxModel(OnnxCnn());
    return g.ok() ? new OnnxGraph(*std::move(g)) : nullptr;
  }();
  if (graph == nullptr) {
    state.SkipWithError("the ONNX twin did not import");
    return;
  }
  RunEachIteration(state, graph->graph, graph->inputs[0].tensor, Filled({1, kIn, kSize, kSize}),
                   graph->outputs[0].tensor);
}

BENCHMARK(BM_TensorFlowSpelled)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OnnxTwin)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// With SLUICE_TWIN_DUMP=DIR, both graphs are also written there (tf_cnn.pb, onnx_cnn.onnx), so
// `sluice bench --profile` can time them op by op.
const bool dumped = [] {
  const char* dir = std::getenv("SLUICE_TWIN_DUMP");
  if (dir == nullptr) return false;
  std::ofstream(std::string(dir) + "/tf_cnn.pb", std::ios::binary) << TfCnn().SerializeAsString();
  std::ofstream(std::string(dir) + "/onnx_cnn.onnx", std::ios::binary) << OnnxCnn().SerializeAsString();
  return true;
}();

}  // namespace
}  // namespace sluice
