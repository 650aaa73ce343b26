#include "framework/node_def_util.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

template <typename Proto>
Proto Parse(const std::string& text) {
  Proto p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

// values: N tensors of type T; mode: a string from a set, "fast" by default; axis >= 0.
const OpDef& ConcatLike() {
  static const OpDef* op = new OpDef(Parse<OpDef>(R"(
    name: "Pack"
    input_arg { name: "values" type_attr: "T" number_attr: "N" }
    input_arg { name: "axis" type: DT_INT32 }
    output_arg { name: "out" type_attr: "T" }
    output_arg { name: "count" type: DT_INT64 }
    attr { name: "N" type: "int" has_minimum: true minimum: 1 }
    attr { name: "T" type: "type" allowed_values { list { type: DT_FLOAT type: DT_INT32 } } }
    attr { name: "mode" type: "string" default_value { s: "fast" }
           allowed_values { list { s: "fast" s: "exact" } } })"));
  return *op;
}

NodeDef PackNode(const std::string& extra = "") {
  NodeDef n = Parse<NodeDef>(R"(name: "p" op: "Pack" input: "a" input: "b" input: "axis"
      attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } )" + extra);
  AddDefaultsToNodeDef(ConcatLike(), &n);
  return n;
}

TEST(TensorNameTest, ParsesDataAndControlInputs) {
  SL_ASSERT_OK_AND_ASSIGN(TensorId plain, ParseTensorName("x"));
  EXPECT_EQ(plain.node, "x");
  EXPECT_EQ(plain.index, 0);
  SL_ASSERT_OK_AND_ASSIGN(TensorId second, ParseTensorName("scope/x:2"));
  EXPECT_EQ(second.node, "scope/x");
  EXPECT_EQ(second.index, 2);
  SL_ASSERT_OK_AND_ASSIGN(TensorId control, ParseTensorName("^x"));
  EXPECT_EQ(control.node, "x");
  EXPECT_EQ(control.index, kControlSlot);
  EXPECT_EQ(plain.ToString(), "x");
  EXPECT_EQ(second.ToString(), "scope/x:2");
  EXPECT_EQ(control.ToString(), "^x");
}

TEST(TensorNameTest, RefusesEmptyNamesAndBadIndices) {
  for (const char* bad : {"", "^", "x:", "x:y", ":1", "x:-1"}) {
    EXPECT_EQ(ParseTensorName(bad).status().code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
}

TEST(NodeDefTest, DefaultsFillOnlyMissingAttrs) {
  NodeDef n = PackNode();
  EXPECT_EQ(n.attr().at("mode").s(), "fast");
  NodeDef exact = PackNode(R"(attr { key: "mode" value { s: "exact" } })");
  EXPECT_EQ(exact.attr().at("mode").s(), "exact");
  ASSERT_OK(ValidateNodeDef(n, ConcatLike()));
}

TEST(NodeDefTest, TypesFollowTheAttrs) {
  DataTypeVector in, out;
  ASSERT_OK(InOutTypesForNode(PackNode(), ConcatLike(), &in, &out));
  EXPECT_EQ(in, (DataTypeVector{DT_FLOAT, DT_FLOAT, DT_INT32}));
  EXPECT_EQ(out, (DataTypeVector{DT_FLOAT, DT_INT64}));
  int outputs = 0;
  ASSERT_OK(NumOutputsForNode(PackNode(), ConcatLike(), &outputs));
  EXPECT_EQ(outputs, 2);
}

// Each broken NodeDef is INVALID_ARGUMENT naming the node, the op and what is wrong.
TEST(NodeDefTest, ValidationErrorsNameTheNodeAndTheProblem) {
  const std::vector<std::pair<NodeDef, std::string>> cases = {
      {PackNode(R"(attr { key: "colour" value { s: "red" } })"), "unknown attr 'colour'"},
      {PackNode(R"(attr { key: "T" value { type: DT_STRING } })"), "value string for attr 'T' is not in the allowed list"},
      {PackNode(R"(attr { key: "mode" value { s: "sloppy" } })"), "value \"sloppy\" for attr 'mode' is not in the allowed list"},
      {PackNode(R"(attr { key: "N" value { s: "two" } })"), "attr 'N' has type string, expected int"},
      {PackNode(R"(attr { key: "N" value { i: 0 } })"), "attr 'N' has value 0, less than the minimum 1"},
      {PackNode(R"(input: "c")"), "expected 3 inputs but has 4"},
      {PackNode(R"(input: "^c" input: "d")"), "data input 'd' after control inputs"},
  };
  for (const auto& [node, want] : cases) {
    absl::Status s = ValidateNodeDef(node, ConcatLike());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << node.ShortDebugString();
    EXPECT_THAT(s.message(), HasSubstr("node 'p' (op 'Pack')")) << s;
    EXPECT_THAT(s.message(), HasSubstr(want)) << s;
  }
  NodeDef missing = PackNode();
  missing.mutable_attr()->erase("T");
  EXPECT_THAT(ValidateNodeDef(missing, ConcatLike()).message(), HasSubstr("missing attr 'T'"));
  // Internal attrs ("_"-prefixed) and control inputs after data ones are fine.
  ASSERT_OK(ValidateNodeDef(PackNode(R"(attr { key: "_class" value { s: "loc:@a" } } input: "^c")"), ConcatLike()));
}

TEST(NodeDefTest, AttrsAreInferredFromInputTypesAndMustAgree) {
  NodeDef n = Parse<NodeDef>(R"(name: "p" op: "Pack")");
  ASSERT_OK(InferAttrsFromInputTypes(ConcatLike(), {{DT_INT32, DT_INT32, DT_INT32}, {DT_INT32}}, &n));
  EXPECT_EQ(n.attr().at("N").i(), 3);
  EXPECT_EQ(n.attr().at("T").type(), DT_INT32);

  NodeDef mixed = Parse<NodeDef>(R"(name: "p" op: "Pack")");
  absl::Status s = InferAttrsFromInputTypes(ConcatLike(), {{DT_FLOAT, DT_INT32}, {DT_INT32}}, &mixed);
  EXPECT_THAT(s.message(), HasSubstr("inconsistent values for attr 'T'"));

  NodeDef wrong_axis = Parse<NodeDef>(R"(name: "p" op: "Pack")");
  s = InferAttrsFromInputTypes(ConcatLike(), {{DT_FLOAT}, {DT_INT64}}, &wrong_axis);
  EXPECT_THAT(s.message(), HasSubstr("input 'axis' expects int32 but got int64"));
}

}  // namespace
}  // namespace sluice
