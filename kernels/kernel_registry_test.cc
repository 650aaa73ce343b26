#include "kernels/kernel_registry.h"

#include "framework/node_def_util.h"
#include "framework/status_matchers.h"
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
    ASSERT_OK(op);
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
  ASSERT_OK(r);
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

// A registry of its own, so these cases do not depend on which kernels are linked.
class NoopKernel : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) const override { return absl::OkStatus(); }
};

KernelFactory Noop() {
  return [] { return std::make_unique<NoopKernel>(); };
}

NodeDef FakeNode(DataType t) {
  NodeDef node;
  node.set_name("fake1");
  node.set_op("Fake");
  AddNodeAttr("T", t, &node);
  return node;
}

TEST(LocalKernelRegistryTest, MatchesByTypeConstraint) {
  KernelRegistry registry;
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Build(), "FakeFloat",
                    Noop());
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").Build(),
                    "FakeInt32", Noop());
  registry.Register(Name("Fake").Device("GPU").TypeConstraint<int32_t>("T").Build(), "FakeGpu",
                    Noop());
  auto f = registry.FindKernel(DEVICE_CPU, FakeNode(DT_FLOAT));
  ASSERT_OK(f.status());
  EXPECT_EQ((*f)->class_name, "FakeFloat");
  auto i = registry.FindKernel(DEVICE_CPU, FakeNode(DT_INT32));
  ASSERT_OK(i.status());
  EXPECT_EQ((*i)->class_name, "FakeInt32");
  auto g = registry.FindKernel("GPU", FakeNode(DT_INT32));
  ASSERT_OK(g.status());
  EXPECT_EQ((*g)->class_name, "FakeGpu");
  EXPECT_TRUE(registry.HasKernel(DEVICE_CPU, FakeNode(DT_FLOAT)));

  // A list(type) attr matches when every element is allowed.
  NodeDef list = FakeNode(DT_FLOAT);
  AddNodeAttr("T", std::vector<DataType>{DT_INT32, DT_INT32}, &list);
  auto l = registry.FindKernel(DEVICE_CPU, list);
  ASSERT_OK(l.status());
  EXPECT_EQ((*l)->class_name, "FakeInt32");
  AddNodeAttr("T", std::vector<DataType>{DT_INT32, DT_FLOAT}, &list);
  EXPECT_FALSE(registry.HasKernel(DEVICE_CPU, list));
}

TEST(LocalKernelRegistryTest, NoKernelForTheDeviceListsEveryDevicesKernels) {
  KernelRegistry registry;
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Build(), "FakeFloat",
                    Noop());
  EXPECT_FALSE(registry.HasKernel("GPU", FakeNode(DT_FLOAT)));
  auto r = registry.FindKernel("GPU", FakeNode(DT_FLOAT));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "no kernel registered for op 'Fake' on device GPU with attrs {T=DT_FLOAT} for node "
            "'fake1'. Registered kernels:\n  device='CPU'; T in [DT_FLOAT]");
}

TEST(LocalKernelRegistryTest, NoKernelForTheDtypeListsWhatIsRegistered) {
  KernelRegistry registry;
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Build(), "FakeFloat",
                    Noop());
  registry.Register(Name("Fake")
                        .Device(DEVICE_CPU)
                        .TypeConstraint("T", {DT_INT32, DT_INT64})
                        .Label("wide")
                        .Build(),
                    "FakeInts", Noop());
  registry.Register(Name("Other").Device(DEVICE_CPU).Build(), "Other", Noop());
  EXPECT_FALSE(registry.HasKernel(DEVICE_CPU, FakeNode(DT_UINT8)));
  auto r = registry.FindKernel(DEVICE_CPU, FakeNode(DT_UINT8));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "no kernel registered for op 'Fake' on device CPU with attrs {T=DT_UINT8} for node "
            "'fake1'. Registered kernels:\n  device='CPU'; T in [DT_FLOAT]\n  device='CPU'; T in "
            "[DT_INT32, DT_INT64]; label='wide'");

  NodeDef unknown = FakeNode(DT_FLOAT);
  unknown.set_op("Unregistered");
  auto none = registry.FindKernel(DEVICE_CPU, unknown);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("Registered kernels:\n  <none>"));
}

TEST(LocalKernelRegistryTest, DuplicatesAreAnErrorAtLookupUnlessPriorityDecides) {
  KernelRegistry registry;
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Build(), "First",
                    Noop());
  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Build(), "Second",
                    Noop());
  EXPECT_EQ(registry.All().size(), 2u);
  EXPECT_EQ(registry.ForOp("Fake").size(), 2u);
  EXPECT_FALSE(registry.HasKernel(DEVICE_CPU, FakeNode(DT_FLOAT)));
  auto tie = registry.FindKernel(DEVICE_CPU, FakeNode(DT_FLOAT));
  EXPECT_EQ(tie.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(tie.status().message(),
            "several kernels with equal priority match node 'fake1' (op 'Fake') on CPU");

  registry.Register(Name("Fake").Device(DEVICE_CPU).TypeConstraint<float>("T").Priority(1).Build(),
                    "Preferred", Noop());
  auto k = registry.FindKernel(DEVICE_CPU, FakeNode(DT_FLOAT));
  ASSERT_OK(k.status());
  EXPECT_EQ((*k)->class_name, "Preferred");
  EXPECT_TRUE(registry.HasKernel(DEVICE_CPU, FakeNode(DT_FLOAT)));
}

}  // namespace
}  // namespace sluice
