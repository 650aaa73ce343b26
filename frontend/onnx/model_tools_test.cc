#include "frontend/onnx/model_tools.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/onnx_tensor.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "master/session.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kDir[] = "tests/testdata/onnx/";

// A scratch folder of its own for each test.
fs::path TempDir(const std::string& name) {
  const char* root = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(root ? root : "/tmp") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// dims: "N" for a symbolic dim, digits for a fixed one.
onnx::ValueInfoProto FloatInfo(const std::string& name, std::vector<std::string> dims) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    if (std::isdigit(d[0])) {
      shape->add_dim()->set_dim_value(std::stoll(d));
    } else {
      shape->add_dim()->set_dim_param(d);
    }
  }
  return vi;
}

// Values 0, 0.25, 0.5, ... scaled by `scale`; raw bytes, or float_data with `typed`.
onnx::TensorProto FloatTensor(const std::string& name, std::vector<int64_t> dims, float scale,
                              bool typed = false) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = scale * static_cast<float>(i % 17) * 0.25f;
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  if (typed) {
    for (float v : values) t.add_float_data(v);
  } else {
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  }
  return t;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                         std::vector<std::string> outs) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + outs[0]);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

onnx::ModelProto NewModel(int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("model_tools_test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// x, z: [N, 4]. a = x @ w; c = a + b; y = relu(c); m = c * z.
onnx::ModelProto Branchy() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  *g->add_input() = FloatInfo("x", {"N", "4"});
  *g->add_input() = FloatInfo("z", {"N", "4"});
  *g->add_initializer() = FloatTensor("w", {4, 4}, 1);
  *g->add_initializer() = FloatTensor("b", {4}, -1);
  AddNode(g, "MatMul", {"x", "w"}, {"a"});
  AddNode(g, "Add", {"a", "b"}, {"c"});
  AddNode(g, "Relu", {"c"}, {"y"});
  AddNode(g, "Mul", {"c", "z"}, {"m"});
  *g->add_output() = FloatInfo("y", {"N", "4"});
  *g->add_output() = FloatInfo("m", {"N", "4"});
  return m;
}

// y = relu(x @ w + b) + constant, with w = 32x32 (4096 bytes, raw), b = 32 floats (128 bytes)
// and a Constant of 300 floats in float_data (1200 bytes once raw).
onnx::ModelProto WithBigTensors() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  *g->add_input() = FloatInfo("x", {"N", "32"});
  *g->add_initializer() = FloatTensor("layer/0.weight", {32, 32}, 0.1f);
  *g->add_initializer() = FloatTensor("layer/0.bias", {32}, -0.5f);
  AddNode(g, "MatMul", {"x", "layer/0.weight"}, {"xw"});
  AddNode(g, "Add", {"xw", "layer/0.bias"}, {"xwb"});
  AddNode(g, "Relu", {"xwb"}, {"r"});
  onnx::NodeProto* c = AddNode(g, "Constant", {}, {"k"});
  auto* attr = c->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = FloatTensor("", {10, 30}, 2, /*typed=*/true);
  AddNode(g, "Reshape", {"k", "shape"}, {"k2"});
  onnx::TensorProto shape;
  shape.set_name("shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(2);
  shape.add_int64_data(-1);
  shape.add_int64_data(30);
  *g->add_initializer() = shape;
  AddNode(g, "ReduceSum", {"k2"}, {"ks"})->add_attribute()->set_name("keepdims");
  g->mutable_node(g->node_size() - 1)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  g->mutable_node(g->node_size() - 1)->mutable_attribute(0)->set_i(0);
  AddNode(g, "Add", {"r", "ks"}, {"y"});
  *g->add_output() = FloatInfo("y", {"N", "32"});
  return m;
}

std::vector<Tensor> RunModel(const onnx::ModelProto& model, const Tensor& x) {
  auto g = ImportOnnxModel(model);
  EXPECT_OK(g);
  if (!g.ok()) return {};
  auto session = NewSession({});
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g->graph));
  std::vector<std::string> fetches;
  for (const auto& o : g->outputs) fetches.push_back(o.tensor);
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{g->inputs[0].tensor, x}}, fetches, {}, &out);
  EXPECT_OK(s);
  return out;
}

