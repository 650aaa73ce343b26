#include "frontend/onnx/importer.h"

#include <cmath>
#include <new>

#include "framework/status_matchers.h"
#include "frontend/onnx/converter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "master/session.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kDir[] = "tests/testdata/onnx/";

absl::Status ImportError(const std::string& file) {
  return ImportOnnxFile(kDir + file).status();
}

TEST(OnnxImporterTest, MalformedModelsAreRefusedByName) {
  absl::Status s = ImportError("bad_truncated.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("truncated or corrupt"));

  s = ImportError("bad_dtype.onnx");
  EXPECT_THAT(s.message(), AllOf(HasSubstr("initializer 'w'"), HasSubstr("element type 99")));

  s = ImportError("bad_short_raw_data.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("initializer 'w'"), HasSubstr("needs 16 bytes"), HasSubstr("has 8")));

  s = ImportError("bad_cycle.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("first"), HasSubstr("'q'")));

  s = ImportError("bad_orphan_input.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("reads_ghost"), HasSubstr("ghost")));

  s = ImportError("bad_unknown_op.onnx");
  EXPECT_THAT(s.message(), AllOf(HasSubstr("Frobnicate"), HasSubstr("mystery")));

  s = ImportError("bad_unknown_domain.onnx");
  EXPECT_THAT(s.message(), AllOf(HasSubstr("com.example"), HasSubstr("elsewhere")));

  s = ImportError("bad_newer_opset.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("opset 99"));

  EXPECT_EQ(ImportError("no_such_model.onnx").code(), absl::StatusCode::kNotFound);
}

// ONNX 1.17's opsets (to 22) and IR 10 import; a newer opset fails by the opset it needs and
// the newest Sluice reaches.
TEST(OnnxImporterTest, OpsetsThroughTwentyTwoImportAndNewerFailByName) {
  EXPECT_OK(ImportError("reduce_mean_opset18.onnx"));
  EXPECT_OK(ImportError("mlp_ir10_opset21.onnx"));
  absl::Status s = ImportError("bad_newer_opset.onnx");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("needs ai.onnx opset 99"), HasSubstr("up to 22")));
}

// The element types of IR 9 and 10 (FLOAT8*, INT4, UINT4) have Sluice dtypes.
TEST(OnnxImporterTest, NewElementTypesImport) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  auto* imp = model.add_opset_import();
  imp->set_domain("");
  imp->set_version(17);
  auto* g = model.mutable_graph();
  g->set_name("float8");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT8E4M3FN);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("x");
  n->add_output("y");
  *g->add_output() = *x;
  g->mutable_output(0)->set_name("y");
  auto imported = ImportOnnxModel(model);
  ASSERT_OK(imported);
  ASSERT_EQ(imported->inputs.size(), 1u);
  EXPECT_EQ(imported->inputs[0].dtype, DT_FLOAT8_E4M3FN);
  EXPECT_EQ(imported->outputs[0].dtype, DT_FLOAT8_E4M3FN);
}

TEST(OnnxImporterTest, NamesSurviveIntoTheGraphDef) {
  // The import translates and optimizes nothing: the master's optimizer fuses later.
  auto g = ImportOnnxFile(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(g);
  std::vector<std::string> names;
  for (const NodeDef& n : g->graph.node()) names.push_back(n.name());
  EXPECT_THAT(names, ::testing::IsSupersetOf({"x", "w", "b", "matmul", "add", "relu"}));
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0].name, "x");
  EXPECT_EQ(g->inputs[0].shape.DebugString(), "[?,2]");
  EXPECT_EQ(g->outputs[0].name, "y");
  // What ONNX shape inference knows travels as each node's _output_shapes.
  for (const NodeDef& n : g->graph.node()) {
    if (n.name() != "matmul") continue;
    ASSERT_TRUE(n.attr().contains("_output_shapes"));
    ASSERT_EQ(n.attr().at("_output_shapes").list().shape_size(), 1);
    EXPECT_EQ(PartialShape::FromProto(n.attr().at("_output_shapes").list().shape(0)).rank(), 2);
  }
}

std::vector<Tensor> RunGraph(const OnnxGraph& g, std::vector<std::pair<std::string, Tensor>> feeds) {
  auto session = NewSession({});
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g.graph));
  std::vector<std::string> fetches;
  for (const auto& o : g.outputs) fetches.push_back(o.tensor);
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(feeds, fetches, {}, &out);
  EXPECT_OK(s);
  return out;
}

