#include "kernels/kernel_registry.h"

#include "framework/node_def_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Every kernel names a registered op, constrains only attrs that op has, with types the op
// allows: a typo in a registration fails here instead of at a user's first run.
TEST(KernelRegistryTest, EveryKernelMatchesARegisteredOp) {
  auto kernels = KernelRegistry::Global()->All();
  ASSERT_FALSE(kernels.empty());
  for (const KernelRegistration* k : kernels) {
    SCOPED_TRACE(k->class_name + " " + KernelDefSummary(k->def));
    auto op = OpRegistry::Global()->LookUp(k->def.op());
    ASSERT_TRUE(op.ok()) << op.status();
    EXPECT_FALSE(k->def.device_type().empty());
    for (const auto& c : k->def.constraint()) {
      const OpDef::AttrDef* attr = nullptr;
      for (const auto& a : (*op)->op_def.attr()) {
        if (a.name() == c.name()) attr = &a;
      }
      ASSERT_NE(attr, nullptr) << "constraint on attr '" << c.name() << "' the op lacks";
      EXPECT_TRUE(attr->type() == "type" || attr->type() == "list(type)");
      const auto& allowed = attr->allowed_values().list().type();
      if (allowed.empty()) continue;
      for (int t : c.allowed_values().list().type()) {
        EXPECT_THAT(allowed, ::testing::Contains(t))
            << DataTypeString(static_cast<DataType>(t)) << " is not allowed by the op";
      }
    }
  }
}

TEST(KernelRegistryTest, NoMatchingKernelListsRegisteredOnes) {
  NodeDef node;
  node.set_name("relu_u16");
  node.set_op("Relu");
  AddNodeAttr("T", DT_UINT16, &node);  // Not an allowed type of Relu on CPU.
  auto r = KernelRegistry::Global()->FindKernel(DEVICE_CPU, node);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("node 'relu_u16'"));
  EXPECT_THAT(r.status().message(), HasSubstr("T=DT_UINT16"));
  EXPECT_THAT(r.status().message(), HasSubstr("T in [DT_FLOAT]"));

  NodeDef gpu = node;
  AddNodeAttr("T", DT_FLOAT, &gpu);
  auto on_gpu = KernelRegistry::Global()->FindKernel("GPU", gpu);
  EXPECT_THAT(on_gpu.status().message(), HasSubstr("on device GPU"));
}

TEST(KernelRegistryTest, SelectsByTypeConstraint) {
  NodeDef node;
  node.set_name("mm");
  node.set_op("MatMul");
  AddNodeAttr("T", DT_DOUBLE, &node);
  auto r = KernelRegistry::Global()->FindKernel(DEVICE_CPU, node);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)->class_name, HasSubstr("double"));
}

TEST(KernelRegistryTest, InitErrorsNameTheNode) {
  // Const whose dtype attr disagrees with its value.
  KernelTester t("Const");
  Tensor v = Tensor::Scalar<int32_t>(3);
  t.Attr("value", v).Attr("dtype", DT_FLOAT);
  absl::Status s = t.Run();
  EXPECT_THAT(s.message(), HasSubstr("node 'test_node'"));
  EXPECT_THAT(s.message(), HasSubstr("'value' holds int32"));
}

}  // namespace
}  // namespace sluice
