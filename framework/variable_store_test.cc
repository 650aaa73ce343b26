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

// x -= 1 elementwise for every variable of the update.
absl::Status Decrement(absl::Span<const Tensor> in, absl::Span<Tensor> out) {
  for (size_t k = 0; k < in.size(); ++k) {
    for (int64_t i = 0; i < in[k].NumElements(); ++i) out[k].flat<float>()[i] = in[k].flat<float>()[i] - 1;
  }
  return absl::OkStatus();
}

TEST(VariableStoreTest, UpdateWritesInPlaceOnlyWhenNoOneElseHoldsTheValue) {
  VariableStore vars("/job:ps/replica:0/task:0/device:CPU:0");
  const void* second = nullptr;
  {
    Tensor w = Tensor::FromVector<float>({5, 6}, TensorShape({2}));
    ASSERT_OK(vars.Assign("w", w));
    // The caller still holds `w`: the update goes to a new buffer and `w` keeps its values.
    ASSERT_OK(vars.Update({"w"}, Decrement));
    EXPECT_EQ(w.flat<float>()[0], 5);
    Tensor now = *vars.Read("w");
    EXPECT_NE(now.buffer()->data(), w.buffer()->data());
    EXPECT_EQ(now.flat<float>()[0], 4);
    EXPECT_EQ(now.flat<float>()[1], 5);
    second = now.buffer()->data();
  }
  // Now the store holds the only reference: the same buffer is written.
  ASSERT_OK(vars.Update({"w"}, Decrement));
  Tensor after = *vars.Read("w");
  EXPECT_EQ(after.buffer()->data(), second);
  EXPECT_EQ(after.flat<float>()[0], 3);
  // While `after` is held, the next update copies again and `after` stays 3.
  ASSERT_OK(vars.Update({"w"}, Decrement));
  EXPECT_EQ(after.flat<float>()[0], 3);
  EXPECT_EQ(vars.Read("w")->flat<float>()[0], 2);
}

TEST(VariableStoreTest, UpdateOfSeveralVariablesAndItsErrors) {
  VariableStore vars("/job:ps/replica:0/task:0/device:CPU:0");
  ASSERT_OK(vars.Assign("a", Tensor::FromVector<float>({1}, TensorShape({1}))));
  ASSERT_OK(vars.Assign("b", Tensor::FromVector<float>({10, 20}, TensorShape({2}))));
  ASSERT_OK(vars.Update({"a", "b"}, Decrement));
  EXPECT_EQ(vars.Read("a")->flat<float>()[0], 0);
  EXPECT_EQ(vars.Read("b")->flat<float>()[1], 19);

  absl::Status s = vars.Update({"a", "missing"}, Decrement);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'missing'"));
  s = vars.Update({"a", "a"}, Decrement);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("named twice"));
  ASSERT_OK(vars.Assign("s", Tensor::Scalar<tstring>("text")));
  EXPECT_EQ(vars.Update({"s"}, Decrement).code(), absl::StatusCode::kInvalidArgument);

  // A failing update leaves a copied value as it was.
  Tensor held = *vars.Read("b");
  s = vars.Update({"b"}, [](absl::Span<const Tensor>, absl::Span<Tensor> out) {
    out[0].flat<float>()[0] = 99;
    return absl::InternalError("stop");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(vars.Read("b")->flat<float>()[0], 9);
}

}  // namespace
}  // namespace sluice
