#include "framework/device_name.h"

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(DeviceNameTest, ParsesFullAndPartialNames) {
  auto full = DeviceName::Parse("/job:worker/replica:0/task:1/device:CPU:2");
  ASSERT_OK(full);
  EXPECT_TRUE(full->IsFullySpecified());
  EXPECT_EQ(full->job, "worker");
  EXPECT_EQ(full->task, 1);
  EXPECT_EQ(full->id, 2);
  EXPECT_EQ(full->TaskName(), "/job:worker/replica:0/task:1");

  auto partial = DeviceName::Parse("/job:worker/task:1");
  ASSERT_OK(partial);
  EXPECT_TRUE(partial->Matches(*full));
  auto other = DeviceName::Parse("/job:worker/task:0");
  EXPECT_FALSE(other->Matches(*full));
  auto legacy = DeviceName::Parse("/cpu:2");
  ASSERT_OK(legacy);
  EXPECT_TRUE(legacy->Matches(*full));
  auto any_id = DeviceName::Parse("/device:CPU:*");
  ASSERT_OK(any_id);
  EXPECT_TRUE(any_id->Matches(*full));
}

TEST(DeviceNameTest, RejectsMalformedNames) {
  EXPECT_FALSE(DeviceName::Parse("job:worker").ok());
  EXPECT_FALSE(DeviceName::Parse("/job:worker/task:x").ok());
  EXPECT_FALSE(DeviceName::Parse("/jobworker").ok());
  EXPECT_FALSE(DeviceName::Parse("/planet:mars").ok());
}

}  // namespace
}  // namespace sluice
