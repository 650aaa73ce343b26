// The optimizer (optimizer/): the pipeline and its report, constant folding, dead nodes, MatMul
// and transformer fusions, TensorFlow's spelling, and the master optimizing every graph.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/node_evaluator.h"
#include "tests/optimizer_test_util.h"

namespace sluice {
namespace {

using namespace optimizer_test;  // NOLINT: the helpers these tests share.

// The pipeline on tests/testdata/onnx/conv_bn_relu.onnx: Conv -> BatchNormalization -> Relu
// plus a Neg that nothing reads. Each pass reports its rewrites, a pass can be turned off by
// name, and the optimized graph computes what the imported one does.
TEST(OptimizerPipelineTest, ReportsEachPassAndKeepsResults) {
  const std::string path = "tests/testdata/onnx/conv_bn_relu.onnx";
  SL_ASSERT_OK_AND_ASSIGN(OnnxGraph imported, ImportOnnxFile(path));
  EXPECT_EQ(Count(imported, "Onnx>BatchNormalization"), 1);
  EXPECT_EQ(Count(imported, "Neg"), 1);

  SL_ASSERT_OK_AND_ASSIGN(OptGraph optimized, ImportFileOptimized(path));
  std::vector<std::string> passes;
  for (const OptimizerPass& p : OptimizerPasses()) passes.push_back(p.name);
  ASSERT_EQ(optimized.optimizations.size(), passes.size());
  std::map<std::string, int> rewrites;
  for (size_t i = 0; i < passes.size(); ++i) {
    EXPECT_EQ(optimized.optimizations[i].pass, passes[i]);
    rewrites[passes[i]] = optimized.optimizations[i].rewrites;
  }
  EXPECT_EQ(rewrites["remove_dead_nodes"], 1);  // The Neg.
  EXPECT_EQ(rewrites["fold_batch_norms"], 1);
  EXPECT_EQ(rewrites["fuse_conv_activations"], 1);
  EXPECT_EQ(optimized.optimizations.back().nodes_after, optimized.graph.node_size());
  EXPECT_EQ(Count(optimized, "Onnx>BatchNormalization"), 0);
  EXPECT_EQ(Count(optimized, "Neg"), 0);
  EXPECT_EQ(FusedActivation(optimized), "Relu");

  // The same results both ways (x [1, 2, 4, 4]).
  auto run = [](const OnnxGraph& g) {
    auto session = NewSession(Plain());
    EXPECT_OK(session);
    EXPECT_OK((*session)->Create(g.graph));
    Tensor x(DT_FLOAT, TensorShape({1, 2, 4, 4}));
    for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::cos(0.9f * i) * 2;
    std::vector<Tensor> out;
    EXPECT_OK((*session)->Run({{g.inputs[0].tensor, x}}, {g.outputs[0].tensor}, {}, &out));
    return out.size() == 1 ? std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end())
                           : std::vector<float>();
  };
  std::vector<float> want = run(imported), got = run(optimized);
  ASSERT_EQ(want.size(), 48u);
  ASSERT_EQ(got.size(), want.size());
  int positive = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
    positive += want[i] > 0;
  }
  EXPECT_GT(positive, 0);  // The Relu did not zero everything (the check would be vacuous).

  RewriterConfig no_fold;
  no_fold.add_disabled_passes("fold_batch_norms");
  SL_ASSERT_OK_AND_ASSIGN(OptGraph partial, ImportFileOptimized(path, no_fold));
  EXPECT_EQ(Count(partial, "Onnx>BatchNormalization"), 1);
  EXPECT_EQ(partial.optimizations.size(), passes.size() - 1);

  RewriterConfig bogus;
  bogus.add_disabled_passes("fold_everything");
  absl::Status s = ImportFileOptimized(path, bogus).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), ::testing::AllOf(::testing::HasSubstr("fold_everything"),
                                                         ::testing::HasSubstr("fold_batch_norms")));
}

// Dead-node removal keeps what outputs need, the inputs (even unread ones, so feeding them
// still works) and stateful nodes.
TEST(OptimizerPipelineTest, DeadNodeRemovalKeepsInputsAndStatefulNodes) {
  GraphItem g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "unread" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "dead1" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "dead2" op: "Neg" input: "dead1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "rand" op: "RandomUniform" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { list { i: 2 } } } }
  )", &g.graph));
  g.inputs = {"x:0", "unread:0"};
  g.outputs = {"y:0"};
  SL_ASSERT_OK_AND_ASSIGN(int removed, RemoveDeadNodes(&g));
  EXPECT_EQ(removed, 2);
  std::vector<std::string> names;
  for (const NodeDef& n : g.graph.node()) names.push_back(n.name());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("x", "unread", "y", "rand"));
}


// Shape -> Gather -> Unsqueeze -> Concat of a statically shaped x folds into the Reshape's
// constant shape; Transpose of a weight folds into a constant.
TEST(FoldConstantsTest, ShapeChainsAndWeightTransformsFold) {
  auto model = SmallModel({2, 3, 4}, [](onnx::GraphProto* g) {
    AddTensorInitializer(g, "zero", onnx::TensorProto::INT64, {}, {0});
    AddTensorInitializer(g, "axes", onnx::TensorProto::INT64, {1}, {0});
    AddTensorInitializer(g, "minus_one", onnx::TensorProto::INT64, {1}, {-1});
    AddTensorInitializer(g, "wt", onnx::TensorProto::FLOAT, {5, 12}, Ramp(60, 1));
    AddNode(g, "Shape", {"x"}, "s");
    AddNode(g, "Gather", {"s", "zero"}, "d0");
    AddNode(g, "Unsqueeze", {"d0", "axes"}, "u");
    onnx::NodeProto* cat = AddNode(g, "Concat", {"u", "minus_one"}, "shape");
    onnx::AttributeProto* axis = cat->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    AddNode(g, "Reshape", {"x", "shape"}, "r");
    AddNode(g, "Transpose", {"wt"}, "w");
    AddNode(g, "MatMul", {"r", "w"}, "y");
  });
  Imported both = ImportBothWays(model, {2, 3, 4});
  EXPECT_EQ(Count(both.plain, "Onnx>Shape"), 1);
  // ONNX shape inference does not evaluate the Concat, so the Reshape's shape is unknown to it:
  // folding runs in rounds, shapes inferred again after each; five nodes in all.
  EXPECT_EQ(Rewrites(both.optimized, "constant_folding"), 5);
  for (const char* op : {"Onnx>Shape", "Onnx>Gather", "Onnx>Unsqueeze", "Onnx>Concat", "Onnx>Transpose"}) {
    EXPECT_EQ(Count(both.optimized, op), 0) << op;
  }
  // What is left: x, the Reshape and MatMul, and the two constants they read.
  EXPECT_EQ(both.optimized.graph.node_size(), 5);
  EXPECT_EQ(Count(both.optimized, "Const"), 2);

  // Where feeds may differ from the declared shapes (data-parallel training's replicas declare
  // an unknown batch), Shape stays.
  EXPECT_EQ(Count(OptimizedWithUnknownBatch(model), "Onnx>Shape"), 1);
  EXPECT_EQ(Count(OptimizedWithUnknownBatch(model), "Onnx>Transpose"), 0);
}

