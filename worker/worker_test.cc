// The Worker's bookkeeping of steps against clients that name steps that never run.
#include "worker/worker.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "framework/rendezvous.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// RecvTensor for steps that never run (any client can name any step id) used to leave a
// rendezvous behind for each, forever. Beyond a bound, the oldest such steps are dropped and
// their waiters fail with ABORTED; a step that runs is never dropped.
TEST(WorkerTest, StepsThatNeverRunAreBounded) {
  Worker worker({});
  std::vector<DeviceAttributes> devices;
  ASSERT_OK(worker.GetStatus(&devices));
  const std::string key = Rendezvous::CreateKey(devices[0].name(), devices[0].incarnation(),
                                                devices[0].name(), "t:0", FrameAndIter{});
  constexpr int kCalls = 3000;
  std::vector<RecvTensorRequest> requests(kCalls);
  std::vector<RecvTensorResponse> responses(kCalls);
  std::atomic<int> aborted{0}, answered{0};
  for (int i = 0; i < kCalls; ++i) {
    requests[i].step_id = 1000 + i;
    requests[i].rendezvous_key = key;
    worker.RecvTensorAsync(&requests[i], &responses[i], [&](const absl::Status& s) {
      ++answered;
      if (s.code() == absl::StatusCode::kAborted) ++aborted;
    });
  }
  EXPECT_LE(worker.NumSteps(), 1024u);
  EXPECT_EQ(aborted.load(), kCalls - static_cast<int>(worker.NumSteps()));
  EXPECT_EQ(answered.load(), aborted.load());
  // A later call for a dropped step fails at once instead of waiting.
  RecvTensorRequest late;
  late.step_id = 1000;
  late.rendezvous_key = key;
  RecvTensorResponse late_response;
  absl::Status late_status;
  worker.RecvTensorAsync(&late, &late_response, [&](const absl::Status& s) { late_status = s; });
  EXPECT_EQ(late_status.code(), absl::StatusCode::kAborted);
  for (int i = 0; i < kCalls; ++i) worker.CleanupGraph(1000 + i);
  EXPECT_EQ(worker.NumSteps(), 0u);
}

}  // namespace
}  // namespace sluice
