#include "framework/hoisted_constants.h"

#include <cstring>
#include <string>
#include <vector>

#include "framework/node_attr.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A Const of `n` floats 0, 0.5, 1, ... (tensor_content), shaped [n].
NodeDef FloatConst(const std::string& name, int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.5f * i;
  NodeDef node;
  node.set_name(name);
  node.set_op("Const");
  AddNodeAttr("dtype", DT_FLOAT, &node);
  AddNodeAttr("value", Tensor::FromVector<float>(v, TensorShape({n})), &node);
  return node;
}

const TensorProto& Value(const NodeDef& node) { return node.attr().at("value").tensor(); }

TEST(HoistedConstantsTest, LargeConstsMoveToTheTableAndSmallOnesStay) {
  GraphDef g;
  *g.add_node() = FloatConst("big", kMaxInlineConstElements + 1);
  *g.add_node() = FloatConst("small", kMaxInlineConstElements);
  NodeDef* other = g.add_node();
  other->set_name("id");
  other->set_op("Identity");
  other->add_input("big");
  HoistedConstants table;
  HoistConstants(&g, &table);

  ASSERT_EQ(table.size(), 1u);
  const Tensor& big = table.at("big");
  ASSERT_EQ(big.NumElements(), kMaxInlineConstElements + 1);
  EXPECT_EQ(big.flat<float>()[7], 3.5f);
  EXPECT_EQ(big.flat<float>()[kMaxInlineConstElements], 0.5f * kMaxInlineConstElements);
  EXPECT_TRUE(IsHoisted(g.node(0)));
  EXPECT_TRUE(Value(g.node(0)).tensor_content().empty());
  EXPECT_LT(g.node(0).SpaceUsedLong(), 2048) << "the hoisted node still holds the value's storage";
  EXPECT_EQ(Value(g.node(0)).dtype(), DT_FLOAT);
  EXPECT_EQ(Value(g.node(0)).tensor_shape().dim(0).size(), kMaxInlineConstElements + 1);
  EXPECT_FALSE(IsHoisted(g.node(1)));
  EXPECT_EQ(Value(g.node(1)).tensor_content().size(), kMaxInlineConstElements * sizeof(float));
  EXPECT_FALSE(IsHoisted(g.node(2)));

  // A second pass changes nothing.
  HoistConstants(&g, &table);
  EXPECT_EQ(table.size(), 1u);
}

// A compact value (one float_val for 2^29 elements: 2 GiB once expanded, from about 20 bytes)
// stays in the graph: hoisting would expand it in the master, outside any step's memory
// budget, and again on the wire (found in review of the hoisting change).
TEST(HoistedConstantsTest, CompactValuesStaySmallInTheGraph) {
  NodeDef node;
  node.set_name("fill");
  node.set_op("Const");
  AddNodeAttr("dtype", DT_FLOAT, &node);
  TensorProto value;
  value.set_dtype(DT_FLOAT);
  value.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 29);
  value.add_float_val(0.0f);
  *(*node.mutable_attr())["value"].mutable_tensor() = value;
  HoistedConstants table;
  EXPECT_FALSE(HoistConstant(&node, &table));
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(Value(node).float_val_size(), 1);
  // Past the element count int64 can hold, too.
  value.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  *(*node.mutable_attr())["value"].mutable_tensor() = value;
  EXPECT_FALSE(HoistConstant(&node, &table));
  EXPECT_TRUE(table.empty());
}

TEST(HoistedConstantsTest, MalformedValuesStayForTheKernelToReport) {
  NodeDef node = FloatConst("bad", kMaxInlineConstElements + 1);
  TensorProto* v = (*node.mutable_attr())["value"].mutable_tensor();
  v->mutable_tensor_content()->resize(12);  // Fewer bytes than the shape needs.
  HoistedConstants table;
  EXPECT_FALSE(HoistConstant(&node, &table));
  EXPECT_FALSE(IsHoisted(node));
  EXPECT_EQ(Value(node).tensor_content().size(), 12u);

  // A shape whose element count overflows int64 is not hoisted either.
  NodeDef huge = FloatConst("huge", 2);
  TensorProto* h = (*huge.mutable_attr())["value"].mutable_tensor();
  for (int i = 0; i < 4; ++i) h->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  EXPECT_FALSE(HoistConstant(&huge, &table));
  EXPECT_TRUE(table.empty());
}

