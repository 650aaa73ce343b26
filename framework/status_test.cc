#include "framework/status.h"

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

absl::Status Fail(absl::StatusCode code) { return absl::Status(code, "inner"); }

absl::Status ReturnPlain() {
  SL_RETURN_IF_ERROR(Fail(absl::StatusCode::kNotFound));
  return absl::OkStatus();
}

absl::Status ReturnWithContext(int n) {
  SL_RETURN_IF_ERROR(Fail(absl::StatusCode::kInvalidArgument), "node '", n, "'");
  return absl::OkStatus();
}

absl::StatusOr<int> Value(bool ok) {
  if (!ok) return absl::OutOfRangeError("no value");
  return 7;
}

absl::StatusOr<int> AssignWithContext(bool ok) {
  SL_ASSIGN_OR_RETURN(int v, Value(ok), "reading ", "x");
  return v + 1;
}

absl::StatusOr<int> AssignPlain(bool ok) {
  SL_ASSIGN_OR_RETURN(int v, Value(ok));
  return v * 2;
}

TEST(StatusTest, ReturnIfErrorKeepsCodeAndMessage) {
  absl::Status s = ReturnPlain();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "inner");
}

TEST(StatusTest, ReturnIfErrorAddsContext) {
  absl::Status s = ReturnWithContext(3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node '3': inner");
}

TEST(StatusTest, AssignOrReturn) {
  EXPECT_EQ(*AssignPlain(true), 14);
  EXPECT_EQ(AssignPlain(false).status().message(), "no value");
  EXPECT_EQ(*AssignWithContext(true), 8);
  absl::Status s = AssignWithContext(false).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "reading x: no value");
}

TEST(StatusTest, AddContextKeepsPayloads) {
  absl::Status s = absl::UnavailableError("gone");
  s.SetPayload("type.sluice/task", absl::Cord("/job:worker/task:1"));
  absl::Status out = AddContext(s, "step 4");
  EXPECT_EQ(out.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(out.message(), "step 4: gone");
  ASSERT_TRUE(out.GetPayload("type.sluice/task").has_value());
  EXPECT_EQ(std::string(*out.GetPayload("type.sluice/task")), "/job:worker/task:1");
  EXPECT_OK(AddContext(absl::OkStatus(), "x"));
}

TEST(StatusTest, MatchersAcceptOkAndPrintErrors) {
  EXPECT_OK(absl::OkStatus());
  EXPECT_OK(Value(true));
  SL_ASSERT_OK_AND_ASSIGN(int v, Value(true));
  EXPECT_EQ(v, 7);
  ::testing::AssertionResult r = status_internal::IsOk("Value(false)", Value(false));
  EXPECT_FALSE(r);
  EXPECT_EQ(std::string(r.message()), "Value(false) is OUT_OF_RANGE: no value");
}

TEST(StatusTest, CatchExceptionsTurnsThrowsIntoStatuses) {
  EXPECT_OK(CatchExceptions([] { return absl::OkStatus(); }));
  absl::Status s = CatchExceptions([]() -> absl::Status { throw std::bad_alloc(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  s = CatchExceptions([]() -> absl::Status {
    std::vector<int> v;
    v.reserve(v.max_size() + 1);  // length_error
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  s = CatchExceptions([]() -> absl::Status { throw std::runtime_error("dnnl says no"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_NE(s.message().find("dnnl says no"), std::string::npos) << s;
  s = CatchExceptions([]() -> absl::Status { throw 42; });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
}

}  // namespace
}  // namespace sluice
