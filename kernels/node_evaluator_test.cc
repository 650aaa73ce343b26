// EvaluateNode: one kernel run outside a step, as the optimizer's constant folding calls it.
#include "kernels/node_evaluator.h"

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

NodeDef Node(const std::string& op, int inputs) {
  NodeDef n;
  n.set_name("n");
  n.set_op(op);
  for (int i = 0; i < inputs; ++i) n.add_input("in" + std::to_string(i));
  return n;
}

TEST(NodeEvaluatorTest, RunsAKernelOnConstantInputs) {
  NodeDef add = Node("Add", 2);
  (*add.mutable_attr())["T"].set_type(DT_FLOAT);
  const std::vector<Tensor> inputs = {Tensor::FromVector<float>({1, 2}, TensorShape({2})), Tensor::Scalar<float>(10)};
  SL_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, EvaluateNode(add, inputs, 1 << 20));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flat<float>()[0], 11);
  EXPECT_EQ(out[0].flat<float>()[1], 12);
}

TEST(NodeEvaluatorTest, RefusesStatefulOpsAndAllocationsPastTheLimit) {
  NodeDef random = Node("Onnx>RandomUniformLike", 1);
  (*random.mutable_attr())["T1"].set_type(DT_FLOAT);
  (*random.mutable_attr())["dtype"].set_type(DT_FLOAT);
  EXPECT_EQ(EvaluateNode(random, {Tensor::Scalar<float>(1)}, 1 << 20).status().code(),
            absl::StatusCode::kFailedPrecondition);

  NodeDef fill = Node("Onnx>ConstantOfShape", 1);
  (*fill.mutable_attr())["dtype"].set_type(DT_FLOAT);
  Tensor::Scalar<float>(0).AsProtoTensorContent((*fill.mutable_attr())["value"].mutable_tensor());
  const Tensor shape = Tensor::FromVector<int64_t>({1024, 1024}, TensorShape({2}));
  EXPECT_EQ(EvaluateNode(fill, {shape}, 1 << 20).status().code(), absl::StatusCode::kResourceExhausted);
  SL_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, EvaluateNode(fill, {shape}, 8 << 20));
  EXPECT_EQ(out[0].NumElements(), 1024 * 1024);
}

}  // namespace
}  // namespace sluice
