// A C API program gets the master's optimizer like an ONNX import does: a GraphDef imported with
// TF_GraphImportGraphDef (TensorFlow's Conv2D, FusedBatchNormV3, Relu) runs with the
// normalization folded and the Relu fused (RunMetadata.partition_graphs shows it), computes what
// it computes unoptimized, and a ConfigProto given through TF_SetConfig turns the optimizer off.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "gtest/gtest.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

namespace sluice {
namespace {

void AddConst(GraphDef* g, const std::string& name, const std::vector<int64_t>& dims, float scale, float offset) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->mutable_tensor_shape()->add_dim()->set_size(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) t->add_float_val(offset + scale * std::sin(0.7f * i + name.size()));
}

NodeDef* AddOp(GraphDef* g, const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const auto& in : inputs) n->add_input(in);
  (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  return n;
}

// x [1, 6, 6, 3] -> Conv2D (3x3, SAME) -> FusedBatchNormV3 (inference) -> Relu.
GraphDef ConvBnRelu() {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  for (int64_t d : {1, 6, 6, 3}) (*x->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(d);
  AddConst(&g, "filter", {3, 3, 3, 4}, 1, 0);
  AddConst(&g, "scale", {4}, 0.5f, 1);
  AddConst(&g, "offset", {4}, 1, 0);
  AddConst(&g, "mean", {4}, 0.3f, 0);
  AddConst(&g, "variance", {4}, 0.2f, 1);
  NodeDef* conv = AddOp(&g, "conv", "Conv2D", {"x", "filter"});
  for (int64_t s : {1, 1, 1, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  (*conv->mutable_attr())["padding"].set_s("SAME");
  NodeDef* bn = AddOp(&g, "bn", "FusedBatchNormV3", {"conv", "scale", "offset", "mean", "variance"});
  (*bn->mutable_attr())["U"].set_type(DT_FLOAT);
  (*bn->mutable_attr())["is_training"].set_b(false);
  AddOp(&g, "relu", "Relu", {"bn"});
  return g;
}

struct Result {
  std::vector<float> values;
  int batch_norms = 0, fused_convs = 0;
};

// Imports the graph, runs relu(x) once with partition graphs asked for, and counts what ran.
Result RunConvBnRelu(const ConfigProto& config) {
  Result result;
  TF_Status* s = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  const std::string def = ConvBnRelu().SerializeAsString();
  TF_Buffer* buffer = TF_NewBufferFromString(def.data(), def.size());
  TF_ImportGraphDefOptions* import = TF_NewImportGraphDefOptions();
  TF_GraphImportGraphDef(graph, buffer, import, s);
  TF_DeleteImportGraphDefOptions(import);
  TF_DeleteBuffer(buffer);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  TF_SessionOptions* options = TF_NewSessionOptions();
  const std::string config_bytes = config.SerializeAsString();
  TF_SetConfig(options, config_bytes.data(), config_bytes.size(), s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  TF_Session* session = TF_NewSession(graph, options, s);
  TF_DeleteSessionOptions(options);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);

  std::vector<float> x(1 * 6 * 6 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.37f * i);
  const int64_t dims[] = {1, 6, 6, 3};
  TF_Tensor* input = TF_AllocateTensor(TF_FLOAT, dims, 4, x.size() * sizeof(float));
  std::copy(x.begin(), x.end(), static_cast<float*>(TF_TensorData(input)));
  TF_Output feed{TF_GraphOperationByName(graph, "x"), 0}, fetch{TF_GraphOperationByName(graph, "relu"), 0};
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  const std::string run_options_bytes = run_options.SerializeAsString();
  TF_Buffer* run_options_buffer = TF_NewBufferFromString(run_options_bytes.data(), run_options_bytes.size());
  TF_Buffer* metadata = TF_NewBuffer();
  TF_Tensor* output = nullptr;
  TF_SessionRun(session, run_options_buffer, &feed, &input, 1, &fetch, &output, 1, nullptr, 0, metadata, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  if (output != nullptr) {
    const float* p = static_cast<const float*>(TF_TensorData(output));
    result.values.assign(p, p + TF_TensorElementCount(output));
    TF_DeleteTensor(output);
  }
  RunMetadata parsed;
  EXPECT_TRUE(parsed.ParseFromArray(metadata->data, static_cast<int>(metadata->length)));
  for (const GraphDef& part : parsed.partition_graphs()) {
    for (const NodeDef& n : part.node()) {
      result.batch_norms += n.op() == "FusedBatchNormV3";
      result.fused_convs += n.op() == "Onnx>Conv" && n.attr().at("activation").s() == "Relu";
    }
  }
  TF_DeleteBuffer(metadata);
  TF_DeleteBuffer(run_options_buffer);
  TF_DeleteTensor(input);
  TF_CloseSession(session, s);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(s);
  return result;
}

TEST(CApiOptimizerTest, ImportedGraphDefRunsOptimizedUnlessTheConfigSaysOtherwise) {
  const Result optimized = RunConvBnRelu(ConfigProto());
  ConfigProto off;
  off.mutable_graph_options()->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  const Result plain = RunConvBnRelu(off);
  EXPECT_EQ(optimized.batch_norms, 0);
  EXPECT_EQ(optimized.fused_convs, 1);
  EXPECT_EQ(plain.batch_norms, 1);
  EXPECT_EQ(plain.fused_convs, 0);
  ASSERT_EQ(plain.values.size(), 1u * 6 * 6 * 4);
  ASSERT_EQ(optimized.values.size(), plain.values.size());
  int positive = 0;
  for (size_t i = 0; i < plain.values.size(); ++i) {
    EXPECT_NEAR(optimized.values[i], plain.values[i], 1e-4f * (1 + std::fabs(plain.values[i]))) << i;
    positive += plain.values[i] > 0;
  }
  EXPECT_GT(positive, 0);  // The Relu left something to compare.
}

}  // namespace
}  // namespace sluice
