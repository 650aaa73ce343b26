#include "optimizer/meta_optimizer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/hoisted_constants.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "optimizer/passes.h"

namespace sluice {

const std::vector<OptimizerPass>& OptimizerPasses() {
  static const auto* passes = new std::vector<OptimizerPass>{
      {"constant_folding", "evaluate nodes of constant inputs (and Shape of static shapes) into Consts",
       "constant_folding", FoldConstants},
      {"remove_dead_nodes", "drop nodes no output, input or stateful node needs", "dependency_optimization",
       RemoveDeadNodes},
      {"fuse_layer_norm", "fuse LayerNorms spelled out as ReduceMean, Sub, Pow, Sqrt, Div, Mul and Add", "remapping",
       FuseLayerNorms},
      {"fuse_gelu", "fuse GELUs spelled out with Erf or Tanh into Gelu nodes", "remapping", FuseGelus},
      {"fuse_matmul_add", "fuse MatMuls of constant 2-D weights and the Adds of a constant bias into Gemms",
       "remapping", FuseMatMulAdds},
      {"fold_transpose_matmul", "fold a Transpose that swaps MatMul's right operand's last two axes into adj_y",
       "arithmetic_optimization", FoldTransposesIntoMatMuls},
      {"fold_pads", "fold zero-filled spatial Pads into the Convs and AveragePools that read them",
       "arithmetic_optimization", FoldPads},
      {"fold_batch_norms", "fold inference BatchNormalizations into the Convs, Gemms and MatMuls they follow, and per-channel "
       "constant Muls and Adds into the Convs they follow",
       "arithmetic_optimization", FoldBatchNormsIntoConvs},
      {"fuse_conv_activations", "turn Max/Min of one constant into Clip and HardSwishes spelled x * Clip(x + 3, 0, 6) / 6 into one node; "
       "fuse Relu, LeakyRelu, Clip, HardSwish, "
       "HardSigmoid, Sigmoid and Swish into Convs",
       "remapping", FuseConvActivations},
      {"fuse_channel_shuffle",
       "fuse Reshape [N,g,C/g,H,W], Transpose of axes 1 and 2 and Reshape back into one ChannelShuffle",
       "remapping", FuseChannelShuffles},
      {"reduce_mean_to_global_pool",
       "turn ReduceMeans over the spatial axes of 4-D tensors into GlobalAveragePools (and a Flatten)",
       "arithmetic_optimization", ReduceMeansToGlobalPools},
      {"nhwc_layout",
       "keep tensors between a CPU's Convs in NHWC through pools, Concats, Adds, Muls, element-wise functions "
       "and inference BatchNormalizations",
       "layout_optimizer", UseNhwcBetweenConvs},
      {"fuse_tf_conv",
       "fuse TensorFlow's Conv2D with the BiasAdd, FusedBatchNormV3 and Relu after it into one oneDNN convolution",
       "remapping", FuseTfConvolutions},
      {"fuse_tf_matmul_bias", "fuse TensorFlow's MatMul of constant weights and its BiasAdd into a Gemm", "remapping",
       FuseTfMatMulBiasAdds},
      {"fuse_conv_residual",
       "fuse an Add of a Conv's output and a tensor of its shape (a residual connection) into the Conv, and the "
       "activation after it",
       "remapping", FuseConvResiduals},
      {"inplace_variable_updates",
       "turn updates spelled W - lr * g and assigned back to W into in-place ApplyGradientDescent updates",
       "remapping", FuseVariableUpdates},
  };
  return *passes;
}

absl::Status CheckRewriterConfig(const RewriterConfig& config) {
  auto known = [](const std::string& name) {
    for (const OptimizerPass& p : OptimizerPasses()) {
      if (name == p.name) return true;
    }
    return false;
  };
  for (const auto* names : {&config.optimizers(), &config.disabled_passes()}) {
    for (const std::string& name : *names) {
      if (known(name)) continue;
      std::vector<std::string> all;
      for (const OptimizerPass& p : OptimizerPasses()) all.push_back(p.name);
      return absl::InvalidArgumentError(
          absl::StrCat("no optimizer pass '", name, "'; the passes are ", absl::StrJoin(all, ", ")));
    }
  }
  return absl::OkStatus();
}

bool PassEnabled(const RewriterConfig& config, const OptimizerPass& pass) {
  if (config.disable_meta_optimizer()) return false;
  const auto& disabled = config.disabled_passes();
  if (std::find(disabled.begin(), disabled.end(), pass.name) != disabled.end()) return false;
  if (config.optimizers_size() > 0) {
    return std::find(config.optimizers().begin(), config.optimizers().end(), pass.name) != config.optimizers().end();
  }
  const std::string toggle = pass.toggle;
  RewriterConfig::Toggle t = RewriterConfig::DEFAULT;
  if (toggle == "constant_folding") t = config.constant_folding();
  if (toggle == "arithmetic_optimization") t = config.arithmetic_optimization();
  if (toggle == "remapping") t = config.remapping();
  if (toggle == "layout_optimizer") t = config.layout_optimizer();
  if (toggle == "dependency_optimization") {
    if (config.disable_model_pruning()) return false;
    t = config.dependency_optimization();
  }
  return t != RewriterConfig::OFF;
}

namespace {

// A library function in Sluice's own form (worker/function_body.h): _Arg and _Retval nodes in
// node_def, tensors named "node:k", no `ret` map. TensorFlow's form is left as it came.
bool InSluiceForm(const FunctionDef& f) {
  if (f.ret_size() > 0) return false;
  for (const NodeDef& n : f.node_def()) {
    for (const std::string& in : n.input()) {
      if (std::count(in.begin(), in.end(), ':') >= 2) return false;
    }
  }
  return true;
}

// Passes that also run over function bodies (If and Loop branches, Scan bodies): everything but
// the layout pass, which decides layouts between a graph's outputs and its Convs and has no
// _Retval sinks, and the variable-update pass, whose updates live in the client graph.
bool RunsOnFunctionBodies(const OptimizerPass& p) {
  const std::string name = p.name;
  return name != "nhwc_layout" && name != "inplace_variable_updates";
}

// The inputs of a call node that become its functions' arguments, as (input index, _Arg
// index), and the attrs naming those functions: If's inputs after cond go to both branches in
// order; Loop's captured values follow the iteration, cond and loop-carried arguments.
struct CallArgs {
  std::vector<std::string> func_attrs;
  std::vector<std::pair<int, int>> args;
};

std::optional<CallArgs> ArgsOfCall(const NodeDef& n) {
  auto list_size = [&](const char* name) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? -1 : it->second.list().type_size();
  };
  CallArgs call;
  if (n.op() == "Onnx>If" || n.op() == "If" || n.op() == "StatelessIf") {
    call.func_attrs = {"then_branch", "else_branch"};
    for (int i = 1; i < n.input_size(); ++i) call.args.push_back({i, i - 1});
  } else if (n.op() == "Onnx>Loop") {
    const int tm = list_size("Tm"), tc = list_size("Tc"), tloop = list_size("Tloop"), tcap = list_size("Tcap");
    if (tm < 0 || tc < 0 || tloop < 0 || tcap < 0) return std::nullopt;
    call.func_attrs = {"body"};
    for (int k = 0; k < tcap; ++k) call.args.push_back({tm + tc + tloop + k, 2 + tloop + k});
  } else {
    return std::nullopt;
  }
  for (const auto& [input, arg] : call.args) {
    if (input >= n.input_size() || absl::StartsWith(n.input(input), "^")) return std::nullopt;
  }
  for (const std::string& a : call.func_attrs) {
    auto it = n.attr().find(a);
    if (it == n.attr().end() || !it->second.has_func()) return std::nullopt;
  }
  return call;
}

// Constants pushed into one specialized function at most (their values are copied into it).
constexpr int64_t kMaxSpecializedBytes = int64_t{64} << 20;

// Function specialization, as Grappler's function optimizer does it: a call whose argument is
// a Const of the calling graph (an If branch's weights, defined in the graph around it) gets a
// copy of each function it calls in which that _Arg is the Const itself, so folding inside the
// copy can work on the value. The call still passes the argument; the copy does not read it.
// New functions go to the end of `library`; returns the names of the functions replaced.
std::vector<std::string> SpecializeCalls(google::protobuf::RepeatedPtrField<NodeDef>* nodes,
                                         FunctionDefLibrary* library,
                                         absl::flat_hash_map<std::string, FunctionDef>* pristine) {
  absl::flat_hash_map<std::string, const NodeDef*> consts;
  for (const NodeDef& n : *nodes) {
    if (n.op() == "Const" && !IsHoisted(n) && n.attr().contains("value") && n.attr().contains("dtype")) {
      consts[n.name()] = &n;
    }
  }
  std::vector<std::string> replaced;
  for (NodeDef& n : *nodes) {
    std::optional<CallArgs> call = ArgsOfCall(n);
    if (!call) continue;
    absl::flat_hash_map<int, const NodeDef*> by_arg;
    int64_t bytes = 0;
    for (const auto& [input, arg] : call->args) {
      auto id = ParseTensorName(n.input(input));
      if (!id.ok() || id->index != 0) continue;
      auto it = consts.find(id->node);
      if (it == consts.end()) continue;
      bytes += it->second->attr().at("value").tensor().ByteSizeLong();
      by_arg[arg] = it->second;
    }
    if (by_arg.empty() || bytes > kMaxSpecializedBytes) continue;
    absl::flat_hash_map<std::string, std::string> made;  // This call's copies, by function.
    for (const std::string& attr : call->func_attrs) {
      const std::string name = n.attr().at(attr).func().name();
      if (auto it = made.find(name); it != made.end()) {  // Both branches the same function.
        (*n.mutable_attr())[attr].mutable_func()->set_name(it->second);
        continue;
      }
      // Copies are made from the function as it was before any pass ran over it (a body is
      // optimized once: folding twice into a Conv that took a residual would scale the residual).
      auto source = pristine->find(name);
      if (source == pristine->end()) continue;  // TensorFlow's form, or not in the library.
      FunctionDef copy = source->second;
      int pushed = 0;
      for (NodeDef& node : *copy.mutable_node_def()) {
        if (node.op() != "_Arg" || !node.attr().contains("index") || !node.attr().contains("T")) continue;
        const int64_t index = node.attr().at("index").i();  // Any int64 in a hostile graph.
        if (index < 0 || index > std::numeric_limits<int>::max()) continue;
        auto it = by_arg.find(static_cast<int>(index));
        if (it == by_arg.end() || it->second->attr().at("dtype").type() != node.attr().at("T").type()) continue;
        node.set_op("Const");
        node.clear_input();
        node.mutable_attr()->clear();
        (*node.mutable_attr())["dtype"] = it->second->attr().at("dtype");
        (*node.mutable_attr())["value"] = it->second->attr().at("value");
        ++pushed;
      }
      if (pushed == 0) continue;
      // A name no other function has: the same call node may sit in several copies of a body.
      std::string specialized = absl::StrCat(name, "/specialized_for/", n.name());
      for (int k = 2; pristine->contains(specialized); ++k) {
        specialized = absl::StrCat(name, "/specialized_for/", n.name(), "/", k);
      }
      copy.mutable_signature()->set_name(specialized);
      pristine->emplace(specialized, copy);
      *library->add_function() = std::move(copy);
      (*n.mutable_attr())[attr].mutable_func()->set_name(specialized);
      made[name] = specialized;
      replaced.push_back(name);
    }
  }
  return replaced;
}

// The library functions the graph's nodes call, directly or through other functions (named in
// a func attr, a list of them, or as an op: TensorFlow calls a library function by its name).
absl::flat_hash_set<std::string> ReachableFunctions(const GraphDef& graph) {
  absl::flat_hash_map<std::string, const FunctionDef*> by_name;
  for (const FunctionDef& f : graph.library().function()) by_name[f.signature().name()] = &f;
  absl::flat_hash_set<std::string> reached;
  std::vector<const FunctionDef*> todo;
  auto visit = [&](const std::string& name) {
    auto it = by_name.find(name);
    if (it != by_name.end() && reached.insert(name).second) todo.push_back(it->second);
  };
  auto calls = [&](const NodeDef& n) {
    visit(n.op());
    for (const auto& [key, value] : n.attr()) {
      if (value.has_func()) visit(value.func().name());
      for (const auto& f : value.list().func()) visit(f.name());
    }
  };
  for (const NodeDef& n : graph.node()) calls(n);
  while (!todo.empty()) {
    const FunctionDef* f = todo.back();
    todo.pop_back();
    for (const NodeDef& n : f->node_def()) calls(n);
  }
  return reached;
}

// Optimizes each function of the graph's library in Sluice's form as a graph of its own: its
// _Arg outputs are the fed tensors, its _Retvals the nodes to keep. Calls with constant
// arguments are specialized first (SpecializeCalls), from the client graph down through the
// bodies, so a branch's weights defined around it (Silero VAD's LSTM weights are Consts of the
// If branch that holds the If around the LSTM) are folded with it: per-run work on them
// (Slices of one weight blob, Concats, Casts) becomes constants, which kernels that prepare
// weights once per buffer (oneDNN's LSTM and convolutions) then see unchanged from run to run.
absl::Status OptimizeFunctionBodies(const RewriterConfig& config, GraphItem* item,
                                    std::vector<OptimizerPassReport>* report) {
  FunctionDefLibrary* library = item->graph.mutable_library();
  if (library->function_size() == 0) return absl::OkStatus();
  const bool fold = std::any_of(OptimizerPasses().begin(), OptimizerPasses().end(), [&](const OptimizerPass& p) {
    return std::string(p.name) == "constant_folding" && PassEnabled(config, p);
  });
  absl::flat_hash_map<std::string, FunctionDef> pristine;
  for (const FunctionDef& f : library->function()) {
    if (InSluiceForm(f)) pristine.emplace(f.signature().name(), f);
  }
  const absl::flat_hash_set<std::string> reachable_before = ReachableFunctions(item->graph);
  std::vector<std::string> replaced;
  if (fold) replaced = SpecializeCalls(item->graph.mutable_node(), library, &pristine);
  for (int i = 0; i < library->function_size(); ++i) {
    FunctionDef* f = library->mutable_function(i);
    if (!InSluiceForm(*f)) continue;
    // A function whose callers all call specialized copies now is left alone (and dropped below).
    if (!replaced.empty() && !ReachableFunctions(item->graph).contains(f->signature().name())) continue;
    GraphItem body;
    for (NodeDef& n : *f->mutable_node_def()) {
      if (n.op() == "_Arg") body.inputs.push_back(absl::StrCat(n.name(), ":0"));
      if (n.op() == "_Retval") body.keep_nodes.push_back(n.name());
      *body.graph.add_node() = std::move(n);
    }
    body.evaluate = item->evaluate;
    SortTopologically(&body.graph);
    InferItemShapes(&body);
    const std::string name = f->signature().name();
    for (const OptimizerPass& p : OptimizerPasses()) {
      if (!PassEnabled(config, p) || !RunsOnFunctionBodies(p)) continue;
      SL_ASSIGN_OR_RETURN(int rewrites, p.run(&body), "optimizer pass ", p.name, " in function '", name, "'");
      for (OptimizerPassReport& r : *report) {
        if (r.pass == p.name) r.rewrites += rewrites;
      }
    }
    if (fold) {
      std::vector<std::string> more = SpecializeCalls(body.graph.mutable_node(), library, &pristine);
      replaced.insert(replaced.end(), more.begin(), more.end());
    }
    f = library->mutable_function(i);  // The library may have grown.
    f->clear_node_def();
    for (NodeDef& n : *body.graph.mutable_node()) *f->add_node_def() = std::move(n);
  }
  // Functions the graph called before and no longer does (every caller of theirs calls a
  // specialized copy now, or was itself such a function) leave the library.
  if (replaced.empty()) return absl::OkStatus();
  const absl::flat_hash_set<std::string> reachable = ReachableFunctions(item->graph);
  absl::flat_hash_set<std::string> gone;
  for (const std::string& name : reachable_before) {
    if (!reachable.contains(name)) gone.insert(name);
  }
  if (!gone.empty()) {
    auto* functions = library->mutable_function();
    functions->erase(std::remove_if(functions->begin(), functions->end(),
                                    [&](const FunctionDef& f) { return gone.contains(f.signature().name()); }),
                     functions->end());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<OptimizerPassReport>> RunOptimizer(const RewriterConfig& config, GraphItem* item) {
  SL_RETURN_IF_ERROR(CheckRewriterConfig(config));
  std::vector<OptimizerPassReport> report;
  for (const OptimizerPass& p : OptimizerPasses()) {
    if (!PassEnabled(config, p)) continue;
    SL_ASSIGN_OR_RETURN(int rewrites, p.run(item), "optimizer pass ", p.name);
    report.push_back({p.name, rewrites, item->graph.node_size()});
  }
  SL_RETURN_IF_ERROR(OptimizeFunctionBodies(config, item, &report));
  return report;
}

absl::StatusOr<std::vector<OptimizerPassReport>> OptimizeGraphDef(
    const RewriterConfig& config, const std::vector<std::string>& inputs,
    const absl::flat_hash_map<std::string, PartialShape>& feed_shapes, const std::vector<std::string>& outputs,
    GraphDef* graph) {
  if (config.disable_meta_optimizer()) return std::vector<OptimizerPassReport>{};
  GraphItem item;
  item.graph = std::move(*graph);
  item.inputs = inputs;
  item.feed_shapes = feed_shapes;
  item.outputs = outputs;
  InferItemShapes(&item);
  auto report = RunOptimizer(config, &item);
  *graph = std::move(item.graph);
  return report;
}

}  // namespace sluice
