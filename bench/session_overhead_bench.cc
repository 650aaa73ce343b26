// Per-run overhead of a session on a tiny graph (z = x + y on scalars), against peers measured
// in the same run: the Add kernel called directly, and one executor run without a master.
// The ratios session/kernel and session/executor are what to watch. BM_SessionRunSmallRecurrent
// is a model of the size of the npm VAD models (an LSTM step, an If, 240 small element-wise
// nodes on [1,1,64], about 0.05 ms): compare it with ONNX Runtime on the same model
// (`SLUICE_BENCH_WRITE_SMALL=FILE` writes it as ONNX for bench/ort_bench.js). Every case runs as a
// worker process does, with absl::Mutex's lock-order graph off (framework/mutex_settings.h).
//
//   bazel run -c opt //bench:session_overhead_bench
#include <cstdlib>
#include <fstream>
#include <random>

#include "benchmark/benchmark.h"
#include "frontend/onnx/importer.h"
#include "framework/mutex_settings.h"
#include "framework/node_attr.h"
#include "google/protobuf/text_format.h"
#include "kernels/kernel_registry.h"
#include "master/session.h"
#include "ops/op_registry.h"
#include "worker/executor.h"
#include "worker/local_rendezvous.h"

namespace sluice {
namespace {

constexpr char kTiny[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
  node { name: "z" op: "Add" input: "x" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
)";

GraphDef Tiny(bool two_devices) {
  GraphDef def;
  google::protobuf::TextFormat::ParseFromString(kTiny, &def);
  if (two_devices) def.mutable_node(2)->set_device("/device:CPU:1");
  return def;
}

void BM_DirectKernelAdd(benchmark::State& state) {
  ConfigureMutexDeadlockDetection();
  ThreadPool pool("bench", 1);
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  Device device(attrs, &pool);
  NodeDef node = Tiny(false).node(2);
  const OpDef& op = (*OpRegistry::Global()->LookUp("Add"))->op_def;
  auto kernel = *KernelRegistry::Global()->CreateOpKernel(&device, node, op);
  std::vector<Tensor> inputs = {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)};
  for (auto _ : state) {
    OpKernelContext::Params params;
    params.device = &device;
    params.kernel = kernel.get();
    params.inputs = inputs;
    OpKernelContext ctx(params);
    benchmark::DoNotOptimize(kernel->Compute(&ctx));
  }
}
BENCHMARK(BM_DirectKernelAdd);

void BM_ExecutorRun(benchmark::State& state) {
  ConfigureMutexDeadlockDetection();
  ThreadPool pool("bench", 1);
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  Device device(attrs, &pool);
  GraphDef def = Tiny(false);
  def.mutable_node(0)->set_op("Const");  // No feeds: the executor alone.
  (*def.mutable_node(0)->mutable_attr())["value"] = def.node(1).attr().at("value");
  def.mutable_node(0)->mutable_attr()->erase("shape");
  auto exec = *Executor::Create(def, &device);
  for (auto _ : state) {
    LocalRendezvous r;
    Executor::Args args;
    args.rendezvous = &r;
    args.runner = &pool;
    benchmark::DoNotOptimize(exec->Run(args));
  }
}
BENCHMARK(BM_ExecutorRun);

void BM_SessionRun(benchmark::State& state) {
  ConfigureMutexDeadlockDetection();
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = state.range(0);
  options.config.set_inter_op_parallelism_threads(2);
  options.config.set_intra_op_parallelism_threads(1);
  auto session = std::move(*NewSession(options));
  if (!session->Create(Tiny(state.range(0) == 2)).ok()) state.SkipWithError("create failed");
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Tensor::Scalar<float>(1)}};
  std::vector<Tensor> out;
  if (!session->Run(feeds, {"z"}, {}, &out).ok()) state.SkipWithError("run failed");
  for (auto _ : state) {
    benchmark::DoNotOptimize(session->Run(feeds, {"z"}, {}, &out));
  }
  state.SetLabel(state.range(0) == 2 ? "two devices, one _Send/_Recv" : "one device");
}
BENCHMARK(BM_SessionRun)->Arg(1)->Arg(2);

