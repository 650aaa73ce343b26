#include "optimizer/meta_optimizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
      {"fold_batch_norms", "fold inference BatchNormalizations into the Convs, Gemms and MatMuls they follow",
       "arithmetic_optimization", FoldBatchNormsIntoConvs},
      {"fuse_conv_activations", "fuse Relu, LeakyRelu, Clip, HardSwish, HardSigmoid, Sigmoid and Swish into Convs",
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

absl::StatusOr<std::vector<OptimizerPassReport>> RunOptimizer(const RewriterConfig& config, GraphItem* item) {
  SL_RETURN_IF_ERROR(CheckRewriterConfig(config));
  std::vector<OptimizerPassReport> report;
  for (const OptimizerPass& p : OptimizerPasses()) {
    if (!PassEnabled(config, p)) continue;
    SL_ASSIGN_OR_RETURN(int rewrites, p.run(item), "optimizer pass ", p.name);
    report.push_back({p.name, rewrites, item->graph.node_size()});
  }
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
