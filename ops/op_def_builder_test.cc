#include "ops/op_def_builder.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

OpDef Build(const OpDefBuilder& b) {
  OpRegistrationData data;
  absl::Status s = b.Finalize(&data);
  EXPECT_OK(s);
  return data.op_def;
}

absl::Status BuildError(const OpDefBuilder& b) {
  OpRegistrationData data;
  return b.Finalize(&data);
}

TEST(OpDefBuilderTest, TypeAttrWithAllowedValuesAndDefault) {
  OpDef op = Build(OpDefBuilder("MatMulLike")
                       .Input("a: T")
                       .Input("b: T")
                       .Output("product: T")
                       .Attr("transpose_a: bool = false")
                       .Attr("T: {float, double} = DT_FLOAT"));
  ASSERT_EQ(op.attr_size(), 2);
  const auto& t = op.attr(1);
  EXPECT_EQ(t.name(), "T");
  EXPECT_EQ(t.type(), "type");
  EXPECT_EQ(t.default_value().type(), DT_FLOAT);
  ASSERT_EQ(t.allowed_values().list().type_size(), 2);
  EXPECT_EQ(t.allowed_values().list().type(1), DT_DOUBLE);
  EXPECT_EQ(op.attr(0).default_value().b(), false);
  EXPECT_EQ(op.input_arg(0).type_attr(), "T");
  EXPECT_EQ(op.output_arg(0).name(), "product");
}

TEST(OpDefBuilderTest, ListsNumbersAndMinimums) {
  OpDef op = Build(OpDefBuilder("Lists")
                       .Input("values: N * T")
                       .Input("others: Tlist")
                       .Input("fixed: int64")
                       .Output("out: float")
                       .Attr("N: int >= 2")
                       .Attr("T: type")
                       .Attr("Tlist: list(type) >= 0")
                       .Attr("strides: list(int) = [1, 2, 3]")
                       .Attr("mode: {'SAME', 'VALID'} = 'SAME'")
                       .Attr("alpha: float = 0.5")
                       .Attr("shape: shape = { unknown_rank: true }")
                       .Attr("dims: shape = [2, -1]"));
  EXPECT_EQ(op.input_arg(0).number_attr(), "N");
  EXPECT_EQ(op.input_arg(0).type_attr(), "T");
  EXPECT_EQ(op.input_arg(1).type_list_attr(), "Tlist");
  EXPECT_EQ(op.input_arg(2).type(), DT_INT64);
  EXPECT_EQ(op.output_arg(0).type(), DT_FLOAT);
  EXPECT_TRUE(op.attr(0).has_minimum());
  EXPECT_EQ(op.attr(0).minimum(), 2);
  EXPECT_EQ(op.attr(3).default_value().list().i_size(), 3);
  EXPECT_EQ(op.attr(4).type(), "string");
  EXPECT_EQ(op.attr(4).allowed_values().list().s(1), "VALID");
  EXPECT_EQ(op.attr(4).default_value().s(), "SAME");
  EXPECT_FLOAT_EQ(op.attr(5).default_value().f(), 0.5f);
  EXPECT_TRUE(op.attr(6).default_value().shape().unknown_rank());
  EXPECT_EQ(op.attr(7).default_value().shape().dim(1).size(), -1);
}

TEST(OpDefBuilderTest, RefAndShorthandTypeSets) {
  OpDef op = Build(OpDefBuilder("Assignish")
                       .Input("ref: Ref(T)")
                       .Output("out: T")
                       .Attr("T: numbertype"));
  EXPECT_TRUE(op.input_arg(0).is_ref());
  EXPECT_GT(op.attr(0).allowed_values().list().type_size(), 10);
}

TEST(OpDefBuilderTest, ErrorsNameTheOpAndTheSpec) {
  absl::Status s = BuildError(OpDefBuilder("Broken").Input("x: T").Attr("T: flaot"));
  EXPECT_THAT(s.message(), HasSubstr("REGISTER_OP(\"Broken\")"));
  EXPECT_THAT(s.message(), HasSubstr("Attr(\"T: flaot\")"));
  // The input refers to an attr that did not parse, so it is reported too.
  EXPECT_THAT(s.message(), HasSubstr("Input(\"x: T\")"));
}

TEST(OpDefBuilderTest, RejectsBadSpecs) {
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Input("X: float")).ok());           // Upper-case arg.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Input("x float")).ok());            // No colon.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Input("x: N * T").Attr("T: type")).ok());  // No N.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Input("x: N * T").Attr("N: float").Attr("T: type")).ok());
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Attr("T: {float} = DT_INT32")).ok());  // Default not allowed.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Attr("n: int >= 2 = 1")).ok());        // Default below min.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Attr("x: int").Attr("x: float")).ok());  // Duplicate.
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Attr("b: bool = maybe")).ok());
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Attr("f: float >= 1")).ok());
  EXPECT_FALSE(BuildError(OpDefBuilder("A").Output("y: s").Attr("s: string")).ok());
  EXPECT_FALSE(BuildError(OpDefBuilder("Bad Name")).ok());
}

}  // namespace
}  // namespace sluice
