#include "framework/resource_mgr.h"

#include "framework/device.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

struct Counter : ResourceBase {
  static constexpr char kTypeName[] = "Counter";
  explicit Counter(int* live) : live(live) { ++*live; }
  ~Counter() override { --*live; }
  int* live;
  int value = 0;
};

struct Other : ResourceBase {
  static constexpr char kTypeName[] = "Other";
};

const ResourceHandle kCounter{"/job:localhost/replica:0/task:0/device:CPU:0", "", "c", "Counter"};

TEST(ResourceMgrTest, LookupOrCreateMakesOnceAndDeleteDestroys) {
  int live = 0, made = 0;
  ResourceMgr mgr("cpu0");
  auto make = [&]() -> absl::StatusOr<std::unique_ptr<Counter>> {
    ++made;
    return std::make_unique<Counter>(&live);
  };
  SL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Counter> a, mgr.LookupOrCreate<Counter>(kCounter, make));
  a->value = 7;
  SL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Counter> b, mgr.LookupOrCreate<Counter>(kCounter, make));
  EXPECT_EQ(made, 1);
  EXPECT_EQ(b->value, 7);
  SL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Counter> c, mgr.Lookup<Counter>(kCounter));
  EXPECT_EQ(c.get(), a.get());
  a.reset();
  b.reset();
  c.reset();
  EXPECT_EQ(live, 1);
  ASSERT_OK(mgr.Delete(kCounter));
  EXPECT_EQ(live, 0);
  absl::Status s = mgr.Lookup<Counter>(kCounter).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("Counter 'c'"));
  EXPECT_THAT(s.message(), HasSubstr("cpu0"));
  EXPECT_EQ(mgr.Delete(kCounter).code(), absl::StatusCode::kNotFound);
}

TEST(ResourceMgrTest, ContainersAndTypesDoNotMix) {
  int live = 0;
  ResourceMgr mgr("cpu0");
  auto make = [&]() -> absl::StatusOr<std::unique_ptr<Counter>> { return std::make_unique<Counter>(&live); };
  ASSERT_OK(mgr.LookupOrCreate<Counter>(kCounter, make).status());
  ResourceHandle other_container = kCounter;
  other_container.container = "elsewhere";
  EXPECT_EQ(mgr.Lookup<Counter>(other_container).status().code(), absl::StatusCode::kNotFound);
  // A Counter's handle used where an Other is expected is refused before any lookup.
  absl::Status s = mgr.Lookup<Other>(kCounter).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a Other"));
  // A failing creator leaves nothing behind.
  ResourceHandle fresh = kCounter;
  fresh.name = "fresh";
  auto fail = []() -> absl::StatusOr<std::unique_ptr<Counter>> { return absl::InternalError("no"); };
  EXPECT_EQ(mgr.LookupOrCreate<Counter>(fresh, fail).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(mgr.Lookup<Counter>(fresh).status().code(), absl::StatusCode::kNotFound);
  mgr.Clear();
  EXPECT_EQ(live, 0);
}

TEST(ResourceMgrTest, HandlesRoundTripThroughTensorsAndProtos) {
  Tensor t = MakeResourceHandleTensor(kCounter);
  EXPECT_EQ(t.dtype(), DT_RESOURCE);
  EXPECT_EQ(t.dims(), 0);
  SL_ASSERT_OK_AND_ASSIGN(ResourceHandle h, ResourceHandleFromTensor(t));
  EXPECT_EQ(h.name, "c");
  EXPECT_EQ(h.type_name, "Counter");
  ResourceHandleProto proto = ResourceHandleToProto(h);
  EXPECT_EQ(proto.maybe_type_name(), "Counter");
  SL_ASSERT_OK_AND_ASSIGN(ResourceHandle back, ResourceHandleFromTensor(ResourceHandleTensorFromProto(proto)));
  EXPECT_EQ(back.device, kCounter.device);
  EXPECT_EQ(back.container, kCounter.container);
  EXPECT_EQ(back.name, kCounter.name);
  // Any other tensor is refused, resource-typed or not.
  EXPECT_EQ(ResourceHandleFromTensor(Tensor::FromVector<float>({1}, TensorShape({}))).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResourceHandleFromTensor(Tensor(DT_RESOURCE, TensorShape({}))).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ResourceMgrTest, DeviceTableReleases) {
  int live = 0;
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  const Device device(attrs, /*compute_pool=*/nullptr);
  const Device* dev = &device;
  ResourceMgr& mgr = ResourceMgrOf(dev);
  EXPECT_EQ(&ResourceMgrOf(dev), &mgr);
  auto make = [&]() -> absl::StatusOr<std::unique_ptr<Counter>> { return std::make_unique<Counter>(&live); };
  ASSERT_OK(mgr.LookupOrCreate<Counter>(kCounter, make).status());
  EXPECT_EQ(live, 1);
  ReleaseResourceMgr(dev);
  EXPECT_EQ(live, 0);
  ReleaseResourceMgr(dev);  // Twice is harmless.
}

}  // namespace
}  // namespace sluice
