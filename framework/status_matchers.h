// Test-only checks for absl::Status and absl::StatusOr that print the status when they fail.
//
//   ASSERT_OK(session->Create(graph));
//   EXPECT_OK(Tensor::FromProto(proto));
//   SL_ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::FromProto(proto));
#ifndef SLUICE_FRAMEWORK_STATUS_MATCHERS_H_
#define SLUICE_FRAMEWORK_STATUS_MATCHERS_H_

#include "framework/status.h"
#include "gtest/gtest.h"

namespace sluice {
namespace status_internal {

// absl::Status and absl::StatusOr.
template <typename T>
auto IsOk(const char* expr, const T& value)
    -> decltype(AsStatus(value), ::testing::AssertionResult(true)) {
  const absl::Status& s = AsStatus(value);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " is " << StatusToString(s);
}

// gRPC's status (ok(), error_code(), error_message()), for tests of the services.
template <typename T>
auto IsOk(const char* expr, const T& value)
    -> decltype(value.error_message(), ::testing::AssertionResult(true)) {
  if (value.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " is gRPC code "
                                       << static_cast<int>(value.error_code()) << ": "
                                       << value.error_message();
}

}  // namespace status_internal
}  // namespace sluice

#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::sluice::status_internal::IsOk, expr)
#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::sluice::status_internal::IsOk, expr)

#define SL_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  ASSERT_OK(tmp);                                     \
  lhs = std::move(tmp).value()

#define SL_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  SL_ASSERT_OK_AND_ASSIGN_IMPL_(SL_STATUS_CONCAT_(sl_assert_statusor_, __LINE__), lhs, expr)

#endif  // SLUICE_FRAMEWORK_STATUS_MATCHERS_H_