// An ONNX model shaped like the small recurrent models of npm packages: LSTM (hidden 64, one
// step) -> 120 x (Add a constant, Tanh) -> If(cond) with 15 Relus or 15 Sigmoids per branch.
onnx::ModelProto SmallRecurrentModel() {
  constexpr int kHidden = 64;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("small_recurrent");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name, int elem, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  auto init = [&](const std::string& name, std::vector<int64_t> dims, float scale) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(scale * normal(rng));
    return name;
  };
  auto node = [](onnx::GraphProto* graph, const std::string& op, std::vector<std::string> in,
                 std::vector<std::string> out) {
    onnx::NodeProto* n = graph->add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  };
  for (const char* name : {"x", "h0", "c0"}) value(g->add_input(), name, onnx::TensorProto::FLOAT, {1, 1, kHidden});
  value(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  onnx::NodeProto* lstm = node(g, "LSTM",
                               {"x", init("W", {1, 4 * kHidden, kHidden}, 1), init("R", {1, 4 * kHidden, kHidden}, 1),
                                init("B", {1, 8 * kHidden}, 0), "", "h0", "c0"},
                               {"Y", "hN", "cN"});
  onnx::AttributeProto* hidden = lstm->add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(kHidden);
  std::string cur = "hN";
  for (int i = 0; i < 120; ++i) {
    node(g, "Add", {cur, init("k" + std::to_string(i), {1, 1, kHidden}, 0.1f)}, {"a" + std::to_string(i)});
    node(g, "Tanh", {"a" + std::to_string(i)}, {"t" + std::to_string(i)});
    cur = "t" + std::to_string(i);
  }
  onnx::NodeProto* branch = node(g, "If", {"cond"}, {"out"});
  for (const auto& [attr, op] : std::vector<std::pair<std::string, std::string>>{{"then_branch", "Relu"},
                                                                                 {"else_branch", "Sigmoid"}}) {
    onnx::AttributeProto* a = branch->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = a->mutable_g();
    body->set_name(attr);
    std::string in = cur;
    for (int i = 0; i < 15; ++i) {
      const std::string out = attr + std::to_string(i);
      node(body, op, {in}, {out});
      in = out;
    }
    value(body->add_output(), in, onnx::TensorProto::FLOAT, {1, 1, kHidden});
  }
  value(g->add_output(), "out", onnx::TensorProto::FLOAT, {1, 1, kHidden});
  value(g->add_output(), "cN", onnx::TensorProto::FLOAT, {1, 1, kHidden});
  return model;
}

void BM_SessionRunSmallRecurrent(benchmark::State& state) {
  ConfigureMutexDeadlockDetection();
  const onnx::ModelProto model = SmallRecurrentModel();
  if (const char* path = std::getenv("SLUICE_BENCH_WRITE_SMALL")) {
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  }
  auto g = ImportOnnxModel(model);
  if (!g.ok()) {
    state.SkipWithError(std::string(g.status().message()).c_str());
    return;
  }
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(1);
  options.config.set_intra_op_parallelism_threads(1);
  auto session = std::move(*NewSession(options));
  if (!session->Create(g->graph).ok()) state.SkipWithError("create failed");
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& in : g->inputs) {
    feeds.emplace_back(in.tensor, in.dtype == DT_BOOL ? Tensor::Scalar<bool>(true)
                                                      : Tensor::FromVector<float>(std::vector<float>(64, 0.5f),
                                                                                  TensorShape({1, 1, 64})));
  }
  std::vector<std::string> fetches;
  for (const auto& out : g->outputs) fetches.push_back(out.tensor);
  std::vector<Tensor> out;
  if (!session->Run(feeds, fetches, {}, &out).ok()) state.SkipWithError("run failed");
  for (auto _ : state) {
    benchmark::DoNotOptimize(session->Run(feeds, fetches, {}, &out));
  }
  state.SetLabel("LSTM, If, 240 element-wise nodes on [1,1,64]");
}
BENCHMARK(BM_SessionRunSmallRecurrent);

}  // namespace
}  // namespace sluice