// Nothing folds that reads a fed tensor (without a static shape), runs a stateful op, fails
// to evaluate, or would make too large a constant (over 64 MiB, or over 1 MiB and 4x its
// inputs); a folded graph output keeps its name.
TEST(FoldConstantsTest, LeavesWhatItMustNotFold) {
  GraphItem g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "big_shape" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } }
                                                int64_val: 4096 int64_val: 8192 } } } }
    node { name: "mid_shape" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } }
                                                int64_val: 1024 int64_val: 1024 } } } }
    node { name: "bad_shape" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } }
                                                int64_val: -3 } } } }
    node { name: "fed" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "shape_of_fed" op: "Onnx>Shape" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "random" op: "Onnx>RandomUniformLike" input: "two"
           attr { key: "T1" value { type: DT_FLOAT } } attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "huge" op: "Onnx>ConstantOfShape" input: "big_shape"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 } } } }
    node { name: "medium" op: "Onnx>ConstantOfShape" input: "mid_shape"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 } } } }
    node { name: "failing" op: "Onnx>ConstantOfShape" input: "bad_shape"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 } } } }
    node { name: "neg_two" op: "Neg" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "neg_two" input: "neg_two" attr { key: "T" value { type: DT_FLOAT } } }
  )", &g.graph));
  g.inputs = {"x"};
  for (const char* out : {"fed", "shape_of_fed", "random", "huge", "medium", "failing", "y"}) {
    g.outputs.push_back(out);
  }
  g.feed_shapes["x"] = PartialShape(std::vector<int64_t>{-1, 3});  // Not fully defined: Shape(x) is not constant.
  InferItemShapes(&g);
  SL_ASSERT_OK_AND_ASSIGN(int folded, FoldConstants(&g));
  EXPECT_EQ(folded, 2);  // neg_two and y.
  std::map<std::string, std::string> ops;
  for (const NodeDef& n : g.graph.node()) ops[n.name()] = n.op();
  EXPECT_EQ(ops["fed"], "Neg");
  EXPECT_EQ(ops["shape_of_fed"], "Onnx>Shape");
  EXPECT_EQ(ops["random"], "Onnx>RandomUniformLike");
  EXPECT_EQ(ops["huge"], "Onnx>ConstantOfShape");
  EXPECT_EQ(ops["medium"], "Onnx>ConstantOfShape");  // 4 MiB: past 1 MiB and 4x its 16-byte input.
  EXPECT_EQ(ops["failing"], "Onnx>ConstantOfShape");
  EXPECT_EQ(ops["y"], "Const");
  EXPECT_EQ(ops.count("neg_two"), 0u);  // Read only by the folded y, so dropped.
  auto session = NewSession(Plain());
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(g.graph));
  std::vector<Tensor> out;
  ASSERT_OK((*session)->Run({}, {"y"}, {}, &out));
  EXPECT_EQ(out[0].flat<float>()[0], 4.0f);
  // The node that failed to fold fails at run time, as it would have unoptimized.
  EXPECT_FALSE((*session)->Run({}, {"failing"}, {}, &out).ok());

  // A fully known shape makes Shape of a fed tensor constant.
  g.feed_shapes["x"] = PartialShape(std::vector<int64_t>{2, 3});
  InferItemShapes(&g);
  SL_ASSERT_OK_AND_ASSIGN(folded, FoldConstants(&g));
  EXPECT_EQ(folded, 1);
  for (const NodeDef& n : g.graph.node()) {
    if (n.name() == "shape_of_fed") {
      EXPECT_EQ(n.op(), "Const");
    }
  }
}

// The evaluator FoldConstants calls, watching the graph being folded: how many bytes of value
// each Const named in `watched` holds when each node is evaluated.
struct FoldWatch {
  static inline const GraphDef* graph = nullptr;
  static inline GraphItem::Evaluator real = &EvaluateNode;
  static inline std::map<std::string, std::map<std::string, size_t>> held;  // node -> Const -> bytes
  static absl::StatusOr<std::vector<Tensor>> Evaluate(const NodeDef& node, const std::vector<Tensor>& inputs,
                                                      uint64_t limit) {
    for (const NodeDef& n : graph->node()) {
      if (n.op() == "Const") held[node.name()][n.name()] = n.attr().at("value").tensor().tensor_content().size();
    }
    return real(node, inputs, limit);
  }
};

// A weight that only folded nodes read gives its value back as soon as the last of them has
// folded, not when the pass ends; one that an unfolded node or the graph's outputs also read
// keeps it. A folded Identity is no copy: its readers read its input.
TEST(FoldConstantsTest, FoldingCopiesNoWeightAndDropsThoseNothingReads) {
  GraphItem g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "shared" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "out" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w_neg" op: "Neg" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "w_neg2" op: "Neg" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "shared_neg" op: "Neg" input: "shared" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "out_neg" op: "Neg" input: "out" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "w_id" op: "Identity" input: "w_neg2" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "last" op: "Neg" input: "shared_neg" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y" op: "BatchMatMulV2" input: "x" input: "w_neg" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "BatchMatMulV2" input: "x" input: "shared" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "v" op: "BatchMatMulV2" input: "x" input: "w_id" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "u" op: "BatchMatMulV2" input: "x" input: "last" attr { key: "T" value { type: DT_FLOAT } } }
  )", &g.graph));
  std::vector<float> values(64 * 64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 17) - 8;
  const Tensor w = Tensor::FromVector<float>(values, TensorShape({64, 64}));
  for (int i : {1, 2, 3}) w.AsProtoTensorContent((*g.graph.mutable_node(i)->mutable_attr())["value"].mutable_tensor());
  const size_t bytes = w.TotalBytes();
  g.inputs = {"x"};
  for (const char* out : {"y", "z", "v", "u", "out"}) {
    g.outputs.push_back(out);
  }
  FoldWatch::graph = &g.graph;
  g.evaluate = &FoldWatch::Evaluate;
  auto folded = FoldConstants(&g);
  ASSERT_OK(folded);
  EXPECT_EQ(*folded, 6);  // All but the BatchMatMulV2s.

  auto& held = FoldWatch::held;
  EXPECT_EQ(held["w_neg2"]["w"], bytes);  // Still read by w_neg2.
  EXPECT_EQ(held["shared_neg"]["w"], 0u);  // Its last reader has folded.
  EXPECT_EQ(held["last"]["w"], 0u);
  EXPECT_EQ(held["last"]["shared_neg"], bytes);
  EXPECT_EQ(held["last"]["shared"], bytes);  // z reads it too.
  EXPECT_EQ(held["last"]["out"], bytes);     // A graph output.
  EXPECT_EQ(held["last"].count("w_id"), 0u);  // Never a Const.
  std::map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : g.graph.node()) nodes[n.name()] = &n;
  for (const char* gone : {"w", "w_id", "shared_neg"}) EXPECT_EQ(nodes.count(gone), 0u) << gone;
  ASSERT_EQ(nodes.count("v"), 1u);
  EXPECT_EQ(nodes["v"]->input(1), "w_neg2");
  EXPECT_EQ(nodes["shared"]->op(), "Const");
  EXPECT_EQ(nodes["out"]->op(), "Const");

  auto session = NewSession(Plain());
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(g.graph));
  Tensor x = Tensor::FromVector<float>(std::vector<float>(64, 1.0f), TensorShape({1, 64}));
  std::vector<Tensor> out;
  ASSERT_OK((*session)->Run({{"x", x}}, {"y", "z", "v", "u", "out"}, {}, &out));
  for (int j = 0; j < 64; ++j) {
    float sum = 0;
    for (int i = 0; i < 64; ++i) sum += values[i * 64 + j];
    EXPECT_EQ(out[0].flat<float>()[j], -sum) << j;
    EXPECT_EQ(out[1].flat<float>()[j], sum) << j;
    EXPECT_EQ(out[2].flat<float>()[j], -sum) << j;
    EXPECT_EQ(out[3].flat<float>()[j], sum) << j;
  }
  EXPECT_EQ(out[4].flat<float>()[4095], values[4095]);
}

