#include "framework/variable_store.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(VariableStoreTest, AssignThenReadAndReplace) {
  VariableStore vars("/job:ps/replica:0/task:0/device:CPU:0");
  ASSERT_OK(vars.Assign("w", Tensor::FromVector<float>({1, 2}, TensorShape({2}))));
  Tensor before = *vars.Read("w");
  ASSERT_OK(vars.Assign("w", Tensor::FromVector<float>({3, 4}, TensorShape({2}))));
  // A value read earlier is not written into by a later assign.
  EXPECT_EQ(before.flat<float>()[0], 1);
  EXPECT_EQ(vars.Read("w")->flat<float>()[1], 4);
  EXPECT_THAT(vars.Names(), ::testing::ElementsAre("w"));
}

TEST(VariableStoreTest, ErrorsNameTheVariableAndDevice) {
  VariableStore vars("/job:ps/replica:0/task:0/device:CPU:0");
  absl::Status s = vars.Read("nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'nope' on /job:ps/replica:0/task:0/device:CPU:0"));
  ASSERT_OK(vars.Assign("w", Tensor::FromVector<float>({1, 2}, TensorShape({2}))));
  s = vars.Assign("w", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'w'"));
  EXPECT_THAT(s.message(), HasSubstr("[3]"));
  ASSERT_OK(vars.Erase("w"));
  EXPECT_FALSE(vars.Read("w").ok());
  EXPECT_EQ(vars.Erase("w").code(), absl::StatusCode::kNotFound);
  ASSERT_OK(vars.Assign("w", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))));
  vars.Clear();
  EXPECT_FALSE(vars.Read("w").ok());
}

}  // namespace
}  // namespace sluice
