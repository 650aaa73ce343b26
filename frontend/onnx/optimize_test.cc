// The import-time rewrites of optimize.h: which Conv -> activation patterns fuse, which do
// not, and that a fused graph computes what the unfused one does.
#include "frontend/onnx/optimize.h"

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "master/session.h"

namespace sluice {
namespace {

// y = ACTIVATION(Conv(x, w, b)) for x [1, 4, 6, 6] and a 3x3 convolution with padding 1,
// built by `add_activation`, which adds nodes reading "c" and ending in "y".
onnx::ModelProto ConvModel(const std::function<void(onnx::GraphProto*)>& add_activation) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("conv_activation");
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  auto add_initializer = [&](const std::string& name, std::vector<int64_t> dims) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(2 * value(rng));
  };
  add_initializer("w", {4, 4, 3, 3});
  add_initializer("b", {4});
  auto set_type = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  set_type(g->add_input(), "x", {1, 4, 6, 6});
  onnx::NodeProto* conv = g->add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  for (const char* in : {"x", "w", "b"}) conv->add_input(in);
  conv->add_output("c");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  add_activation(g);
  set_type(g->add_output(), "y", {1, 4, 6, 6});
  return m;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> inputs,
                         const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(output + "_node");
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

void AddFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::vector<float> RunModel(const OnnxGraph& g) {
  auto session = NewSession({});
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g.graph));
  Tensor x(DT_FLOAT, TensorShape({1, 4, 6, 6}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::sin(0.7f * i) * 3;
  std::vector<Tensor> out;
  EXPECT_OK((*session)->Run({{g.inputs[0].tensor, x}}, {g.outputs[0].tensor}, {}, &out));
  if (out.size() != 1) return {};
  return std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end());
}

// The Conv's fused activation ("" when none) and how many nodes of `op` remain.
std::string FusedActivation(const OnnxGraph& g) {
  for (const NodeDef& n : g.graph.node()) {
    if (n.op() == "Onnx>Conv") return n.attr().contains("activation") ? n.attr().at("activation").s() : "";
  }
  return "<no Conv>";
}
int Count(const OnnxGraph& g, const std::string& op) {
  int count = 0;
  for (const NodeDef& n : g.graph.node()) count += n.op() == op;
  return count;
}

struct FusionCase {
  std::string name, want_activation;
  std::function<void(onnx::GraphProto*)> build;
};

TEST(FuseConvActivationsTest, FusedGraphsComputeWhatUnfusedOnesDo) {
  const std::vector<FusionCase> cases = {
      {"Relu", "Relu", [](onnx::GraphProto* g) { AddNode(g, "Relu", {"c"}, "y"); }},
      {"LeakyRelu", "LeakyRelu", [](onnx::GraphProto* g) { AddFloatAttr(AddNode(g, "LeakyRelu", {"c"}, "y"), "alpha", 0.3f); }},
      {"HardSwish", "HardSwish", [](onnx::GraphProto* g) { AddNode(g, "HardSwish", {"c"}, "y"); }},
      {"HardSigmoid", "HardSigmoid",
       [](onnx::GraphProto* g) {
         onnx::NodeProto* n = AddNode(g, "HardSigmoid", {"c"}, "y");
         AddFloatAttr(n, "alpha", 0.25f);
         AddFloatAttr(n, "beta", 0.4f);
       }},
      {"Sigmoid", "Sigmoid", [](onnx::GraphProto* g) { AddNode(g, "Sigmoid", {"c"}, "y"); }},
      {"Swish", "Swish",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "y");
       }},
      {"Swish, operands swapped", "Swish",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"s", "c"}, "y");
       }},
      // Not fusable: the Conv's output has another reader, or the Mul is not of the same tensor.
      {"Relu, Conv read twice", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Relu", {"c"}, "r");
         AddNode(g, "Add", {"r", "c"}, "y");
       }},
      {"Mul of another tensor's Sigmoid", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"x"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "y");
       }},
      {"Sigmoid read elsewhere too", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "m");
         AddNode(g, "Add", {"m", "s"}, "y");
       }},
  };
  for (const FusionCase& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxImportOptions plain;
    plain.optimize = false;
    auto unfused = ImportOnnxModel(ConvModel(c.build), plain);
    auto fused = ImportOnnxModel(ConvModel(c.build));
    ASSERT_OK(unfused);
    ASSERT_OK(fused);
    EXPECT_EQ(FusedActivation(*fused), c.want_activation);
    if (c.want_activation == "Swish") {
      EXPECT_EQ(Count(*fused, "Sigmoid"), 0);
    }
    const std::vector<float> want = RunModel(*unfused), got = RunModel(*fused);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got.size(), 4u * 36u);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i])) << "at " << i;
  }
}