// y = MatMul(x, W) + b for x [3, 4]: one Gemm, named as the Add was.
TEST(FuseMatMulAddsTest, MatMulOfConstantWeightsAndBiasAddBecomesGemm) {
  auto build = [](bool bias_first, std::vector<int64_t> bias_dims) {
    return [=](onnx::GraphProto* g) {
      AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {4, 5}, Ramp(20, 1));
      int64_t n = 1;
      for (int64_t d : bias_dims) n *= d;
      AddTensorInitializer(g, "b", onnx::TensorProto::FLOAT, bias_dims, Ramp(n, 0.5));
      AddNode(g, "MatMul", {"x", "w"}, "m");
      if (bias_first) {
        AddNode(g, "Add", {"b", "m"}, "y");
      } else {
        AddNode(g, "Add", {"m", "b"}, "y");
      }
    };
  };
  for (bool bias_first : {false, true}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{5}, {1, 5}}) {
      SCOPED_TRACE(bias_first ? "bias first" : "bias second");
      Imported both = ImportBothWays(SmallModel({3, 4}, build(bias_first, dims)), {3, 4});
      EXPECT_EQ(Count(both.optimized, "Onnx>Gemm"), 1);
      EXPECT_EQ(Count(both.optimized, "BatchMatMulV2"), 0);
      EXPECT_EQ(Count(both.optimized, "Add"), 0);
      EXPECT_EQ(Rewrites(both.optimized, "fuse_matmul_add"), 1);
    }
  }
  // A bias of full rows ([3, 5]) is not one row.
  Imported full = ImportBothWays(SmallModel({3, 4}, build(false, {3, 5})), {3, 4});
  EXPECT_EQ(Count(full.optimized, "Onnx>Gemm"), 0);
}

// A 3-D x [2, 3, 4] (a transformer's linear layer): its 6 rows go through one Gemm between
// Reshapes, and y keeps its name and shape.
TEST(FuseMatMulAddsTest, BatchedMatMulOfConstantWeightsBecomesGemmOfRows) {
  for (std::vector<int64_t> bias_dims : {std::vector<int64_t>{5}, {1, 1, 5}}) {
    auto model = SmallModel({2, 3, 4}, [&](onnx::GraphProto* g) {
      AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {4, 5}, Ramp(20, 1));
      AddTensorInitializer(g, "b", onnx::TensorProto::FLOAT, bias_dims, Ramp(5, 0.5));
      AddNode(g, "MatMul", {"x", "w"}, "m");
      AddNode(g, "Add", {"b", "m"}, "y");
    }, 3);
    Imported both = ImportBothWays(model, {2, 3, 4});
    EXPECT_EQ(Count(both.optimized, "Onnx>Gemm"), 1);
    EXPECT_EQ(Count(both.optimized, "BatchMatMulV2"), 0);
    EXPECT_EQ(Count(both.optimized, "Add"), 0);
    EXPECT_EQ(Count(both.optimized, "Onnx>Reshape"), 2);
    EXPECT_EQ(Rewrites(both.optimized, "fuse_matmul_add"), 1);
  }
  // A bias of a row per batch ([2, 1, 5]) is not one row.
  auto per_batch = SmallModel({2, 3, 4}, [](onnx::GraphProto* g) {
    AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {4, 5}, Ramp(20, 1));
    AddTensorInitializer(g, "b", onnx::TensorProto::FLOAT, {2, 1, 5}, Ramp(10, 0.5));
    AddNode(g, "MatMul", {"x", "w"}, "m");
    AddNode(g, "Add", {"m", "b"}, "y");
  }, 3);
  EXPECT_EQ(Count(ImportBothWays(per_batch, {2, 3, 4}).optimized, "Onnx>Gemm"), 0);
}

// The MatMul's result read elsewhere too stays a MatMul.
TEST(FuseMatMulAddsTest, MatMulReadTwiceIsNotFused) {
  auto model = SmallModel({3, 4}, [](onnx::GraphProto* g) {
    AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {4, 5}, Ramp(20, 1));
    AddTensorInitializer(g, "b", onnx::TensorProto::FLOAT, {5}, Ramp(5, 1));
    AddNode(g, "MatMul", {"x", "w"}, "m");
    AddNode(g, "Add", {"m", "b"}, "a");
    AddNode(g, "Mul", {"a", "m"}, "y");
  });
  Imported both = ImportBothWays(model, {3, 4});
  EXPECT_EQ(Count(both.optimized, "Onnx>Gemm"), 0);
}

// BatchNormalization of a Gemm's or MatMul's [rows, N] output folds into B and C.
TEST(FoldBatchNormsIntoGemmsTest, FoldedGraphsComputeWhatUnfoldedOnesDo) {
  auto bn = [](onnx::GraphProto* g, const std::string& in) {
    AddInitializer(g, "gamma", {1.5f, -0.5f, 2.0f, 0.25f});
    AddInitializer(g, "beta", {0.1f, 0.2f, -0.3f, 0.0f});
    AddInitializer(g, "mean", {0.3f, -0.2f, 0.0f, 1.0f});
    AddInitializer(g, "var", {0.5f, 2.0f, 1.0f, 0.01f});
    AddFloatAttr(AddNode(g, "BatchNormalization", {in, "gamma", "beta", "mean", "var"}, "y"), "epsilon", 1e-3f);
  };
  auto int_attr = [](onnx::NodeProto* n, const char* name, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    int want_gemms, want_bns;
  };
  const std::vector<Case> cases = {
      {"Gemm", [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {6, 4}, Ramp(24, 1));
         AddTensorInitializer(g, "c", onnx::TensorProto::FLOAT, {4}, Ramp(4, 1));
         AddFloatAttr(AddNode(g, "Gemm", {"x", "w", "c"}, "h"), "beta", 0.5f);
         bn(g, "h");
       }, 1, 0},
      {"Gemm transB, no C", [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {4, 6}, Ramp(24, 1));
         onnx::NodeProto* n = AddNode(g, "Gemm", {"x", "w"}, "h");
         int_attr(n, "transB", 1);
         AddFloatAttr(n, "alpha", 2.0f);
         bn(g, "h");
       }, 1, 0},
      {"MatMul", [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "w", onnx::TensorProto::FLOAT, {6, 4}, Ramp(24, 1));
         AddNode(g, "MatMul", {"x", "w"}, "h");
         bn(g, "h");
       }, 1, 0},
      {"Gemm of a fed B", [&](onnx::GraphProto* g) {
         AddNode(g, "Transpose", {"x"}, "xt");
         AddNode(g, "MatMul", {"xt", "x"}, "sq");  // [6, 6]
         AddTensorInitializer(g, "sel", onnx::TensorProto::FLOAT, {6, 4}, Ramp(24, 1));
         AddNode(g, "MatMul", {"sq", "sel"}, "w");  // [6, 4], not constant
         AddNode(g, "Gemm", {"x", "w"}, "h");
         bn(g, "h");
       }, 1, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Imported both = ImportBothWays(SmallModel({3, 6}, c.build), {3, 6}, 1e-4f);
    EXPECT_EQ(Count(both.optimized, "Onnx>Gemm"), c.want_gemms);
    EXPECT_EQ(Count(both.optimized, "Onnx>BatchNormalization"), c.want_bns);
    EXPECT_EQ(both.optimized.outputs[0].name, "y");
  }
}

