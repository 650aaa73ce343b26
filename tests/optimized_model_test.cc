// The optimized ONNX model (optimized_model.h): written from an import, optimized or not, it
// loads back into the same graph and runs to the same results; a malformed one is refused by
// the node and the attribute at fault.
#include "frontend/onnx/optimized_model.h"

#include <cmath>
#include <random>

#include "framework/status_matchers.h"
#include "frontend/onnx/model_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "optimizer/meta_optimizer.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kDir[] = "tests/testdata/onnx/";

std::vector<Tensor> RunGraph(const OnnxGraph& g, const std::vector<Tensor>& inputs) {
  auto session = NewSession({});
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g.graph));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(g.inputs[i].tensor, inputs[i]);
  std::vector<std::string> fetches;
  for (const auto& o : g.outputs) fetches.push_back(o.tensor);
  std::vector<Tensor> out;
  EXPECT_OK((*session)->Run(feeds, fetches, {}, &out));
  return out;
}

// `file` imported, optimized (unless `optimize` is false) and wrapped.
onnx::ModelProto Wrapped(const std::string& file, bool optimize, OnnxGraph* imported = nullptr) {
  auto model = LoadOnnxModel(kDir + file);
  EXPECT_OK(model);
  const onnx::ModelProto header = ModelHeader(*model);
  auto g = ImportOnnxModel(*model);
  EXPECT_OK(g);
  if (imported != nullptr) *imported = *g;
  if (optimize) {
    const OnnxGraphEnds ends = EndsOf(*g);
    EXPECT_OK(OptimizeGraphDef(RewriterConfig(), ends.inputs, ends.feed_shapes, ends.outputs, &g->graph));
  }
  auto wrapped = WrapOptimizedGraph(header, *g);
  EXPECT_OK(wrapped);
  return *wrapped;
}

// Through bytes, as a file would take it.
absl::StatusOr<OnnxGraph> Reload(const onnx::ModelProto& model) {
  SL_ASSIGN_OR_RETURN(onnx::ModelProto parsed, ParseOnnxModel(model.SerializeAsString(), ""));
  return ImportOnnxModel(std::move(parsed));
}

Tensor RandomTensor(const TensorShape& shape, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(shape.num_elements());
  for (float& x : v) x = dist(rng);
  return Tensor::FromVector<float>(v, shape);
}

TEST(OptimizedModelTest, ConvBatchNormReluLoadsFoldedAndRunsAsTheOriginal) {
  OnnxGraph original;
  onnx::ModelProto wrapped = Wrapped("conv_bn_relu.onnx", /*optimize=*/true, &original);
  // The original's interface and metadata, and the domain it needs.
  EXPECT_EQ(wrapped.graph().input_size(), 1);
  EXPECT_EQ(wrapped.graph().input(0).name(), "x");
  EXPECT_EQ(wrapped.graph().output(0).name(), "y");
  bool imports_sluice = false;
  for (const auto& imp : wrapped.opset_import()) imports_sluice = imports_sluice || imp.domain() == "ai.sluice";
  EXPECT_TRUE(imports_sluice);
  ASSERT_EQ(wrapped.graph().node_size(), 1);
  EXPECT_EQ(wrapped.graph().node(0).domain(), "ai.sluice");

  auto reloaded = Reload(wrapped);
  ASSERT_OK(reloaded);
  bool has_batch_norm = false, has_dead_neg = false;
  for (const NodeDef& n : reloaded->graph.node()) {
    has_batch_norm = has_batch_norm || n.op() == "BatchNormalization";
    has_dead_neg = has_dead_neg || n.op() == "Neg";
  }
  EXPECT_FALSE(has_batch_norm) << "folded into the convolution when written";
  EXPECT_FALSE(has_dead_neg) << "dropped as dead when written";
  const Tensor x = RandomTensor(TensorShape({1, 2, 4, 4}), 1);
  auto want = RunGraph(original, {x});
  auto got = RunGraph(*reloaded, {x});
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  for (int64_t i = 0; i < want[0].NumElements(); ++i) {
    EXPECT_NEAR(got[0].flat<float>()[i], want[0].flat<float>()[i], 1e-5) << i;
  }
}

