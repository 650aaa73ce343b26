// Per-run overhead of a session on a tiny graph (z = x + y on scalars), against peers measured
// in the same run: the Add kernel called directly, and one executor run without a master.
// The ratios session/kernel and session/executor are what to watch. Every case runs as a
// worker process does, with absl::Mutex's lock-order graph off (framework/mutex_settings.h).
//
//   bazel run -c opt //bench:session_overhead_bench
#include "benchmark/benchmark.h"
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

}  // namespace
}  // namespace sluice