// Same name, type, dims and bytes (the loader marks loaded tensors' data_location DEFAULT
// explicitly, so whole messages differ). Keeps failure messages short.
::testing::AssertionResult SameTensor(const onnx::TensorProto& got, const onnx::TensorProto& want) {
  onnx::TensorProto a = got, b = want;
  a.clear_data_location();
  b.clear_data_location();
  if (a.SerializeAsString() == b.SerializeAsString()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "tensor '" << got.name() << "' (" << got.raw_data().size()
                                       << " raw bytes, location " << got.data_location() << ") differs from '"
                                       << want.name() << "' (" << want.raw_data().size() << " raw bytes)";
}

std::string ExternalValue(const onnx::TensorProto& t, const std::string& key) {
  for (const auto& kv : t.external_data()) {
    if (kv.key() == key) return kv.value();
  }
  return "";
}

std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list) {
  std::vector<std::string> names;
  for (const auto& vi : list) names.push_back(vi.name());
  return names;
}

std::string ShapeString(const onnx::ValueInfoProto& vi) {
  std::string s;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    if (!s.empty()) s += ",";
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return s;
}

TEST(CheckOnnxModelTest, PassesGoodModelsAndQuotesTheChecker) {
  auto mlp = LoadOnnxModel(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(mlp);
  EXPECT_OK(CheckOnnxModel(*mlp));
  EXPECT_OK(CheckOnnxModel(*mlp, /*full=*/true));

  auto unknown = LoadOnnxModel(std::string(kDir) + "bad_unknown_op.onnx");
  ASSERT_OK(unknown);
  absl::Status s = CheckOnnxModel(*unknown);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("ONNX checker"), HasSubstr("Frobnicate")));

  auto cycle = LoadOnnxModel(std::string(kDir) + "bad_cycle.onnx");
  ASSERT_OK(cycle);
  EXPECT_THAT(CheckOnnxModel(*cycle).message(), HasSubstr("topologically sorted"));
}

TEST(CheckOnnxModelTest, AcceptsIrVersion10) {
  auto ir10 = LoadOnnxModel(std::string(kDir) + "mlp_ir10_opset21.onnx");
  ASSERT_OK(ir10);
  EXPECT_EQ(ir10->ir_version(), 10);
  EXPECT_OK(CheckOnnxModel(*ir10));
  EXPECT_OK(CheckOnnxModel(*ir10, /*full=*/true));
}

int DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& imp : m.opset_import()) {
    if (imp.domain().empty()) return static_cast<int>(imp.version());
  }
  return -1;
}

// Opset 18's ReduceMean (axes an input) back to opset 17's (axes an attribute), which then
// imports and computes the same means.
TEST(ConvertOnnxVersionTest, Opset18ToOpset17Runs) {
  auto m18 = LoadOnnxModel(std::string(kDir) + "reduce_mean_opset18.onnx");
  ASSERT_OK(m18);
  auto m17 = ConvertOnnxVersion(*m18, 17);
  ASSERT_OK(m17);
  EXPECT_EQ(DefaultOpset(*m17), 17);
  ASSERT_EQ(m17->graph().node_size(), 1);
  const onnx::NodeProto& mean = m17->graph().node(0);
  EXPECT_EQ(mean.input_size(), 1);
  bool has_axes = false;
  for (const auto& a : mean.attribute()) has_axes |= a.name() == "axes";
  EXPECT_TRUE(has_axes);
  EXPECT_OK(CheckOnnxModel(*m17, /*full=*/true));

  std::vector<Tensor> out = RunModel(*m17, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()), ElementsAre(2, 5));

  // And up again: opset 18 once more, the axes an input (a Constant node's output).
  auto back = ConvertOnnxVersion(*m17, 18);
  ASSERT_OK(back);
  EXPECT_EQ(DefaultOpset(*back), 18);
  const onnx::NodeProto& last = back->graph().node(back->graph().node_size() - 1);
  EXPECT_EQ(last.op_type(), "ReduceMean");
  EXPECT_EQ(last.input_size(), 2);
}

