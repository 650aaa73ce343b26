// ONNX 1.17 as built from source (@onnx117//:onnx): opsets to 22 in the schema registry, the
// checker and shape inference on an IR 10 / opset 21 model, and the version converter across
// the opset 18 boundary. Links ONNX 1.17 only; Debian's libonnx 1.12 would clash with it.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

namespace sluice {
namespace {

onnx::ValueInfoProto FloatValue(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto value;
  value.set_name(name);
  auto* tensor = value.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return value;
}

// A model of the given versions; the caller adds nodes and outputs.
onnx::ModelProto EmptyModel(int64_t ir_version, int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("smoke");
  return model;
}

std::vector<int64_t> Dims(const onnx::TypeProto& type) {
  std::vector<int64_t> dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return dims;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

TEST(Onnx117Test, VersionsAreOnnx117s) {
  EXPECT_EQ(onnx::IR_VERSION, 10);
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  ASSERT_TRUE(ranges.count(""));
  EXPECT_EQ(ranges.at("").second, 22);
}

TEST(Onnx117Test, SchemasOfNewOpsets) {
  // Opset 18 gave Split the num_outputs attribute.
  const onnx::OpSchema* split18 = onnx::OpSchemaRegistry::Schema("Split", 18);
  ASSERT_NE(split18, nullptr);
  EXPECT_EQ(split18->SinceVersion(), 18);
  EXPECT_TRUE(split18->attributes().count("num_outputs"));
  const onnx::OpSchema* split17 = onnx::OpSchemaRegistry::Schema("Split", 17);
  ASSERT_NE(split17, nullptr);
  EXPECT_EQ(split17->SinceVersion(), 13);
  EXPECT_FALSE(split17->attributes().count("num_outputs"));

  // Gelu is new in opset 20.
  const onnx::OpSchema* gelu = onnx::OpSchemaRegistry::Schema("Gelu", 20);
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->SinceVersion(), 20);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Gelu", 19), nullptr);

  // Opset 22 revised the random generators, among others.
  const onnx::OpSchema* random = onnx::OpSchemaRegistry::Schema("RandomNormal", 22);
  ASSERT_NE(random, nullptr);
  EXPECT_EQ(random->SinceVersion(), 22);
}

// X[2,3,4] -> Gelu -> Transpose(perm 2,0,1) -> Y, at IR 10 and opset 21.
onnx::ModelProto GeluTransposeModel(int64_t opset) {
  onnx::ModelProto model = EmptyModel(10, opset);
  auto* graph = model.mutable_graph();
  *graph->add_input() = FloatValue("X", {2, 3, 4});
  // Y's rank only (the checker wants a shape); shape inference finds the dims.
  onnx::ValueInfoProto y;
  y.set_name("Y");
  auto* y_type = y.mutable_type()->mutable_tensor_type();
  y_type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 3; ++i) y_type->mutable_shape()->add_dim();
  *graph->add_output() = y;

  auto* gelu = graph->add_node();
  gelu->set_op_type("Gelu");
  gelu->add_input("X");
  gelu->add_output("G");
  auto* approximate = gelu->add_attribute();
  approximate->set_name("approximate");
  approximate->set_type(onnx::AttributeProto::STRING);
  approximate->set_s("tanh");

  auto* transpose = graph->add_node();
  transpose->set_op_type("Transpose");
  transpose->add_input("G");
  transpose->add_output("Y");
  auto* perm = transpose->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {2, 0, 1}) perm->add_ints(p);
  return model;
}

TEST(Onnx117Test, CheckerAcceptsIr10Opset21) {
  onnx::ModelProto model = GeluTransposeModel(21);
  EXPECT_NO_THROW(onnx::checker::check_model(model, /*full_check=*/true));

  // Gelu has no schema before opset 20.
  EXPECT_THROW(onnx::checker::check_model(GeluTransposeModel(19)), onnx::checker::ValidationError);
}

TEST(Onnx117Test, ShapeInferenceInfersOutputShape) {
  onnx::ModelProto model = GeluTransposeModel(21);
  onnx::ShapeInferenceOptions options;
  options.check_type = true;
  options.error_mode = 1;  // Throw on inference errors instead of skipping the node.

  const auto& graph = model.graph();
  EXPECT_EQ(Dims(graph.output(0).type()), (std::vector<int64_t>{-1, -1, -1}));
  ASSERT_NO_THROW(onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options));

  ASSERT_EQ(graph.value_info_size(), 1);
  EXPECT_EQ(graph.value_info(0).name(), "G");
  EXPECT_EQ(Dims(graph.value_info(0).type()), (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(graph.output_size(), 1);
  EXPECT_EQ(Dims(graph.output(0).type()), (std::vector<int64_t>{4, 2, 3}));
}

TEST(Onnx117Test, VersionConverterOpset17To18) {
  // ReduceMean's axes turn from an attribute into an input at opset 18 (ReduceSum's did at 13),
  // and Split gains num_outputs.
  onnx::ModelProto model = EmptyModel(8, 17);
  auto* graph = model.mutable_graph();
  *graph->add_input() = FloatValue("X", {2, 6});
  *graph->add_output() = FloatValue("M", {2, 1});
  *graph->add_output() = FloatValue("A", {2, 3});
  *graph->add_output() = FloatValue("B", {2, 3});

  auto* mean = graph->add_node();
  mean->set_op_type("ReduceMean");
  mean->add_input("X");
  mean->add_output("M");
  auto* axes = mean->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(1);

  auto* split = graph->add_node();
  split->set_op_type("Split");
  split->add_input("X");
  split->add_output("A");
  split->add_output("B");
  auto* axis = split->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  ASSERT_NO_THROW(onnx::checker::check_model(model));

  onnx::ModelProto converted;
  ASSERT_NO_THROW(converted = onnx::version_conversion::ConvertVersion(model, 18));
  ASSERT_EQ(converted.opset_import_size(), 1);
  EXPECT_EQ(converted.opset_import(0).version(), 18);
  EXPECT_NO_THROW(onnx::checker::check_model(converted));

  const onnx::NodeProto* new_mean = nullptr;
  const onnx::NodeProto* new_split = nullptr;
  const onnx::NodeProto* constant = nullptr;
  for (const auto& node : converted.graph().node()) {
    if (node.op_type() == "ReduceMean") new_mean = &node;
    if (node.op_type() == "Split") new_split = &node;
    if (node.op_type() == "Constant") constant = &node;
  }
  ASSERT_NE(new_mean, nullptr);
  ASSERT_NE(constant, nullptr);
  ASSERT_EQ(new_mean->input_size(), 2);
  EXPECT_EQ(new_mean->input(1), constant->output(0));
  EXPECT_EQ(FindAttribute(*new_mean, "axes"), nullptr);
  const onnx::AttributeProto* value = FindAttribute(*constant, "value");
  ASSERT_NE(value, nullptr);
  ASSERT_EQ(value->t().int64_data_size(), 1);
  EXPECT_EQ(value->t().int64_data(0), 1);

  ASSERT_NE(new_split, nullptr);
  const onnx::AttributeProto* num_outputs = FindAttribute(*new_split, "num_outputs");
  ASSERT_NE(num_outputs, nullptr);
  EXPECT_EQ(num_outputs->i(), 2);
}

}  // namespace
}  // namespace sluice
