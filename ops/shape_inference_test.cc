#include "ops/shape_inference.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

PartialShape S(std::initializer_list<int64_t> dims) { return PartialShape(std::vector<int64_t>(dims)); }

TEST(BroadcastShapesTest, FollowsNumpyRules) {
  struct Case {
    PartialShape a, b, want;
  };
  const std::vector<Case> cases = {
      {S({2, 3}), S({2, 3}), S({2, 3})},
      {S({2, 3}), S({3}), S({2, 3})},         // Missing leading dims are 1.
      {S({2, 1}), S({1, 4}), S({2, 4})},      // 1 stretches both ways.
      {PartialShape::Scalar(), S({5}), S({5})},
      {S({4, 1, 3}), S({2, 1}), S({4, 2, 3})},
      {S({0, 3}), S({1, 3}), S({0, 3})},      // An empty dim against 1 stays empty.
      // Unknown dims: against 1 they stay unknown; against a known dim they take it.
      {S({-1, 3}), S({4, 1}), S({4, 3})},
      {S({-1}), S({1}), S({-1})},
      {S({-1}), S({-1}), S({-1})},
      {S({2, -1}), S({-1, 7}), S({2, 7})},
  };
  for (const Case& c : cases) {
    SL_ASSERT_OK_AND_ASSIGN(PartialShape ab, BroadcastShapes(c.a, c.b));
    EXPECT_EQ(ab, c.want) << c.a.DebugString() << " * " << c.b.DebugString() << " gave " << ab.DebugString();
    SL_ASSERT_OK_AND_ASSIGN(PartialShape ba, BroadcastShapes(c.b, c.a));
    EXPECT_EQ(ba, c.want) << "swapped: " << ba.DebugString();
  }
}

TEST(BroadcastShapesTest, UnknownRankGivesUnknownRank) {
  SL_ASSERT_OK_AND_ASSIGN(PartialShape s, BroadcastShapes(PartialShape(), S({2, 3})));
  EXPECT_TRUE(s.unknown_rank());
  SL_ASSERT_OK_AND_ASSIGN(s, BroadcastShapes(S({2}), PartialShape()));
  EXPECT_TRUE(s.unknown_rank());
}

TEST(BroadcastShapesTest, DisagreeingKnownDimsAreAnErrorShowingBothShapes) {
  auto s = BroadcastShapes(S({2, 3}), S({4, 3}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("[2,3] and [4,3]"));
  EXPECT_FALSE(BroadcastShapes(S({3}), S({0})).ok());
}

class ShapeFnTest : public ::testing::Test {
 protected:
  ShapeFnTest() {
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"(name: "add1" op: "Add" attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } })",
        &node_));
    op_def_.set_name("Add");
  }
  InferenceContext Context(std::vector<PartialShape> inputs, int outputs) {
    return InferenceContext(node_, op_def_, std::move(inputs), {}, outputs);
  }
  NodeDef node_;
  OpDef op_def_;
};

TEST_F(ShapeFnTest, BroadcastBinaryShapesOutputZero) {
  InferenceContext c = Context({S({-1, 1, 3}), S({5, 1})}, 1);
  ASSERT_OK(shape_fn::BroadcastBinary(&c));
  EXPECT_EQ(c.output(0), S({-1, 5, 3}));
}

TEST_F(ShapeFnTest, BroadcastBinaryErrorsNameTheNodeAndOp) {
  InferenceContext c = Context({S({2}), S({3})}, 1);
  absl::Status s = shape_fn::BroadcastBinary(&c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add1' (op 'Add')"));
  EXPECT_THAT(s.message(), HasSubstr("[2] and [3]"));
}

TEST_F(ShapeFnTest, BroadcastAllFoldsEveryInput) {
  InferenceContext three = Context({S({4, 1, 1}), S({1, 5, 1}), S({-1, 1, 6})}, 1);
  ASSERT_OK(shape_fn::BroadcastAll(&three));
  EXPECT_EQ(three.output(0), S({4, 5, 6}));

  InferenceContext one = Context({S({-1, 2})}, 1);
  ASSERT_OK(shape_fn::BroadcastAll(&one));
  EXPECT_EQ(one.output(0), S({-1, 2}));

  InferenceContext scalars = Context({PartialShape::Scalar(), S({3}), PartialShape::Scalar()}, 1);
  ASSERT_OK(shape_fn::BroadcastAll(&scalars));
  EXPECT_EQ(scalars.output(0), S({3}));
}

TEST_F(ShapeFnTest, BroadcastAllWithAnUnknownRankInputIsUnknown) {
  InferenceContext c = Context({S({2, 3}), PartialShape(), S({3})}, 1);
  ASSERT_OK(shape_fn::BroadcastAll(&c));
  EXPECT_TRUE(c.output(0).unknown_rank()) << c.output(0).DebugString();
}

TEST_F(ShapeFnTest, BroadcastAllErrorsNameTheNodeAndTheShapesSoFar) {
  // The first two inputs broadcast to [2,3]; the third disagrees with that.
  InferenceContext c = Context({S({2, 1}), S({3}), S({4, 3})}, 1);
  absl::Status s = shape_fn::BroadcastAll(&c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add1' (op 'Add')"));
  EXPECT_THAT(s.message(), HasSubstr("[2,3] and [4,3]"));
}

TEST_F(ShapeFnTest, UnchangedUnknownAndFromShapeAttr) {
  InferenceContext same = Context({S({-1, 2})}, 1);
  ASSERT_OK(shape_fn::Unchanged(&same));
  EXPECT_EQ(same.output(0), S({-1, 2}));

  InferenceContext unknown = Context({S({1})}, 3);
  unknown.set_output(1, S({9}));
  ASSERT_OK(shape_fn::Unknown(&unknown));
  ASSERT_EQ(unknown.outputs().size(), 3u);
  for (const PartialShape& o : unknown.outputs()) EXPECT_TRUE(o.unknown_rank()) << o.DebugString();

  InferenceContext from_attr = Context({}, 1);
  ASSERT_OK(shape_fn::FromShapeAttr(&from_attr));
  EXPECT_EQ(from_attr.output(0), S({-1, 4}));
}

TEST_F(ShapeFnTest, InputTensorsDefaultToUnknown) {
  Tensor two = Tensor::Scalar<int64_t>(2);
  InferenceContext c(node_, op_def_, {S({}), S({})}, {&two}, 1);
  EXPECT_EQ(c.input_tensor(0), &two);
  EXPECT_EQ(c.input_tensor(1), nullptr);  // Not given: not a known constant.
}

}  // namespace
}  // namespace sluice