TEST(ConvertOnnxVersionTest, ErrorsSayWhy) {
  auto mlp = LoadOnnxModel(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(mlp);
  absl::Status s = ConvertOnnxVersion(*mlp, 23).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("opset 23"), HasSubstr("1 to 22")));
  EXPECT_EQ(ConvertOnnxVersion(*mlp, 0).status().code(), absl::StatusCode::kInvalidArgument);
  auto unknown = LoadOnnxModel(std::string(kDir) + "bad_unknown_op.onnx");
  ASSERT_OK(unknown);
  EXPECT_THAT(ConvertOnnxVersion(*unknown, 17).status().message(), HasSubstr("Frobnicate"));
}

TEST(CheckOnnxModelTest, FullCheckAddsStrictShapeInference) {
  // Add of float and int64: the checker alone does not look at types; inference does.
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  *g->add_input() = FloatInfo("x", {"2"});
  onnx::ValueInfoProto i = FloatInfo("i", {"2"});
  i.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  *g->add_input() = i;
  AddNode(g, "Add", {"x", "i"}, {"y"});
  *g->add_output() = FloatInfo("y", {"2"});
  EXPECT_OK(CheckOnnxModel(m));
  absl::Status s = CheckOnnxModel(m, /*full=*/true);
  EXPECT_THAT(s.message(), HasSubstr("ONNX shape inference"));
}

TEST(ExtractOnnxModelTest, KeepsWhatTheOutputsNeed) {
  auto sub = ExtractOnnxModel(Branchy(), {"a"}, {"y"});
  ASSERT_OK(sub);
  const auto& g = sub->graph();
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(0).op_type(), "Add");
  EXPECT_EQ(g.node(1).op_type(), "Relu");
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).name(), "b");
  EXPECT_THAT(Names(g.input()), ElementsAre("a"));
  EXPECT_THAT(Names(g.output()), ElementsAre("y"));
  // "a" is an intermediate: its type and shape come from shape inference.
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(ShapeString(g.input(0)), "N,4");
  EXPECT_THAT(Names(g.value_info()), ElementsAre("c"));
  EXPECT_EQ(sub->opset_import(0).version(), 13);

  // Two outputs, inputs in the order given, an unused input kept.
  auto both = ExtractOnnxModel(Branchy(), {"z", "c", "x"}, {"m", "y"});
  ASSERT_OK(both);
  EXPECT_EQ(both->graph().node_size(), 2);
  EXPECT_EQ(both->graph().initializer_size(), 0);
  EXPECT_THAT(Names(both->graph().input()), ElementsAre("z", "c", "x"));
  EXPECT_THAT(Names(both->graph().output()), ElementsAre("m", "y"));

  // The whole model, from its own inputs.
  auto whole = ExtractOnnxModel(Branchy(), {"x", "z"}, {"y", "m"});
  ASSERT_OK(whole);
  EXPECT_EQ(whole->graph().node_size(), 4);
  EXPECT_EQ(whole->graph().initializer_size(), 2);
}

TEST(ExtractOnnxModelTest, ExtractedModelComputesTheSameValues) {
  onnx::ModelProto m = Branchy();
  auto sub = ExtractOnnxModel(m, {"x"}, {"y"});
  ASSERT_OK(sub);
  Tensor x = Tensor::FromVector<float>({1, -2, 3, 0.5f, 0, 1, -1, 2}, TensorShape({2, 4}));
  // The full model needs z too; feed it through a second extraction of the same output.
  auto full = ImportOnnxModel(m);
  ASSERT_OK(full);
  auto session = NewSession({});
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(full->graph));
  std::vector<Tensor> want;
  ASSERT_TRUE((*session)->Run({{full->inputs[0].tensor, x}, {full->inputs[1].tensor, x}},
                              {full->outputs[0].tensor}, {}, &want).ok());
  std::vector<Tensor> got = RunModel(*sub, x);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].NumElements(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[0].flat<float>()[i], want[0].flat<float>()[i]) << i;
}