// --- LayerNorm and GELU spelled out ---


// ReduceMean over `axis` with keepdims, its axes an attribute before opset 18 and an input since.
void AddMean(onnx::GraphProto* g, int opset, const std::string& in, const std::string& out, int64_t axis) {
  if (opset >= 18) {
    AddTensorInitializer(g, out + "_axes", onnx::TensorProto::INT64, {1}, {static_cast<double>(axis)});
    AddNode(g, "ReduceMean", {in, out + "_axes"}, out);
  } else {
    AddIntsAttr(AddNode(g, "ReduceMean", {in}, out), "axes", {axis});
  }
}

onnx::ModelProto WithOpset(onnx::ModelProto m, int opset) {
  m.mutable_opset_import(0)->set_version(opset);
  return m;
}

struct LayerNormCase {
  std::string name;
  int opset = 13;
  bool mul_square = false, scale = true, bias = true, swap = false;
  int64_t axis = -1;
  int want_fused = 1;
};

// x [2, 3, 8] normalized over its last axis as torch's LayerNorm exports below opset 17.
onnx::ModelProto LayerNormModel(const LayerNormCase& c) {
  return WithOpset(SmallModel({2, 3, 8}, [&](onnx::GraphProto* g) {
    AddMean(g, c.opset, "x", "mean", c.axis);
    AddNode(g, "Sub", {"x", "mean"}, "d");
    if (c.mul_square) {
      AddNode(g, "Mul", {"d", "d"}, "sq");
    } else {
      AddTensorInitializer(g, "two", onnx::TensorProto::FLOAT, {}, {2});
      AddNode(g, "Pow", {"d", "two"}, "sq");
    }
    AddMean(g, c.opset, "sq", "var", c.axis);
    AddTensorInitializer(g, "eps", onnx::TensorProto::FLOAT, {}, {1e-5});
    AddNode(g, "Add", c.swap ? std::vector<std::string>{"eps", "var"} : std::vector<std::string>{"var", "eps"}, "ve");
    AddNode(g, "Sqrt", {"ve"}, "std");
    std::string y = (c.scale || c.bias) ? "n" : "y";
    AddNode(g, "Div", {"d", "std"}, y);
    if (c.scale) {
      AddTensorInitializer(g, "gamma", onnx::TensorProto::FLOAT, {8}, Ramp(8, 1.5));
      const std::string out = c.bias ? "scaled" : "y";
      AddNode(g, "Mul", c.swap ? std::vector<std::string>{"gamma", y} : std::vector<std::string>{y, "gamma"}, out);
      y = out;
    }
    if (c.bias) {
      AddTensorInitializer(g, "beta", onnx::TensorProto::FLOAT, {1, 8}, Ramp(8, 0.5));
      AddNode(g, "Add", c.swap ? std::vector<std::string>{"beta", y} : std::vector<std::string>{y, "beta"}, "y");
    }
  }, 3), c.opset);
}

TEST(FuseLayerNormsTest, ExportedLayerNormsBecomeOneNode) {
  std::vector<LayerNormCase> cases = {
      {"opset 13, axes attr"},
      {"opset 18, axes input", 18},
      {"Mul(d, d), operands swapped", 13, true, true, true, true},
      {"no bias", 13, false, true, false},
      {"no scale or bias", 18, false, false, false},
      {"last axis as 2", 13, false, true, true, false, 2},
      // Over the middle axis: not LayerNormalization's last-axis form.
      {"axis 1", 13, false, true, true, false, 1, 0},
  };
  for (const LayerNormCase& c : cases) {
    SCOPED_TRACE(c.name);
    Imported both = ImportBothWays(LayerNormModel(c), {2, 3, 8}, 1e-5f);
    EXPECT_EQ(Count(both.optimized, "Onnx>LayerNormalization"), c.want_fused);
    EXPECT_EQ(Rewrites(both.optimized, "fuse_layer_norm"), c.want_fused);
    if (c.want_fused == 1) {
      EXPECT_EQ(Count(both.optimized, "Onnx>ReduceMean"), 0);
      EXPECT_EQ(Count(both.optimized, "Sqrt"), 0);
      EXPECT_EQ(Count(both.optimized, "Add"), 0);
      EXPECT_EQ(Count(both.optimized, "Const"), c.bias ? 2 : 1);  // The new scale and bias only.
    }
    EXPECT_EQ(both.optimized.outputs[0].name, "y");
  }
}

// A mean (or difference) read outside the pattern stays as it is.
TEST(FuseLayerNormsTest, StatisticsReadElsewhereAreNotFused) {
  auto model = SmallModel({2, 3, 8}, [](onnx::GraphProto* g) {
    AddMean(g, 13, "x", "mean", -1);
    AddNode(g, "Sub", {"x", "mean"}, "d");
    AddNode(g, "Mul", {"d", "d"}, "sq");
    AddMean(g, 13, "sq", "var", -1);
    AddTensorInitializer(g, "eps", onnx::TensorProto::FLOAT, {}, {1e-5});
    AddNode(g, "Add", {"var", "eps"}, "ve");
    AddNode(g, "Sqrt", {"ve"}, "std");
    AddNode(g, "Div", {"d", "std"}, "n");
    AddNode(g, "Add", {"n", "mean"}, "y");
  }, 3);
  Imported both = ImportBothWays(model, {2, 3, 8});
  EXPECT_EQ(Count(both.optimized, "Onnx>LayerNormalization"), 0);
}

struct GeluCase {
  std::string name;
  std::function<void(onnx::GraphProto*)> build;
  std::string want_approximate;  // "" when nothing fuses.
};

