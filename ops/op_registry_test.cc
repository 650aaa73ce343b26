#include "ops/op_registry.h"

#include "framework/graph.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(OpRegistryTest, EveryRegisteredOpFinalizes) {
  absl::Status s = OpRegistry::Global()->ProcessRegistrations();
  EXPECT_OK(s);
  auto names = OpRegistry::Global()->ListOpNames();
  for (const char* op : {"Placeholder", "Const", "Identity", "NoOp", "MatMul", "Add", "Sub",
                         "Mul", "Div", "Relu", "AddN", "_Send", "_Recv"}) {
    EXPECT_THAT(names, ::testing::Contains(op));
  }
}

TEST(OpRegistryTest, UnknownOpIsNotFound) {
  auto r = OpRegistry::Global()->LookUp("NoSuchOp");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("NoSuchOp"));
}

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  return def;
}

absl::Status BuildGraph(const std::string& text) {
  return Graph::FromGraphDef(Parse(text), *OpRegistry::Global()).status();
}

constexpr char kPlaceholderX[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
)";

TEST(NodeValidationTest, ValidGraphGetsDefaultsAndTypes) {
  auto g = Graph::FromGraphDef(Parse(std::string(kPlaceholderX) + R"(
    node { name: "y" op: "MatMul" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )"), *OpRegistry::Global());
  ASSERT_OK(g);
  Node* y = (*g)->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_TRUE(y->def().attr().contains("transpose_a"));  // Default filled.
  EXPECT_EQ(y->output_types()[0], DT_FLOAT);
  EXPECT_EQ((*g)->FindNode("x")->def().attr().at("shape").shape().unknown_rank(), true);
}

TEST(NodeValidationTest, UnknownAttrNamesTheNode) {
  absl::Status s = BuildGraph(R"(node { name: "x" op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "colour" value { i: 1 } } })");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'x'"));
  EXPECT_THAT(s.message(), HasSubstr("unknown attr 'colour'"));
}

TEST(NodeValidationTest, MissingAttrNamesTheNode) {
  absl::Status s = BuildGraph(R"(node { name: "x" op: "Placeholder" })");
  EXPECT_THAT(s.message(), HasSubstr("node 'x'"));
  EXPECT_THAT(s.message(), HasSubstr("missing attr 'dtype'"));
}

TEST(NodeValidationTest, WrongAttrTypeNamesTheNode) {
  absl::Status s = BuildGraph(R"(node { name: "x" op: "Placeholder" attr { key: "dtype" value { i: 3 } } })");
  EXPECT_THAT(s.message(), HasSubstr("node 'x'"));
  EXPECT_THAT(s.message(), HasSubstr("has type int, expected type"));
}

TEST(NodeValidationTest, DisallowedTypeValue) {
  absl::Status s = BuildGraph(std::string(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
    node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_STRING } } })"));
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
  EXPECT_THAT(s.message(), HasSubstr("not in the allowed list"));
}

TEST(NodeValidationTest, WrongInputCountNamesTheNode) {
  absl::Status s = BuildGraph(std::string(kPlaceholderX) + R"(
    node { name: "y" op: "MatMul" input: "x" attr { key: "T" value { type: DT_FLOAT } } })");
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
  EXPECT_THAT(s.message(), HasSubstr("expected 2 inputs but has 1"));
}

TEST(NodeValidationTest, EdgeTypeMismatch) {
  absl::Status s = BuildGraph(std::string(kPlaceholderX) + R"(
    node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_INT32 } } })");
  EXPECT_THAT(s.message(), HasSubstr("node 'y'"));
  EXPECT_THAT(s.message(), HasSubstr("was passed float"));
}

TEST(NodeValidationTest, MissingInputNodeOutputIndexCycleAndDuplicates) {
  EXPECT_THAT(BuildGraph(R"(node { name: "y" op: "Identity" input: "ghost"
      attr { key: "T" value { type: DT_FLOAT } } })").message(), HasSubstr("does not exist"));
  EXPECT_THAT(BuildGraph(std::string(kPlaceholderX) + R"(node { name: "y" op: "Identity"
      input: "x:3" attr { key: "T" value { type: DT_FLOAT } } })").message(),
              HasSubstr("which has 1 outputs"));
  EXPECT_THAT(BuildGraph(R"(
      node { name: "a" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "b" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } })").message(),
              HasSubstr("cycle"));
  EXPECT_THAT(BuildGraph(std::string(kPlaceholderX) + kPlaceholderX).message(),
              HasSubstr("duplicate node name 'x'"));
  EXPECT_THAT(BuildGraph(R"(node { name: "z" op: "Frobnicate" })").message(),
              HasSubstr("Op type not registered 'Frobnicate'"));
}

TEST(NodeValidationTest, InferAttrsFromInputTypes) {
  const OpDef& addn = (*OpRegistry::Global()->LookUp("AddN"))->op_def;
  NodeDef node;
  node.set_name("sum");
  node.set_op("AddN");
  ASSERT_OK(InferAttrsFromInputTypes(addn, {{DT_FLOAT, DT_FLOAT, DT_FLOAT}}, &node));
  EXPECT_EQ(node.attr().at("N").i(), 3);
  EXPECT_EQ(node.attr().at("T").type(), DT_FLOAT);

  NodeDef mixed;
  mixed.set_name("mixed");
  mixed.set_op("AddN");
  absl::Status s = InferAttrsFromInputTypes(addn, {{DT_FLOAT, DT_INT32}}, &mixed);
  EXPECT_THAT(s.message(), HasSubstr("inconsistent values for attr 'T'"));
}

}  // namespace
}  // namespace sluice