TEST(ExtractOnnxModelTest, RefusesOutputsThatNeedMoreThanTheInputs) {
  absl::Status s = ExtractOnnxModel(Branchy(), {"x"}, {"m"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("output 'm'"), HasSubstr("'z'"), HasSubstr("not among the given inputs")));

  s = ExtractOnnxModel(Branchy(), {}, {"y"}).status();
  EXPECT_THAT(s.message(), HasSubstr("'x'"));

  s = ExtractOnnxModel(Branchy(), {"a"}, {"nope"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("output 'nope'"), HasSubstr("no tensor")));
  s = ExtractOnnxModel(Branchy(), {"ghost"}, {"y"}).status();
  EXPECT_THAT(s.message(), HasSubstr("input 'ghost'"));
  s = ExtractOnnxModel(Branchy(), {"a", "a"}, {"y"}).status();
  EXPECT_THAT(s.message(), HasSubstr("given twice"));
  s = ExtractOnnxModel(Branchy(), {"a"}, {}).status();
  EXPECT_THAT(s.message(), HasSubstr("no outputs"));

  // A tensor no node computes (a dangling read) is named too.
  onnx::ModelProto m = Branchy();
  m.mutable_graph()->mutable_node(1)->set_input(1, "missing_bias");
  s = ExtractOnnxModel(m, {"a"}, {"y"}).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'missing_bias'"), HasSubstr("no node computes")));
}

TEST(ExtractOnnxModelTest, SubgraphCapturesCountAsReads) {
  auto model = LoadOnnxModel(std::string(kDir) + "if.onnx");
  ASSERT_OK(model);
  // Both branches read the outer x, so the If needs it although x is not among its inputs.
  absl::Status s = ExtractOnnxModel(*model, {"c"}, {"y"}).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("output 'y'"), HasSubstr("'x'")));
  auto sub = ExtractOnnxModel(*model, {"c", "x"}, {"y"});
  ASSERT_OK(sub);
  EXPECT_EQ(sub->graph().node_size(), 1);
}

TEST(ParseOnnxDimsTest, FixedSymbolicUnknownAndErrors) {
  auto dims = ParseOnnxDims("1, N,-1,?,224,batch_size");
  ASSERT_OK(dims);
  ASSERT_EQ(dims->size(), 6u);
  EXPECT_EQ((*dims)[0].value, 1);
  EXPECT_EQ((*dims)[1].param, "N");
  EXPECT_EQ((*dims)[2].value, -1);
  EXPECT_TRUE((*dims)[2].param.empty());
  EXPECT_TRUE((*dims)[3].param.empty());
  EXPECT_EQ((*dims)[4].value, 224);
  EXPECT_EQ((*dims)[5].param, "batch_size");
  EXPECT_TRUE(ParseOnnxDims("")->empty());
  EXPECT_THAT(ParseOnnxDims("1,-2").status().message(), HasSubstr("bad dim '-2'"));
  EXPECT_THAT(ParseOnnxDims("1,,2").status().message(), HasSubstr("bad dim ''"));
  EXPECT_THAT(ParseOnnxDims("3.5").status().message(), HasSubstr("bad dim '3.5'"));
}

TEST(SetOnnxDimsTest, FixesDimsAndReinfersShapes) {
  auto model = LoadOnnxModel(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(model);
  ASSERT_OK(SetOnnxDims({{"x", *ParseOnnxDims("3,2")}}, {}, &*model));
  EXPECT_EQ(ShapeString(model->graph().input(0)), "3,2");
  // The output was [N,2]; inference gives the new batch.
  EXPECT_EQ(ShapeString(model->graph().output(0)), "3,2");
  EXPECT_GT(model->graph().value_info_size(), 0);
  Tensor x = Tensor::FromVector<float>({1, 2, 3, -1, 0, 10}, TensorShape({3, 2}));
  auto out = RunModel(*model, x);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape().DebugString(), "[3,2]");
  EXPECT_FLOAT_EQ(out[0].flat<float>()[4], 20.5f);  // relu(0*1 + 10*2 + 0.5)

  // Symbolic and unknown dims; an unknown one gets a fresh name.
  ASSERT_OK(SetOnnxDims({{"x", *ParseOnnxDims("-1,2")}}, {{"y", *ParseOnnxDims("batch,2")}}, &*model));
  EXPECT_EQ(ShapeString(model->graph().input(0)), "x_0,2");
  EXPECT_EQ(ShapeString(model->graph().output(0)), "batch,2");
}