TEST(FuseGelusTest, ExportedGelusBecomeOneNode) {
  auto scalar = [](onnx::GraphProto* g, const std::string& name, double v) {
    AddTensorInitializer(g, name, onnx::TensorProto::FLOAT, {}, {v});
  };
  // Erf(x / sqrt(2)) or Erf(x * sqrt(1/2)), then + 1.
  // The rest of the tanh form once "cube" holds x^3: 0.5 x (1 + tanh(k (x + c x^3))), with
  // c x^3 multiplied in either order.
  auto tanh_of_cube = [&](onnx::GraphProto* g, bool cube_first) {
    scalar(g, "c", 0.044715);
    scalar(g, "k", 0.7978845608028654);
    scalar(g, "one", 1);
    scalar(g, "half", 0.5);
    AddNode(g, "Mul", cube_first ? std::vector<std::string>{"cube", "c"} : std::vector<std::string>{"c", "cube"},
            "cubic");
    AddNode(g, "Add", {"x", "cubic"}, "sum");
    AddNode(g, "Mul", {"k", "sum"}, "arg");
    AddNode(g, "Tanh", {"arg"}, "t");
    AddNode(g, "Add", {"one", "t"}, "a");
    AddNode(g, "Mul", {"x", "a"}, "p");
    AddNode(g, "Mul", {"half", "p"}, "y");
  };
  auto erf_one = [&](onnx::GraphProto* g, bool by_mul) {
    if (by_mul) {
      scalar(g, "k", M_SQRT1_2);
      AddNode(g, "Mul", {"k", "x"}, "s");
    } else {
      scalar(g, "k", 1.4142135381698608);  // torch's float sqrt(2)
      AddNode(g, "Div", {"x", "k"}, "s");
    }
    AddNode(g, "Erf", {"s"}, "e");
    scalar(g, "one", 1);
    scalar(g, "half", 0.5);
    AddNode(g, "Add", {"e", "one"}, "a");
  };
  const std::vector<GeluCase> cases = {
      {"torch: (x * (1 + erf)) * 0.5", [&](onnx::GraphProto* g) {
         erf_one(g, false);
         AddNode(g, "Mul", {"x", "a"}, "p");
         AddNode(g, "Mul", {"p", "half"}, "y");
       }, "none"},
      {"(0.5 * x) * (1 + erf), Mul by 1/sqrt(2)", [&](onnx::GraphProto* g) {
         erf_one(g, true);
         AddNode(g, "Mul", {"half", "x"}, "h");
         AddNode(g, "Mul", {"h", "a"}, "y");
       }, "none"},
      {"x * ((1 + erf) * 0.5)", [&](onnx::GraphProto* g) {
         erf_one(g, false);
         AddNode(g, "Mul", {"a", "half"}, "p");
         AddNode(g, "Mul", {"p", "x"}, "y");
       }, "none"},
      {"tanh form", [&](onnx::GraphProto* g) {
         scalar(g, "three", 3);
         AddNode(g, "Pow", {"x", "three"}, "cube");
         tanh_of_cube(g, /*cube_first=*/true);
       }, "tanh"},
      {"tanh form as torch exports it, x^3 as x * (x * x)", [&](onnx::GraphProto* g) {
         AddNode(g, "Mul", {"x", "x"}, "square");
         AddNode(g, "Mul", {"x", "square"}, "cube");
         tanh_of_cube(g, /*cube_first=*/false);
       }, "tanh"},
      // Not a GELU: 0.4 for 0.5, or the Erf's result read again.
      {"another factor", [&](onnx::GraphProto* g) {
         erf_one(g, false);
         scalar(g, "other", 0.4);
         AddNode(g, "Mul", {"x", "a"}, "p");
         AddNode(g, "Mul", {"p", "other"}, "y");
       }, ""},
      {"Erf read twice", [&](onnx::GraphProto* g) {
         erf_one(g, false);
         AddNode(g, "Mul", {"x", "a"}, "p");
         AddNode(g, "Mul", {"p", "half"}, "q");
         AddNode(g, "Add", {"q", "e"}, "y");
       }, ""},
  };
  for (const GeluCase& c : cases) {
    SCOPED_TRACE(c.name);
    Imported both = ImportBothWays(SmallModel({3, 40}, c.build), {3, 40}, 2e-6f);
    const int want = c.want_approximate.empty() ? 0 : 1;
    EXPECT_EQ(Count(both.optimized, "Onnx>Gelu"), want);
    EXPECT_EQ(Rewrites(both.optimized, "fuse_gelu"), want);
    if (want == 0) continue;
    EXPECT_EQ(both.optimized.graph.node_size(), 2);  // x and the Gelu.
    for (const NodeDef& n : both.optimized.graph.node()) {
      if (n.op() == "Onnx>Gelu") {
        EXPECT_EQ(n.name(), "y_node");
        EXPECT_EQ(n.attr().at("approximate").s(), c.want_approximate);
      }
    }
  }
}

// Attention's Q K^T: a Transpose that moves K's innermost axis becomes adj_y on the MatMul.
TEST(FoldTransposesIntoMatMulsTest, KTransposedBecomesAdjY) {
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    int want_folded, want_transposes;
  };
  const std::vector<Case> cases = {
      {"[B, S, d] -> [B, d, S]: no Transpose left", [](onnx::GraphProto* g) {
         AddIntsAttr(AddNode(g, "Transpose", {"x"}, "kt"), "perm", {0, 2, 1});
         AddNode(g, "MatMul", {"x", "kt"}, "y");
       }, 1, 0},
      {"[S, B, d] -> [B, d, S]: a row-copying Transpose to [B, S, d]", [](onnx::GraphProto* g) {
         AddIntsAttr(AddNode(g, "Transpose", {"x"}, "q"), "perm", {1, 0, 2});
         AddIntsAttr(AddNode(g, "Transpose", {"x"}, "kt"), "perm", {1, 2, 0});
         AddNode(g, "MatMul", {"q", "kt"}, "y");
       }, 1, 2},
      {"K^T read twice", [](onnx::GraphProto* g) {
         AddIntsAttr(AddNode(g, "Transpose", {"x"}, "kt"), "perm", {0, 2, 1});
         AddNode(g, "MatMul", {"x", "kt"}, "s");
         AddNode(g, "MatMul", {"kt", "s"}, "y");
       }, 0, 1},
      {"the innermost axis stays", [](onnx::GraphProto* g) {
         AddIntsAttr(AddNode(g, "Transpose", {"x"}, "xt"), "perm", {1, 0, 2});
         AddIntsAttr(AddNode(g, "Transpose", {"xt"}, "kt"), "perm", {0, 2, 1});
         AddNode(g, "MatMul", {"xt", "kt"}, "y");
       }, 1, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Imported both = ImportBothWays(SmallModel({4, 4, 5}, c.build, 3), {4, 4, 5});
    EXPECT_EQ(Rewrites(both.optimized, "fold_transpose_matmul"), c.want_folded);
    EXPECT_EQ(Count(both.optimized, "Onnx>Transpose"), c.want_transposes);
  }
}


// Shape arithmetic in layers (Swin's pads and window reshapes): the second Reshape's shape
// comes from Shape of the first Reshape's output, which ONNX shape inference only knows once
// the first chain is folded. Constant folding's rounds fold both (no Shape, Gather or Concat is
// left) and the graph computes what the plain import does; with sizes not fixed, both stay.
TEST(FoldConstantsTest, LayeredShapeArithmeticFoldsInRounds) {
  auto model = SmallModel({2, 3, 4}, [](onnx::GraphProto* g) {
    AddTensorInitializer(g, "zero", onnx::TensorProto::INT64, {}, {0});
    AddTensorInitializer(g, "one", onnx::TensorProto::INT64, {}, {1});
    AddTensorInitializer(g, "axes", onnx::TensorProto::INT64, {1}, {0});
    AddTensorInitializer(g, "minus_one", onnx::TensorProto::INT64, {1}, {-1});
    auto concat = [&](const std::vector<std::string>& in, const std::string& out) {
      AddIntAttr(AddNode(g, "Concat", in, out), "axis", 0);
    };
    // r = Reshape(x, [x.shape[0], -1]): [2, 12].
    AddNode(g, "Shape", {"x"}, "s");
    AddNode(g, "Gather", {"s", "zero"}, "d0");
    AddNode(g, "Unsqueeze", {"d0", "axes"}, "u0");
    concat({"u0", "minus_one"}, "shape0");
    AddNode(g, "Reshape", {"x", "shape0"}, "r");
    // y = Reshape(r, [-1, r.shape[1] / 2]): [4, 6].
    AddTensorInitializer(g, "two", onnx::TensorProto::INT64, {}, {2});
    AddNode(g, "Shape", {"r"}, "s1");
    AddNode(g, "Gather", {"s1", "one"}, "d1");
    AddNode(g, "Div", {"d1", "two"}, "half");
    AddNode(g, "Unsqueeze", {"half", "axes"}, "u1");
    concat({"minus_one", "u1"}, "shape1");
    AddNode(g, "Reshape", {"r", "shape1"}, "y");
  });
  Imported both = ImportBothWays(model, {2, 3, 4});
  for (const char* op : {"Onnx>Shape", "Onnx>Gather", "Onnx>Concat", "Div"}) {
    EXPECT_EQ(Count(both.optimized, op), 0) << op;
    EXPECT_GT(Count(both.plain, op), 0) << op;
  }
  std::vector<Tensor> out = RunAll(both.optimized, {2, 3, 4});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({4, 6}));
  EXPECT_EQ(Count(OptimizedWithUnknownBatch(model), "Onnx>Shape"), 2);
}


