// Rendezvous keys, and the Rendezvous contract (Send, RecvAsync, StartAbort and the blocking
// Recv built on them) through the in-process implementation the workers use.
#include "framework/rendezvous.h"

#include <thread>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/local_rendezvous.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr char kSrc[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kDst[] = "/job:worker/replica:0/task:1/device:CPU:1";

Rendezvous::ParsedKey Key(const std::string& edge, FrameAndIter frame_iter = {}) {
  auto key = Rendezvous::ParseKey(Rendezvous::CreateKey(kSrc, 0x1234abcd, kDst, edge, frame_iter));
  EXPECT_OK(key);
  return *key;
}

TEST(RendezvousKeyTest, CreateKeyAndParseKeyRoundTrip) {
  const std::string key = Rendezvous::CreateKey(kSrc, 0xfedcba9876543210ull, kDst, "layer/x:1", {2, 5});
  EXPECT_EQ(key, absl::StrCat(kSrc, ";fedcba9876543210;", kDst, ";layer/x:1;2:5"));
  SL_ASSERT_OK_AND_ASSIGN(Rendezvous::ParsedKey parsed, Rendezvous::ParseKey(key));
  EXPECT_EQ(parsed.full_key, key);
  EXPECT_EQ(parsed.src_device, kSrc);
  EXPECT_EQ(parsed.src_incarnation, 0xfedcba9876543210ull);
  EXPECT_EQ(parsed.dst_device, kDst);
  EXPECT_EQ(parsed.edge_name, "layer/x:1");
}

TEST(RendezvousKeyTest, ParseKeyRefusesMalformedKeysNamingThem) {
  for (const std::string bad : {"", "a;0;b;x", "a;0;b;x;0:0;extra", ";0;b;x;0:0", "a;0;;x;0:0", "a;0;b;;0:0",
                                "a;not-hex;b;x;0:0"}) {
    auto parsed = Rendezvous::ParseKey(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("'" + bad + "'"));
  }
}

TEST(RendezvousTest, SendBeforeRecvDeliversTheValue) {
  LocalRendezvous r;
  ASSERT_OK(r.Send(Key("x:0"), Tensor::Scalar<float>(2.5f)));
  Tensor got;
  ASSERT_OK(r.Recv(Key("x:0"), &got));
  EXPECT_EQ(got.scalar<float>(), 2.5f);
}

TEST(RendezvousTest, RecvBeforeSendIsCalledBackOnSend) {
  LocalRendezvous r;
  bool called = false;
  Tensor got;
  r.RecvAsync(Key("x:0"), [&](const absl::Status& s, const Tensor& t) {
    EXPECT_OK(s);
    got = t;
    called = true;
  });
  EXPECT_FALSE(called);  // Nothing sent yet.
  ASSERT_OK(r.Send(Key("x:0"), Tensor::Scalar<int32_t>(7)));
  ASSERT_TRUE(called);
  EXPECT_EQ(got.scalar<int32_t>(), 7);
}

TEST(RendezvousTest, KeysDifferingOnlyInFrameOrIterationDoNotMix) {
  LocalRendezvous r;
  ASSERT_OK(r.Send(Key("x:0", {0, 1}), Tensor::Scalar<int32_t>(1)));
  ASSERT_OK(r.Send(Key("x:0", {0, 0}), Tensor::Scalar<int32_t>(0)));
  Tensor t0, t1;
  ASSERT_OK(r.Recv(Key("x:0", {0, 0}), &t0));
  ASSERT_OK(r.Recv(Key("x:0", {0, 1}), &t1));
  EXPECT_EQ(t0.scalar<int32_t>(), 0);
  EXPECT_EQ(t1.scalar<int32_t>(), 1);
}

TEST(RendezvousTest, BlockedRecvsGetValuesSentFromOtherThreads) {
  LocalRendezvous r;
  constexpr int kEdges = 8;
  std::vector<int32_t> got(kEdges, -1);
  std::vector<std::thread> receivers;
  for (int i = 0; i < kEdges; ++i) {
    receivers.emplace_back([&, i] {
      Tensor t;
      ASSERT_OK(r.Recv(Key(absl::StrCat("e", i, ":0")), &t));
      got[i] = t.scalar<int32_t>();
    });
  }
  for (int i = kEdges - 1; i >= 0; --i) ASSERT_OK(r.Send(Key(absl::StrCat("e", i, ":0")), Tensor::Scalar<int32_t>(i)));
  for (auto& t : receivers) t.join();
  for (int i = 0; i < kEdges; ++i) EXPECT_EQ(got[i], i);
}

TEST(RendezvousTest, AbortWakesWaitersWithTheErrorAndFailsLaterCalls) {
  LocalRendezvous r;
  absl::Status async_status;
  r.RecvAsync(Key("a:0"), [&](const absl::Status& s, const Tensor&) { async_status = s; });
  // A blocking Recv on another thread: whether it starts waiting before or after the abort,
  // it ends with the abort's status.
  absl::Status blocking_status;
  std::thread waiter([&] {
    Tensor t;
    blocking_status = r.Recv(Key("b:0"), &t);
  });
  r.StartAbort(absl::UnavailableError("task 1 is gone"));
  waiter.join();
  EXPECT_EQ(async_status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(async_status.message(), HasSubstr("task 1 is gone"));
  EXPECT_EQ(blocking_status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.Send(Key("a:0"), Tensor::Scalar<float>(1)).code(), absl::StatusCode::kUnavailable);
  Tensor t;
  EXPECT_EQ(r.Recv(Key("c:0"), &t).code(), absl::StatusCode::kUnavailable);
}

TEST(RendezvousTest, RecvOfAValueNeverSentEndsAtItsDeadlineNamingTheTensor) {
  LocalRendezvous r;
  Tensor t;
  absl::Status s = r.Recv(Key("never:0"), &t, absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("'never:0'"));
}

}  // namespace
}  // namespace sluice