TEST(HoistedConstantsTest, InliningRestoresTheValues) {
  GraphDef g;
  *g.add_node() = FloatConst("w", 5000);
  const std::string before = Value(g.node(0)).tensor_content();
  HoistedConstants table;
  HoistConstants(&g, &table);
  ASSERT_TRUE(IsHoisted(g.node(0)));
  ASSERT_OK(InlineConstants(table, &g));
  EXPECT_FALSE(IsHoisted(g.node(0)));
  EXPECT_EQ(g.node(0).attr().count(kHoistedAttr), 0u);
  EXPECT_EQ(Value(g.node(0)).tensor_content(), before);
  SL_ASSERT_OK_AND_ASSIGN(Tensor back, Tensor::FromProto(Value(g.node(0))));
  EXPECT_EQ(back.shape(), TensorShape({5000}));
}

TEST(HoistedConstantsTest, AMissingOrMismatchedValueIsAnErrorNamingTheNode) {
  GraphDef g;
  *g.add_node() = FloatConst("w", 5000);
  HoistedConstants table;
  HoistConstants(&g, &table);

  HoistedConstants empty;
  absl::Status s = InlineConstants(empty, &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'w'"), HasSubstr("no value was registered"))) << s;
  EXPECT_EQ(FindHoistedValue(g.node(0), nullptr).status().code(), absl::StatusCode::kInvalidArgument);

  HoistedConstants wrong;
  wrong["w"] = Tensor(DT_INT32, TensorShape({5000}));
  s = FindHoistedValue(g.node(0), &wrong).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'w'"), HasSubstr("int32"), HasSubstr("float"))) << s;
  wrong["w"] = Tensor(DT_FLOAT, TensorShape({4999}));
  EXPECT_EQ(FindHoistedValue(g.node(0), &wrong).status().code(), absl::StatusCode::kInvalidArgument);
  SL_ASSERT_OK_AND_ASSIGN(Tensor t, FindHoistedValue(g.node(0), &table));
  EXPECT_EQ(t.raw_data(), table.at("w").raw_data());  // Shared, not copied.
}

TEST(HoistedConstantsTest, ACopyFindsItsOriginalsValue) {
  GraphDef g;
  *g.add_node() = FloatConst("w", 5000);
  HoistedConstants table;
  HoistConstants(&g, &table);
  NodeDef copy = g.node(0);  // As the pipeline placement copies a Const to a later stage.
  copy.set_name("w/stage_1");
  (*copy.mutable_attr())[kHoistedFromAttr].set_s("w");
  *g.add_node() = copy;
  SL_ASSERT_OK_AND_ASSIGN(Tensor t, FindHoistedValue(g.node(1), &table));
  EXPECT_EQ(t.raw_data(), table.at("w").raw_data());
  ASSERT_OK(InlineConstants(table, &g));
  EXPECT_EQ(Value(g.node(1)).tensor_content(), Value(g.node(0)).tensor_content());
  EXPECT_EQ(table.count("w/stage_1"), 0u);  // One table entry for both.
  // Sent to another task, the copy carries its value and is hoisted there under its own name
  // (a pipeline's later stage on another process found no value when the link stayed).
  EXPECT_FALSE(g.node(1).attr().contains(kHoistedFromAttr));
  HoistedConstants remote;
  GraphDef received;
  *received.add_node() = g.node(1);
  HoistConstants(&received, &remote);
  SL_ASSERT_OK_AND_ASSIGN(Tensor there, FindHoistedValue(received.node(0), &remote));
  ASSERT_EQ(there.AllocatedBytes(), table.at("w").AllocatedBytes());
  EXPECT_EQ(std::memcmp(there.raw_data(), table.at("w").raw_data(), there.AllocatedBytes()), 0);
  // A node that still names an original is hoisted under its own name and forgets the link.
  NodeDef stale = g.node(1);
  (*stale.mutable_attr())[kHoistedFromAttr].set_s("w");
  HoistedConstants other;
  ASSERT_TRUE(HoistConstant(&stale, &other));
  EXPECT_FALSE(stale.attr().contains(kHoistedFromAttr));
  ASSERT_OK(FindHoistedValue(stale, &other).status());

  // A graph that names an original nobody registered (or an empty name) fails, naming the node.
  for (const char* from : {"nobody", ""}) {
    (*copy.mutable_attr())[kHoistedFromAttr].set_s(from);
    absl::Status s = FindHoistedValue(copy, &table).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("'w/stage_1'")) << s;
  }
}

}  // namespace
}  // namespace sluice
