#include "framework/cancellation.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(CancellationManagerTest, TheFirstCancelCountsAndRunsCallbacksOnce) {
  CancellationManager cm;
  EXPECT_FALSE(cm.IsCancelled());
  EXPECT_OK(cm.status());
  int runs = 0;
  absl::Status seen;
  CancellationManager::Token token;
  ASSERT_TRUE(cm.RegisterCallback(
      [&](const absl::Status& s) {
        ++runs;
        seen = s;
      },
      &token));
  cm.StartCancel(absl::DeadlineExceededError("step 3 did not finish"));
  cm.StartCancel(absl::CancelledError("later"));
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cm.status().code(), absl::StatusCode::kDeadlineExceeded);
  cm.DeregisterCallback(token);  // Ran already: returns at once.
  CancellationManager::Token late;
  EXPECT_FALSE(cm.RegisterCallback([&](const absl::Status&) { ++runs; }, &late));
  EXPECT_EQ(runs, 1);
}

TEST(CancellationManagerTest, DeregisteredCallbacksDoNotRun) {
  CancellationManager cm;
  bool ran = false;
  CancellationManager::Token token;
  ASSERT_TRUE(cm.RegisterCallback([&](const absl::Status&) { ran = true; }, &token));
  cm.DeregisterCallback(token);
  cm.StartCancel(absl::CancelledError("client went away"));
  EXPECT_FALSE(ran);
}

TEST(CancellationManagerTest, DeregisterWaitsForARunningCallback) {
  CancellationManager cm;
  absl::Notification entered, release;
  CancellationManager::Token token;
  ASSERT_TRUE(cm.RegisterCallback(
      [&](const absl::Status&) {
        entered.Notify();
        release.WaitForNotification();
      },
      &token));
  std::thread canceller([&] { cm.StartCancel(absl::CancelledError("x")); });
  entered.WaitForNotification();
  std::atomic<bool> deregistered{false};
  std::thread deregisterer([&] {
    cm.DeregisterCallback(token);
    deregistered = true;
  });
  absl::SleepFor(absl::Milliseconds(50));  // Only to give a wrong implementation its chance.
  EXPECT_FALSE(deregistered);
  release.Notify();
  deregisterer.join();
  canceller.join();
  EXPECT_TRUE(deregistered);
}

}  // namespace
}  // namespace sluice