TEST(SetOnnxDimsTest, ErrorsNameTheTensor) {
  auto model = LoadOnnxModel(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(model);
  const std::string before = model->SerializeAsString();
  absl::Status s = SetOnnxDims({{"x", *ParseOnnxDims("1,3,2")}}, {}, &*model);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("input 'x'"), HasSubstr("rank 2"), HasSubstr("3 dims")));
  s = SetOnnxDims({}, {{"y", *ParseOnnxDims("4")}}, &*model);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("output 'y'"), HasSubstr("rank 2")));
  s = SetOnnxDims({{"w2", *ParseOnnxDims("4")}}, {}, &*model);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("no input named 'w2'"), HasSubstr("x")));
  // x's second dim feeds a 2x2 MatMul: 3 contradicts it.
  s = SetOnnxDims({{"x", *ParseOnnxDims("1,3")}}, {}, &*model);
  EXPECT_THAT(s.message(), HasSubstr("do not fit the model"));
  // An output shape that contradicts what the inputs give.
  s = SetOnnxDims({{"x", *ParseOnnxDims("3,2")}}, {{"y", *ParseOnnxDims("4,2")}}, &*model);
  EXPECT_THAT(s.message(), HasSubstr("do not fit the model"));
  EXPECT_TRUE(model->SerializeAsString() == before) << "a failed SetOnnxDims leaves the model alone";
}

TEST(ExternalizeTest, OneFileAlignedRoundTrip) {
  fs::path dir = TempDir("one_file");
  onnx::ModelProto model = WithBigTensors();
  ASSERT_OK(CheckOnnxModel(model));
  auto summary = SaveOnnxModelExternal(model, (dir / "m.onnx").string(), {});
  ASSERT_OK(summary);
  EXPECT_EQ(summary->tensors, 2);  // The weight and the Constant; the bias is under 1024 bytes.
  EXPECT_EQ(summary->bytes, 4096 + 1200);
  EXPECT_THAT(summary->files, ElementsAre("m.onnx.data"));
  EXPECT_EQ(fs::file_size(dir / "m.onnx.data"), 4096u + 1200u);

  // What the file says: the weight at 0, the Constant at the next 4096 boundary.
  onnx::ModelProto stored;
  {
    std::ifstream in(dir / "m.onnx", std::ios::binary);
    ASSERT_TRUE(stored.ParseFromIstream(&in));
  }
  const onnx::TensorProto& w = stored.graph().initializer(0);
  EXPECT_EQ(w.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(w.has_raw_data());
  EXPECT_EQ(ExternalValue(w, "location"), "m.onnx.data");
  EXPECT_EQ(ExternalValue(w, "offset"), "0");
  EXPECT_EQ(ExternalValue(w, "length"), "4096");
  EXPECT_NE(stored.graph().initializer(1).data_location(), onnx::TensorProto::EXTERNAL);
  const onnx::TensorProto& k = stored.graph().node(3).attribute(0).t();
  EXPECT_EQ(ExternalValue(k, "offset"), "4096");
  EXPECT_EQ(ExternalValue(k, "length"), "1200");

  // Loading it back gives the same tensors (the Constant now as raw bytes of the same values).
  auto back = LoadOnnxModel((dir / "m.onnx").string());
  ASSERT_OK(back);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(SameTensor(back->graph().initializer(i), model.graph().initializer(i)));
  auto want_k = TensorFromOnnx(model.graph().node(3).attribute(0).t());
  auto got_k = TensorFromOnnx(back->graph().node(3).attribute(0).t());
  ASSERT_TRUE(want_k.ok() && got_k.ok());
  ASSERT_EQ(got_k->NumElements(), 300);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(got_k->flat<float>()[i], want_k->flat<float>()[i]);

  // Internalized again: one self-contained file with the same tensors, and the same outputs
  // from all three forms of the model.
  ASSERT_OK(SaveOnnxModel(*back, (dir / "inline.onnx").string()));
  fs::remove(dir / "m.onnx.data");  // Proves inline.onnx needs no data file.
  auto inline_model = LoadOnnxModel((dir / "inline.onnx").string());
  ASSERT_OK(inline_model);
  EXPECT_TRUE(inline_model->SerializeAsString() == back->SerializeAsString());
  std::vector<float> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = 0.1f * static_cast<float>(i % 9) - 0.3f;
  Tensor x = Tensor::FromVector<float>(xs, TensorShape({2, 32}));
  std::vector<Tensor> want = RunModel(model, x), got = RunModel(*inline_model, x), via = RunModel(*back, x);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(via.size(), 1u);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(got[0].flat<float>()[i], want[0].flat<float>()[i]) << i;
    ASSERT_EQ(via[0].flat<float>()[i], want[0].flat<float>()[i]) << i;
  }
}