// A GraphDef that arrives bare, as a C API client sends one (no _output_shapes, nothing
// optimized), is optimized by the master: its partition graph has the BatchNormalization folded
// and the Relu fused, and it computes what the unoptimized session does.
TEST(MasterOptimizesEveryGraphTest, BareGraphDefGetsFoldedAndFused) {
  SL_ASSERT_OK_AND_ASSIGN(OnnxGraph g, ImportOnnxFile("tests/testdata/onnx/conv_bn_relu.onnx"));
  for (NodeDef& n : *g.graph.mutable_node()) n.mutable_attr()->erase("_output_shapes");
  Tensor x(DT_FLOAT, TensorShape({1, 2, 4, 4}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::cos(0.9f * i) * 2;
  auto run = [&](const SessionOptions& options, RunMetadata* metadata) {
    auto session = NewSession(options);
    EXPECT_OK(session);
    EXPECT_OK((*session)->Create(g.graph));
    RunOptions run_options;
    run_options.set_output_partition_graphs(true);
    std::vector<Tensor> out;
    EXPECT_OK((*session)->Run(run_options, {{g.inputs[0].tensor, x}}, {g.outputs[0].tensor}, {}, &out, metadata));
    return out.size() == 1 ? out[0] : Tensor();
  };
  RunMetadata optimized_metadata, plain_metadata;
  Tensor got = run(SessionOptions(), &optimized_metadata), want = run(Plain(), &plain_metadata);
  auto count = [](const RunMetadata& m, const std::string& op) {
    int c = 0;
    for (const GraphDef& part : m.partition_graphs()) {
      for (const NodeDef& n : part.node()) c += n.op() == op;
    }
    return c;
  };
  ASSERT_GT(plain_metadata.partition_graphs_size(), 0);
  EXPECT_EQ(count(plain_metadata, "Onnx>BatchNormalization"), 1);
  EXPECT_EQ(count(optimized_metadata, "Onnx>BatchNormalization"), 0);
  EXPECT_EQ(count(optimized_metadata, "Relu"), 0);
  ASSERT_EQ(got.NumElements(), want.NumElements());
  ASSERT_EQ(got.NumElements(), 48);
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    EXPECT_NEAR(got.flat<float>()[i], want.flat<float>()[i], 1e-5f * (1 + std::fabs(want.flat<float>()[i])));
  }
}

// The session's RewriterConfig names passes as TensorFlow's toggles do: OFF turns a concern off.
TEST(MasterOptimizesEveryGraphTest, RewriterConfigTogglesConcerns) {
  RewriterConfig config;
  config.set_arithmetic_optimization(RewriterConfig::OFF);
  for (const OptimizerPass& p : OptimizerPasses()) {
    EXPECT_EQ(PassEnabled(config, p), std::string(p.toggle) != "arithmetic_optimization") << p.name;
  }
  config.set_disable_meta_optimizer(true);
  for (const OptimizerPass& p : OptimizerPasses()) EXPECT_FALSE(PassEnabled(config, p)) << p.name;
  RewriterConfig only;
  only.add_optimizers("constant_folding");
  for (const OptimizerPass& p : OptimizerPasses()) {
    EXPECT_EQ(PassEnabled(only, p), std::string(p.name) == "constant_folding") << p.name;
  }
}

// A small CNN spelled with TensorFlow's ops (NHWC): Conv2D, BiasAdd, FusedBatchNormV3, Relu,
// MaxPool, a second Conv2D with Relu6, then MatMul + BiasAdd. The master turns each Conv2D chain
// into one fused Onnx>Conv and the MatMul + BiasAdd into a Gemm, as for the graph's ONNX twin,
// and the values stay those of the unoptimized graph.
GraphDef TfSmallCnn(const std::string& padding) {
  GraphDef g;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> inputs) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const auto& in : inputs) n->add_input(in);
    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
    return n;
  };
  auto constant = [&](const std::string& name, std::vector<int64_t> dims, float lo, float hi) {
    Tensor t(DT_FLOAT, TensorShape(absl::Span<const int64_t>(dims)));
    for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = lo + (hi - lo) * (value(rng) + 1) / 2;
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op("Const");
    (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
    t.AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
  };
  auto ints = [](NodeDef* n, const char* name, std::vector<int64_t> v) {
    for (int64_t x : v) (*n->mutable_attr())[name].mutable_list()->add_i(x);
  };
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  for (int64_t d : {2, 9, 9, 3}) (*x->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(d);
  constant("f1", {3, 3, 3, 8}, -1, 1);
  constant("b1", {8}, -1, 1);
  for (const char* s : {"scale", "offset", "mean"}) constant(s, {8}, -1, 1);
  constant("var", {8}, 0.5, 2);
  NodeDef* conv1 = node("conv1", "Conv2D", {"x", "f1"});
  ints(conv1, "strides", {1, 1, 1, 1});
  (*conv1->mutable_attr())["padding"].set_s(padding);
  if (padding == "EXPLICIT") ints(conv1, "explicit_paddings", {0, 0, 1, 2, 0, 1, 0, 0});
  node("bias1", "BiasAdd", {"conv1", "b1"});
  NodeDef* bn = node("bn", "FusedBatchNormV3", {"bias1", "scale", "offset", "mean", "var"});
  (*bn->mutable_attr())["U"].set_type(DT_FLOAT);
  (*bn->mutable_attr())["is_training"].set_b(false);
  (*bn->mutable_attr())["epsilon"].set_f(0.001f);
  node("relu", "Relu", {"bn"});
  NodeDef* pool = node("pool", "MaxPool", {"relu"});
  ints(pool, "ksize", {1, 2, 2, 1});
  ints(pool, "strides", {1, 2, 2, 1});
  (*pool->mutable_attr())["padding"].set_s("VALID");
  constant("f2", {3, 3, 8, 4}, -1, 1);
  NodeDef* conv2 = node("conv2", "Conv2D", {"pool", "f2"});
  ints(conv2, "strides", {1, 2, 2, 1});
  (*conv2->mutable_attr())["padding"].set_s("SAME");
  node("relu6", "Relu6", {"conv2"});
  constant("flat_shape", {}, 0, 0);
  NodeDef* shape = g.mutable_node(g.node_size() - 1);
  Tensor dims = Tensor::FromVector<int32_t>({2, -1}, TensorShape({2}));
  (*shape->mutable_attr())["dtype"].set_type(DT_INT32);
  dims.AsProtoTensorContent((*shape->mutable_attr())["value"].mutable_tensor());
  NodeDef* flat = node("flat", "Reshape", {"relu6", "flat_shape"});
  (*flat->mutable_attr())["Tshape"].set_type(DT_INT32);
  constant("w", {2, 5}, -1, 1);  // Resized below once the flattened width is known.
  constant("bias", {5}, -1, 1);
  NodeDef* mm = node("mm", "MatMul", {"flat", "w"});
  (*mm->mutable_attr())["transpose_a"].set_b(false);
  (*mm->mutable_attr())["transpose_b"].set_b(false);
  node("logits", "BiasAdd", {"mm", "bias"});
  return g;
}

TEST(TfRemapperTest, TensorFlowSpelledCnnGetsTheOnnxFusions) {
  for (const std::string padding : {"SAME", "VALID", "EXPLICIT"}) {
    SCOPED_TRACE(padding);
    GraphDef g = TfSmallCnn(padding);
    // The flattened width: 4 channels of conv2's output (pool of 9 or 8 or 10 rows, stride 2).
    const int64_t rows = padding == "SAME" ? 9 : padding == "VALID" ? 7 : 10;
    const int64_t cols = padding == "SAME" ? 9 : padding == "VALID" ? 7 : 9;
    const int64_t pooled_r = rows / 2, pooled_c = cols / 2;
    const int64_t width = 4 * ((pooled_r + 1) / 2) * ((pooled_c + 1) / 2);
    for (NodeDef& n : *g.mutable_node()) {
      if (n.name() != "w") continue;
      Tensor w(DT_FLOAT, TensorShape({width, 5}));
      for (int64_t i = 0; i < w.NumElements(); ++i) w.flat<float>()[i] = std::sin(0.3f * i);
      w.AsProtoTensorContent((*n.mutable_attr())["value"].mutable_tensor());
    }
    Tensor x(DT_FLOAT, TensorShape({2, 9, 9, 3}));
    for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::cos(0.61f * i) * 2;
    auto run = [&](const SessionOptions& options, RunMetadata* metadata) {
      auto session = NewSession(options);
      EXPECT_OK(session);
      EXPECT_OK((*session)->Create(g));
      RunOptions run_options;
      run_options.set_output_partition_graphs(true);
      std::vector<Tensor> out;
      EXPECT_OK((*session)->Run(run_options, {{"x", x}}, {"logits"}, {}, &out, metadata));
      return out.size() == 1 ? out[0] : Tensor();
    };
    RunMetadata fused_metadata, plain_metadata;
    const Tensor got = run(SessionOptions(), &fused_metadata), want = run(Plain(), &plain_metadata);
    std::map<std::string, int> ops;
    std::vector<std::string> activations;
    for (const GraphDef& part : fused_metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        ++ops[n.op()];
        if (n.op() == "Onnx>Conv") activations.push_back(n.attr().at("activation").s());
      }
    }
    EXPECT_EQ(ops["Onnx>Conv"], 2);
    EXPECT_THAT(activations, ::testing::UnorderedElementsAre("Relu", "Clip"));
    for (const char* gone : {"Conv2D", "BiasAdd", "FusedBatchNormV3", "Relu", "Relu6", "MatMul"}) {
      EXPECT_EQ(ops[gone], 0) << gone;
    }
    EXPECT_EQ(ops["Onnx>Gemm"], 1);
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.NumElements(), 10);
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      EXPECT_NEAR(got.flat<float>()[i], want.flat<float>()[i], 1e-4f * (1 + std::fabs(want.flat<float>()[i]))) << i;
    }
  }
}