// The activation's output keeps its name: a graph that fetches it gets the fused result.
TEST(FuseConvActivationsTest, AFusedActivationIsStillFetchableByName) {
  auto build = [](onnx::GraphProto* g) {
    AddNode(g, "Sigmoid", {"c"}, "s");
    AddNode(g, "Mul", {"c", "s"}, "y");
  };
  auto fused = ImportOnnxModel(ConvModel(build));
  ASSERT_OK(fused);
  EXPECT_EQ(fused->outputs[0].name, "y");
  EXPECT_EQ(RunModel(*fused).size(), 4u * 36u);
}

// A squeeze-and-excitation block between convolutions, as in MobileNetV3 and EfficientNet:
// x -> Conv -> c; c -> GlobalAveragePool -> Conv(Relu) -> Conv -> Sigmoid -> s; Mul(c, s) ->
// Conv -> y. Every tensor between the first and last Conv stays NHWC.
onnx::ModelProto SqueezeExcitationModel() {
  onnx::ModelProto m = ConvModel([](onnx::GraphProto*) {});
  onnx::GraphProto* g = m.mutable_graph();
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-1, 1);
  auto add_conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t cin,
                      int64_t cout) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name + "_w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {cout, cin, int64_t{1}, int64_t{1}}) t->add_dims(d);
    for (int64_t i = 0; i < cout * cin; ++i) t->add_float_data(value(rng));
    AddNode(g, "Conv", {in, name + "_w"}, out);
  };
  AddNode(g, "GlobalAveragePool", {"c"}, "pooled");
  add_conv("squeeze", "pooled", "squeezed", 4, 2);
  AddNode(g, "Relu", {"squeezed"}, "squeezed_relu");
  add_conv("excite", "squeezed_relu", "excited", 2, 4);
  AddNode(g, "Sigmoid", {"excited"}, "scale");
  AddNode(g, "Mul", {"c", "scale"}, "scaled");
  add_conv("project", "scaled", "y", 4, 4);
  return m;
}

TEST(UseNhwcBetweenConvsTest, SqueezeAndExcitationBlocksStayNhwc) {
  OnnxImportOptions plain;
  plain.optimize = false;
  auto unfused = ImportOnnxModel(SqueezeExcitationModel(), plain);
  auto optimized = ImportOnnxModel(SqueezeExcitationModel());
  ASSERT_OK(unfused);
  ASSERT_OK(optimized);
  EXPECT_EQ(Count(*optimized, "MulNhwc"), 1);
  EXPECT_EQ(Count(*optimized, "GlobalAveragePoolNhwc"), 1);
  for (const NodeDef& n : optimized->graph.node()) {
    if (n.name() == "conv") {
      EXPECT_EQ(n.attr().at("output_layout").s(), "NHWC");
    }
    if (n.name() == "y_node") {
      EXPECT_EQ(n.attr().at("input_layout").s(), "NHWC");
    }
  }
  const std::vector<float> want = RunModel(*unfused), got = RunModel(*optimized);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), 4u * 36u);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i])) << "at " << i;
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, std::vector<float> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

// Conv -> BatchNormalization (-> Relu): the normalization folds into the Conv's weights and
// bias, the Relu then fuses, and the results are the unfolded graph's.
TEST(FoldBatchNormsIntoConvsTest, FoldedGraphsComputeWhatUnfoldedOnesDo) {
  auto bn = [](onnx::GraphProto* g, const std::string& out, bool training) {
    AddInitializer(g, "gamma", {1.5f, -0.5f, 2.0f, 0.25f});
    AddInitializer(g, "beta", {0.1f, 0.2f, -0.3f, 0.0f});
    AddInitializer(g, "mean", {0.3f, -0.2f, 0.0f, 1.0f});
    AddInitializer(g, "var", {0.5f, 2.0f, 1.0f, 0.01f});
    onnx::NodeProto* n = AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, out);
    AddFloatAttr(n, "epsilon", 1e-3f);
    if (training) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name("training_mode");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(1);
    }
  };
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    bool folds;
    std::string activation;
  };
  const std::vector<Case> cases = {
      {"BatchNormalization", [&](onnx::GraphProto* g) { bn(g, "y", false); }, true, ""},
      {"BatchNormalization then Relu",
       [&](onnx::GraphProto* g) {
         bn(g, "n", false);
         AddNode(g, "Relu", {"n"}, "y");
       },
       true, "Relu"},
      {"Conv read twice",
       [&](onnx::GraphProto* g) {
         bn(g, "n", false);
         AddNode(g, "Add", {"n", "c"}, "y");
       },
       false, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxImportOptions plain;
    plain.optimize = false;
    auto unfolded = ImportOnnxModel(ConvModel(c.build), plain);
    auto folded = ImportOnnxModel(ConvModel(c.build));
    ASSERT_OK(unfolded);
    ASSERT_OK(folded);
    EXPECT_EQ(Count(*folded, "Onnx>BatchNormalization"), c.folds ? 0 : 1);
    EXPECT_EQ(FusedActivation(*folded), c.activation);
    const std::vector<float> want = RunModel(*unfolded), got = RunModel(*folded);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got.size(), 4u * 36u);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f + 1e-5f * std::fabs(want[i])) << "at " << i;
  }
}