TEST(ExternalizeTest, FilePerTensorAndThresholds) {
  fs::path dir = TempDir("per_tensor");
  onnx::ModelProto model = WithBigTensors();
  // A second weight whose name sanitizes to the first one's file name.
  *model.mutable_graph()->add_initializer() = FloatTensor("layer_0.weight", {16, 16}, 3);
  ExternalizeOptions options;
  options.file_per_tensor = true;
  options.threshold = 100;
  auto summary = SaveOnnxModelExternal(model, (dir / "sub" / "m.onnx").string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->tensors, 4);
  EXPECT_THAT(summary->files, ElementsAre("layer_0.weight", "layer_0.bias", "layer_0.weight.1", "tensor_"));
  for (const auto& f : summary->files) EXPECT_TRUE(fs::exists(dir / "sub" / f)) << f;
  auto back = LoadOnnxModel((dir / "sub" / "m.onnx").string());
  ASSERT_OK(back);
  for (int i = 0; i < model.graph().initializer_size(); ++i) {
    if (model.graph().initializer(i).has_raw_data()) {
      EXPECT_TRUE(SameTensor(back->graph().initializer(i), model.graph().initializer(i)));
    }
  }

  // A threshold over every tensor moves nothing and writes no data file.
  options = {};
  options.threshold = 1 << 20;
  summary = SaveOnnxModelExternal(model, (dir / "small.onnx").string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->tensors, 0);
  EXPECT_FALSE(fs::exists(dir / "small.onnx.data"));
}

TEST(ExternalizeTest, RefusesLocationsOutsideTheFolder) {
  fs::path dir = TempDir("refusals");
  ExternalizeOptions options;
  options.location = "../escape.data";
  EXPECT_THAT(SaveOnnxModelExternal(WithBigTensors(), (dir / "m.onnx").string(), options).status().message(),
              HasSubstr("leaves the model's folder"));
  options.location = (dir / "abs.data").string();
  EXPECT_THAT(SaveOnnxModelExternal(WithBigTensors(), (dir / "m.onnx").string(), options).status().message(),
              HasSubstr("is absolute"));
  options.location = "m.onnx";
  EXPECT_THAT(SaveOnnxModelExternal(WithBigTensors(), (dir / "m.onnx").string(), options).status().message(),
              HasSubstr("the model file itself"));
  // A symbolic link in the way would write somewhere else.
  fs::path target = TempDir("refusals_target") / "victim";
  std::ofstream(target) << "keep me";
  fs::create_symlink(target, dir / "link.data");
  options.location = "link.data";
  EXPECT_THAT(SaveOnnxModelExternal(WithBigTensors(), (dir / "m.onnx").string(), options).status().message(),
              HasSubstr("symbolic link"));
  std::ifstream in(target);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "keep me");
  options = {};
  options.threshold = -1;
  EXPECT_THAT(SaveOnnxModelExternal(WithBigTensors(), (dir / "m.onnx").string(), options).status().message(),
              HasSubstr("negative"));

  // A model whose tensors are still external cannot be re-externalized without its data.
  options = {};
  ASSERT_OK(SaveOnnxModelExternal(WithBigTensors(), (dir / "ok.onnx").string(), options));
  onnx::ModelProto stored;
  std::ifstream model_in(dir / "ok.onnx", std::ios::binary);
  ASSERT_TRUE(stored.ParseFromIstream(&model_in));
  EXPECT_THAT(SaveOnnxModelExternal(stored, (dir / "again.onnx").string(), options).status().message(),
              HasSubstr("already has external data"));
}

}  // namespace
}  // namespace sluice