// The If's branches are functions of the GraphDef's library: they travel with it.
TEST(OptimizedModelTest, BranchesTravelInTheLibrary) {
  onnx::ModelProto wrapped = Wrapped("if.onnx", /*optimize=*/false);
  auto reloaded = Reload(wrapped);
  ASSERT_OK(reloaded);
  EXPECT_GE(reloaded->graph.library().function_size(), 2);
  const Tensor x = Tensor::FromVector<float>({3, -1}, TensorShape({2}));
  auto then_out = RunGraph(*reloaded, {Tensor::Scalar<bool>(true), x});
  auto else_out = RunGraph(*reloaded, {Tensor::Scalar<bool>(false), x});
  ASSERT_EQ(then_out.size(), 1u);
  ASSERT_EQ(else_out.size(), 1u);
  EXPECT_FLOAT_EQ(then_out[0].flat<float>()[0], 4);
  EXPECT_FLOAT_EQ(then_out[0].flat<float>()[1], 0);
  EXPECT_FLOAT_EQ(else_out[0].flat<float>()[0], 6);
  EXPECT_FLOAT_EQ(else_out[0].flat<float>()[1], -2);
}

onnx::AttributeProto* Attr(onnx::ModelProto* model, const std::string& name) {
  for (auto& a : *model->mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

TEST(OptimizedModelTest, MalformedWrappersAreRefusedByNodeAndAttribute) {
  const onnx::ModelProto good = Wrapped("mlp.onnx", /*optimize=*/true);
  ASSERT_OK(Reload(good));

  onnx::ModelProto m = good;
  Attr(&m, "graph")->set_s("\x0a\xff\xff\xff\xff\x0f not a graph");
  absl::Status s = Reload(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("sluice_graph"), HasSubstr("not a serialized GraphDef")));

  m = good;
  Attr(&m, "inputs")->add_strings("x");
  s = Reload(m).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("sluice_graph"), HasSubstr("2 placeholders for 1 inputs")));

  m = good;
  GraphDef def;
  ASSERT_TRUE(def.ParseFromString(Attr(&m, "graph")->s()));
  std::string not_placeholder;
  for (const NodeDef& n : def.node()) {
    if (n.op() != "Placeholder") not_placeholder = n.name();
  }
  ASSERT_FALSE(not_placeholder.empty());
  Attr(&m, "inputs")->set_strings(0, not_placeholder);
  s = Reload(m).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'" + not_placeholder + "'"), HasSubstr("not a Placeholder")));

  m = good;
  Attr(&m, "inputs")->set_strings(0, "nowhere");
  s = Reload(m).status();
  EXPECT_THAT(s.message(), HasSubstr("no placeholder 'nowhere'"));

  m = good;
  Attr(&m, "outputs")->set_strings(0, "nowhere:3");
  s = Reload(m).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'nowhere:3'"), HasSubstr("does not have")));

  m = good;
  Attr(&m, "outputs")->set_strings(0, "^" + not_placeholder);
  EXPECT_FALSE(Reload(m).ok());

  // The graph input's declared type and the placeholder's disagree.
  m = good;
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  s = Reload(m).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("placeholder 'x'"), HasSubstr("int64")));

  // A node of the graph whose op does not exist.
  m = good;
  ASSERT_TRUE(def.ParseFromString(Attr(&m, "graph")->s()));
  def.mutable_node(def.node_size() - 1)->set_op("NoSuchOp");
  Attr(&m, "graph")->set_s(def.SerializeAsString());
  s = Reload(m).status();
  EXPECT_THAT(s.message(), HasSubstr("NoSuchOp"));

  // Two nodes of one name.
  m = good;
  ASSERT_TRUE(def.ParseFromString(Attr(&m, "graph")->s()));
  *def.add_node() = def.node(0);
  Attr(&m, "graph")->set_s(def.SerializeAsString());
  s = Reload(m).status();
  EXPECT_THAT(s.message(), HasSubstr("named twice"));

  // Inside an If branch.
  m = good;
  onnx::GraphProto branch;
  branch.set_name("b");
  *branch.add_node() = m.graph().node(0);
  *branch.add_output() = m.graph().output(0);
  onnx::NodeProto* if_node = m.mutable_graph()->mutable_node(0);
  if_node->Clear();
  if_node->set_op_type("If");
  if_node->set_name("branch");
  if_node->add_input("c");
  if_node->add_output("z");
  m.mutable_graph()->mutable_output(0)->set_name("z");
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = if_node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch;
  }
  onnx::ValueInfoProto* c = m.mutable_graph()->add_input();
  c->set_name("c");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  c->mutable_type()->mutable_tensor_type()->mutable_shape();
  s = Reload(m).status();
  EXPECT_THAT(s.message(), HasSubstr("main graph"));
}

}  // namespace
}  // namespace sluice