// A BatchNormalization in training mode computes batch statistics: it is not folded.
TEST(FoldBatchNormsIntoConvsTest, TrainingModeIsNotFolded) {
  auto build = [](onnx::GraphProto* g) {
    AddInitializer(g, "gamma", {1, 1, 1, 1});
    AddInitializer(g, "beta", {0, 0, 0, 0});
    AddInitializer(g, "mean", {0, 0, 0, 0});
    AddInitializer(g, "var", {1, 1, 1, 1});
    onnx::NodeProto* n = AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, "y");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("training_mode");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
  };
  auto folded = ImportOnnxModel(ConvModel(build));
  ASSERT_OK(folded);
  EXPECT_EQ(Count(*folded, "Onnx>BatchNormalization"), 1);
}

// The pipeline on tests/testdata/onnx/conv_bn_relu.onnx: Conv -> BatchNormalization -> Relu
// plus a Neg that nothing reads. Each pass reports its rewrites, a pass can be turned off by
// name, and the optimized graph computes what the imported one does.
TEST(OptimizerPipelineTest, ReportsEachPassAndKeepsResults) {
  const std::string path = "tests/testdata/onnx/conv_bn_relu.onnx";
  OnnxImportOptions plain;
  plain.optimize = false;
  SL_ASSERT_OK_AND_ASSIGN(OnnxGraph imported, ImportOnnxFile(path, plain));
  EXPECT_TRUE(imported.optimizations.empty());
  EXPECT_EQ(Count(imported, "Onnx>BatchNormalization"), 1);
  EXPECT_EQ(Count(imported, "Neg"), 1);

  SL_ASSERT_OK_AND_ASSIGN(OnnxGraph optimized, ImportOnnxFile(path));
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
    auto session = NewSession({});
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

  OnnxImportOptions no_fold;
  no_fold.disabled_passes = {"fold_batch_norms"};
  SL_ASSERT_OK_AND_ASSIGN(OnnxGraph partial, ImportOnnxFile(path, no_fold));
  EXPECT_EQ(Count(partial, "Onnx>BatchNormalization"), 1);
  EXPECT_EQ(partial.optimizations.size(), passes.size() - 1);

  OnnxImportOptions bogus;
  bogus.disabled_passes = {"fold_everything"};
  absl::Status s = ImportOnnxFile(path, bogus).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), ::testing::AllOf(::testing::HasSubstr("fold_everything"),
                                                         ::testing::HasSubstr("fold_batch_norms")));
}

// Dead-node removal keeps what outputs need, the inputs (even unread ones, so feeding them
// still works) and stateful nodes.
TEST(OptimizerPipelineTest, DeadNodeRemovalKeepsInputsAndStatefulNodes) {
  OnnxGraph g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "unread" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "dead1" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "dead2" op: "Neg" input: "dead1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "rand" op: "RandomUniform" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { list { i: 2 } } } }
  )", &g.graph));
  g.inputs.push_back({});
  g.inputs.back().tensor = "x:0";
  g.inputs.push_back({});
  g.inputs.back().tensor = "unread:0";
  g.outputs.push_back({});
  g.outputs.back().tensor = "y:0";
  SL_ASSERT_OK_AND_ASSIGN(int removed, RemoveDeadNodes(&g));
  EXPECT_EQ(removed, 2);
  std::vector<std::string> names;
  for (const NodeDef& n : g.graph.node()) names.push_back(n.name());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("x", "unread", "y", "rand"));
}

}  // namespace
}  // namespace sluice