// Function bodies are optimized too, and a call's constant arguments are pushed into its
// functions first (specialization). The model: y = If(c, then: x . W[:, 0:4], else: x . W[:, 4:8])
// with W a Constant of the main graph, and z = If(c, then: If(c, x . V[:, 0:4], x . V[:, 4:8]),
// else: x . V[:, 2:6]) with V a Constant of the outer then-branch (Silero VAD's LSTM weights
// are such a constant around the If that holds the LSTM). After the optimizer no branch slices a
// weight at run time, the unspecialized branches are gone, and both outputs keep their values.
void SetFloatShape(onnx::ValueInfoProto* v, std::vector<int64_t> dims) {
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::GraphProto SliceMatMulBranch(const std::string& prefix, const std::string& weight, int64_t begin) {
  onnx::GraphProto b;
  b.set_name(prefix);
  auto ints = [&](const std::string& name, int64_t v) {
    onnx::NodeProto* n = AddNode(&b, "Constant", {}, prefix + name);
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(v);
  };
  ints("_begin", begin);
  ints("_end", begin + 4);
  ints("_axis", 1);
  AddNode(&b, "Slice", {weight, prefix + "_begin", prefix + "_end", prefix + "_axis"}, prefix + "_w");
  AddNode(&b, "MatMul", {"x", prefix + "_w"}, prefix + "_y");
  onnx::ValueInfoProto* out = b.add_output();
  out->set_name(prefix + "_y");
  SetFloatShape(out, {2, 4});
  return b;
}

onnx::NodeProto* AddIf(onnx::GraphProto* g, const std::string& out, onnx::GraphProto then_branch,
                       onnx::GraphProto else_branch) {
  onnx::NodeProto* n = AddNode(g, "If", {"c"}, out);
  onnx::AttributeProto* t = n->add_attribute();
  t->set_name("then_branch");
  t->set_type(onnx::AttributeProto::GRAPH);
  *t->mutable_g() = std::move(then_branch);
  onnx::AttributeProto* e = n->add_attribute();
  e->set_name("else_branch");
  e->set_type(onnx::AttributeProto::GRAPH);
  *e->mutable_g() = std::move(else_branch);
  return n;
}

onnx::NodeProto* AddWeight(onnx::GraphProto* g, const std::string& name, float scale) {
  onnx::NodeProto* n = AddNode(g, "Constant", {}, name);
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(6);
  a->mutable_t()->add_dims(8);
  for (int i = 0; i < 48; ++i) a->mutable_t()->add_float_data(scale * static_cast<float>((i * 7) % 11 - 5));
  return n;
}

TEST(FunctionBodiesTest, ConstantArgumentsAreSpecializedAndFolded) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("branches");
  auto input = [&](const std::string& name, onnx::TensorProto::DataType type, std::vector<int64_t> dims) {
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  input("x", onnx::TensorProto::FLOAT, {2, 6});
  input("c", onnx::TensorProto::BOOL, {});
  AddWeight(g, "W", 0.5f);
  AddIf(g, "y", SliceMatMulBranch("a", "W", 0), SliceMatMulBranch("b", "W", 4));
  onnx::GraphProto outer;
  outer.set_name("outer");
  AddWeight(&outer, "V", 0.25f);
  AddIf(&outer, "inner_y", SliceMatMulBranch("p", "V", 0), SliceMatMulBranch("q", "V", 4));
  onnx::ValueInfoProto* outer_out = outer.add_output();
  outer_out->set_name("inner_y");
  SetFloatShape(outer_out, {2, 4});
  onnx::GraphProto other = SliceMatMulBranch("r", "V", 2);
  AddWeight(&other, "V", 0.25f);  // The else branch defines its own V before using it.
  std::rotate(other.mutable_node()->begin(), other.mutable_node()->end() - 1, other.mutable_node()->end());
  AddIf(g, "z", std::move(outer), std::move(other));
  for (const char* out : {"y", "z"}) {
    onnx::ValueInfoProto* v = g->add_output();
    v->set_name(out);
    SetFloatShape(v, {2, 4});
  }

  auto imported = ImportOnnxModel(m);
  ASSERT_OK(imported);
  int slices_before = 0;
  for (const FunctionDef& f : imported->graph.library().function()) {
    for (const NodeDef& n : f.node_def()) slices_before += n.op() == "Onnx>Slice";
  }
  EXPECT_EQ(slices_before, 5);
  auto optimized = ImportOptimized(m);
  ASSERT_OK(optimized);
  for (const FunctionDef& f : optimized->graph.library().function()) {
    for (const NodeDef& n : f.node_def()) EXPECT_NE(n.op(), "Onnx>Slice") << f.signature().name() << ": " << n.name();
  }
  // Each If that read a Const now calls copies made for it; the originals are gone.
  absl::flat_hash_set<std::string> names;
  for (const FunctionDef& f : optimized->graph.library().function()) names.insert(f.signature().name());
  auto branch_of = [](const GraphDef& graph, const std::string& node, const char* attr) {
    for (const NodeDef& n : graph.node()) {
      if (n.name() == node) return n.attr().at(attr).func().name();
    }
    return std::string("no node ") + node;
  };
  for (const char* attr : {"then_branch", "else_branch"}) {
    const std::string before = branch_of(imported->graph, "y_node", attr), after = branch_of(optimized->graph, "y_node", attr);
    EXPECT_THAT(after, ::testing::HasSubstr("/specialized_for/")) << attr;
    EXPECT_TRUE(names.contains(after)) << after;
    EXPECT_FALSE(names.contains(before)) << before;
  }
  // z's If reads no Const of the main graph: its branches keep their names.
  EXPECT_EQ(branch_of(optimized->graph, "z_node", "then_branch"), branch_of(imported->graph, "z_node", "then_branch"));

  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = 0.1f * static_cast<float>(i) - 0.4f;
  const Tensor x = Tensor::FromVector<float>(xs, TensorShape({2, 6}));
  auto weight = [](float scale, int row, int col) { return scale * static_cast<float>(((row * 8 + col) * 7) % 11 - 5); };
  // x . S[:, begin:begin+4] for S = scale * the AddWeight pattern, in double.
  auto product = [&](float scale, int begin) {
    std::vector<float> out(8);
    for (int r = 0; r < 2; ++r) {
      for (int j = 0; j < 4; ++j) {
        double sum = 0;
        for (int k = 0; k < 6; ++k) sum += double{xs[r * 6 + k]} * weight(scale, k, begin + j);
        out[r * 4 + j] = static_cast<float>(sum);
      }
    }
    return out;
  };
  for (bool c : {true, false}) {
    SCOPED_TRACE(c);
    for (const GraphDef* graph : {&imported->graph, &optimized->graph}) {
      auto session = NewSession(Plain());
      ASSERT_OK(session);
      ASSERT_OK((*session)->Create(*graph));
      std::vector<Tensor> out;
      ASSERT_OK((*session)->Run({{imported->inputs[0].tensor, x}, {imported->inputs[1].tensor, Tensor::Scalar<bool>(c)}},
                                {imported->outputs[0].tensor, imported->outputs[1].tensor}, {}, &out));
      const std::vector<float> want_y = product(0.5f, c ? 0 : 4), want_z = product(0.25f, c ? 0 : 2);
      for (int i = 0; i < 8; ++i) {
        EXPECT_NEAR(out[0].flat<float>()[i], want_y[i], 1e-5f) << i;
        EXPECT_NEAR(out[1].flat<float>()[i], want_z[i], 1e-5f) << i;
      }
    }
  }
}

// One Sluice-form function called by two If nodes with different constant arguments: each call
// gets its own copy (distinct names), folded to its own constant, and the shared original goes.
TEST(FunctionBodiesTest, EachCallSiteGetsItsOwnCopy) {
  GraphItem g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
    node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "three" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
    node { name: "if2" op: "StatelessIf" input: "p" input: "two"
           attr { key: "Tcond" value { type: DT_BOOL } } attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "then_branch" value { func { name: "square" } } }
           attr { key: "else_branch" value { func { name: "square" } } } }
    node { name: "if3" op: "StatelessIf" input: "p" input: "three"
           attr { key: "Tcond" value { type: DT_BOOL } } attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "then_branch" value { func { name: "square" } } }
           attr { key: "else_branch" value { func { name: "square" } } } }
    library { function {
      signature { name: "square" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "a" op: "_Arg" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index" value { i: 0 } } }
      node_def { name: "m" op: "Mul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
      node_def { name: "y" op: "_Retval" input: "m" attr { key: "T" value { type: DT_FLOAT } }
                 attr { key: "index" value { i: 0 } } }
    } }
  )", &g.graph));
  const GraphDef original = g.graph;
  g.inputs = {"p"};
  g.outputs = {"if2", "if3"};
  InferItemShapes(&g);
  ASSERT_OK(RunOptimizer(RewriterConfig(), &g));
  absl::flat_hash_set<std::string> names;
  for (const FunctionDef& f : g.graph.library().function()) {
    names.insert(f.signature().name());
    for (const NodeDef& n : f.node_def()) EXPECT_NE(n.op(), "Mul") << f.signature().name();
  }
  EXPECT_FALSE(names.contains("square"));
  absl::flat_hash_set<std::string> called;
  for (const NodeDef& n : g.graph.node()) {
    if (n.op() != "StatelessIf") continue;
    for (const char* attr : {"then_branch", "else_branch"}) called.insert(n.attr().at(attr).func().name());
  }
  EXPECT_EQ(called.size(), 2u);  // One copy per call site, shared by its two branches.
  for (const std::string& name : called) EXPECT_TRUE(names.contains(name)) << name;
  for (bool p : {true, false}) {
    for (const GraphDef* graph : {&original, static_cast<const GraphDef*>(&g.graph)}) {
      auto session = NewSession(Plain());
      ASSERT_OK(session);
      ASSERT_OK((*session)->Create(*graph));
      std::vector<Tensor> out;
      ASSERT_OK((*session)->Run({{"p", Tensor::Scalar<bool>(p)}}, {"if2", "if3"}, {}, &out));
      EXPECT_EQ(out[0].flat<float>()[0], 4.0f);
      EXPECT_EQ(out[1].flat<float>()[0], 9.0f);
    }
  }
}

