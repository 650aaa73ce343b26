#include "worker/local_rendezvous.h"

#include <thread>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

Rendezvous::ParsedKey Key(const std::string& name) {
  return *Rendezvous::ParseKey(Rendezvous::CreateKey("/job:a/replica:0/task:0/device:CPU:0", 7,
                                                     "/job:a/replica:0/task:0/device:CPU:1", name,
                                                     FrameAndIter{}));
}

TEST(RendezvousKeyTest, RoundTripsAndRejectsGarbage) {
  std::string key = Rendezvous::CreateKey("/job:a/replica:0/task:0/device:CPU:0", 255,
                                          "/job:b/replica:0/task:1/device:CPU:0", "x:0",
                                          FrameAndIter{0, 0});
  EXPECT_EQ(key,
            "/job:a/replica:0/task:0/device:CPU:0;00000000000000ff;"
            "/job:b/replica:0/task:1/device:CPU:0;x:0;0:0");
  auto p = Rendezvous::ParseKey(key);
  ASSERT_OK(p);
  EXPECT_EQ(p->src_incarnation, 255u);
  EXPECT_EQ(p->edge_name, "x:0");
  EXPECT_EQ(p->dst_device, "/job:b/replica:0/task:1/device:CPU:0");
  EXPECT_FALSE(Rendezvous::ParseKey("a;b;c").ok());
  EXPECT_FALSE(Rendezvous::ParseKey("a;zz;c;d;0:0").ok());
}

TEST(LocalRendezvousTest, SendThenRecv) {
  LocalRendezvous r;
  ASSERT_OK(r.Send(Key("x"), Tensor::Scalar<float>(3)));
  Tensor got;
  ASSERT_OK(r.Recv(Key("x"), &got));
  EXPECT_EQ(got.scalar<float>(), 3);
}

TEST(LocalRendezvousTest, RecvWaitsForSendFromAnotherThread) {
  LocalRendezvous r;
  std::thread sender([&] { ASSERT_OK(r.Send(Key("y"), Tensor::Scalar<int32_t>(9))); });
  Tensor got;
  ASSERT_OK(r.Recv(Key("y"), &got));
  EXPECT_EQ(got.scalar<int32_t>(), 9);
  sender.join();
}

TEST(LocalRendezvousTest, AbortFailsWaitersAndLaterCalls) {
  LocalRendezvous r;
  absl::Status seen;
  r.RecvAsync(Key("z"), [&](const absl::Status& s, const Tensor&) { seen = s; });
  r.StartAbort(absl::UnavailableError("task 1 died"));
  EXPECT_EQ(seen.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.Send(Key("z"), Tensor::Scalar<float>(1)).code(), absl::StatusCode::kUnavailable);
  Tensor t;
  EXPECT_EQ(r.Recv(Key("w"), &t).code(), absl::StatusCode::kUnavailable);
}

TEST(LocalRendezvousTest, RecvTimesOut) {
  LocalRendezvous r;
  Tensor t;
  EXPECT_EQ(r.Recv(Key("never"), &t, absl::Milliseconds(10)).code(),
            absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace sluice