TEST(OnnxImporterTest, MlpRuns) {
  auto g = ImportOnnxFile(std::string(kDir) + "mlp.onnx");
  ASSERT_OK(g);
  // x = [1, 2]: relu([1*1 + 2*2 + 0.5, 1*-1 + 2*1 - 10]) = [5.5, 0].
  auto out = RunGraph(*g, {{g->inputs[0].tensor, Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 0.0f);
}

// An INT4 initializer of an odd count arrives packed (the last high nibble unused) and is
// unpacked on import: Cast-21 to INT8 reads -8, 7, -1.
TEST(OnnxImporterTest, PackedInt4InitializerImportsAndRuns) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  auto* imp = model.add_opset_import();
  imp->set_domain("");
  imp->set_version(21);
  auto* g = model.mutable_graph();
  g->set_name("int4");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::INT4);
  w->add_dims(3);
  w->set_raw_data(std::string("\x78\x0f", 2));
  auto* n = g->add_node();
  n->set_op_type("Cast");
  n->add_input("w");
  n->add_output("y");
  auto* to = n->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT8);
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT8);
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  auto imported = ImportOnnxModel(model);
  ASSERT_OK(imported);
  auto out = RunGraph(*imported, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flat<int8_t>()[0], -8);
  EXPECT_EQ(out[0].flat<int8_t>()[1], 7);
  EXPECT_EQ(out[0].flat<int8_t>()[2], -1);

  w->set_raw_data(std::string("\x78", 1));  // One byte for three elements.
  absl::Status s = ImportOnnxModel(model).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'w'"));
}

TEST(OnnxImporterTest, IfBranchesBecomeLibraryFunctionsReadingOuterValues) {
  auto g = ImportOnnxFile(std::string(kDir) + "if.onnx");
  ASSERT_OK(g);
  EXPECT_EQ(g->graph.library().function_size(), 2);
  Tensor x = Tensor::FromVector<float>({3, -4}, TensorShape({2}));
  auto then_out = RunGraph(*g, {{g->inputs[0].tensor, Tensor::Scalar<bool>(true)}, {g->inputs[1].tensor, x}});
  EXPECT_FLOAT_EQ(then_out[0].flat<float>()[0], 4.0f);   // x + 1
  EXPECT_FLOAT_EQ(then_out[0].flat<float>()[1], -3.0f);
  auto else_out = RunGraph(*g, {{g->inputs[0].tensor, Tensor::Scalar<bool>(false)}, {g->inputs[1].tensor, x}});
  EXPECT_FLOAT_EQ(else_out[0].flat<float>()[0], 6.0f);   // x * 2
  EXPECT_FLOAT_EQ(else_out[0].flat<float>()[1], -8.0f);
}

// A converter that throws, as one sizing a vector from model data may.
absl::Status ThrowingConverter(OnnxNodeContext*) { throw std::bad_alloc(); }
REGISTER_ONNX_CONVERTER("com.sluice.test", "Throw", 1, 1000, ThrowingConverter);

TEST(OnnxImporterTest, AThrowingConverterFailsItsNode) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* test_domain = m.add_opset_import();
  test_domain->set_domain("com.sluice.test");
  test_domain->set_version(1);
  auto* node = m.mutable_graph()->add_node();
  node->set_name("thrower");
  node->set_op_type("Throw");
  node->set_domain("com.sluice.test");
  node->add_output("y");
  OnnxImportOptions options;
  options.check = false;
  options.infer_shapes = false;
  absl::Status s = ImportOnnxModel(m, options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("'thrower'")) << s;
}

// Older versions gave pad values and Clip bounds as float attributes; for an integer input
// the value must fit the type (a cast of 3.4e38 to int32 is undefined behaviour).
TEST(ImporterTest, FloatAttributesBecomeScalarsOnlyWhenTheyFitTheType) {
  SL_ASSERT_OK_AND_ASSIGN(Tensor t, ScalarFromFloatAttr(DT_INT32, -7.0, "min"));
  EXPECT_EQ(t.scalar<int32_t>(), -7);
  SL_ASSERT_OK_AND_ASSIGN(t, ScalarFromFloatAttr(DT_UINT8, 255.0, "value"));
  EXPECT_EQ(t.scalar<uint8_t>(), 255);
  SL_ASSERT_OK_AND_ASSIGN(t, ScalarFromFloatAttr(DT_FLOAT, 3.4e38, "max"));
  EXPECT_FLOAT_EQ(t.scalar<float>(), 3.4e38f);
  for (double bad : {3.4e38, -3e9, 256.0, 0.5, std::nan("")}) {
    DataType dt = bad == 256.0 ? DT_UINT8 : DT_INT32;
    absl::Status s = ScalarFromFloatAttr(dt, bad, "value").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("attribute value"), HasSubstr("not a value of"))) << s;
  }
  EXPECT_EQ(ScalarFromFloatAttr(DT_INT64, 9.3e18, "value").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ScalarFromFloatAttr(DT_STRING, 1.0, "value").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