// A hostile _Arg index (2^32, which an int cast would read as 0) is not specialized: the
// optimizer leaves the function alone and building the body fails naming the _Arg.
TEST(FunctionBodiesTest, AnArgIndexOutOfRangeIsLeftToFail) {
  GraphItem g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
    node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "if2" op: "StatelessIf" input: "p" input: "two"
           attr { key: "Tcond" value { type: DT_BOOL } } attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "then_branch" value { func { name: "square" } } }
           attr { key: "else_branch" value { func { name: "square" } } } }
    library { function {
      signature { name: "square" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "a" op: "_Arg" attr { key: "T" value { type: DT_FLOAT } }
                 attr { key: "index" value { i: 4294967296 } } }
      node_def { name: "m" op: "Mul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
      node_def { name: "y" op: "_Retval" input: "m" attr { key: "T" value { type: DT_FLOAT } }
                 attr { key: "index" value { i: 0 } } }
    } }
  )", &g.graph));
  g.inputs = {"p"};
  g.outputs = {"if2"};
  InferItemShapes(&g);
  ASSERT_OK(RunOptimizer(RewriterConfig(), &g));
  ASSERT_EQ(g.graph.library().function_size(), 1);
  EXPECT_EQ(g.graph.library().function(0).signature().name(), "square");
  auto session = NewSession(Plain());
  ASSERT_OK(session);
  absl::Status status = (*session)->Create(g.graph);
  std::vector<Tensor> out;
  if (status.ok()) status = (*session)->Run({{"p", Tensor::Scalar<bool>(true)}}, {"if2"}, {}, &out);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), ::testing::HasSubstr("index 4294967296, out of range")) << status;
}

}  // namespace
}  // namespace sluice
