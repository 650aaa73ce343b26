// MasterSession's concurrency contract: registration happens outside the session's lock and on
// every worker at once, so a slow worker never stalls a Run of an already registered
// signature. Waits are on explicit gates, not on time, so the tests do not depend on speed.
#include "master/master_session.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "master/worker_cache.h"
#include "worker/worker.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Long enough never to fire when things work; short enough to fail rather than hang.
constexpr absl::Duration kGateTimeout = absl::Seconds(60);

// A Worker whose RegisterGraph can be made to wait at a gate, and can be made to fail.
class GatedWorker : public WorkerInterface {
 public:
  explicit GatedWorker(int task) : worker_({.job = "localhost", .task = task}) {}

  // The next RegisterGraph calls wait until Open() (or the gate's timeout).
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void FailRegistration(bool fail) {
    absl::MutexLock lock(&mu_);
    fail_ = fail;
  }
  // Waits until a RegisterGraph call is waiting at the closed gate.
  bool WaitUntilRegistering() {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&waiting_), kGateTimeout);
  }
  int registrations() {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  int live_graphs() {
    absl::MutexLock lock(&mu_);
    return live_;
  }

  absl::Status GetStatus(std::vector<DeviceAttributes>* devices) override {
    return worker_.GetStatus(devices);
  }
  absl::Status RegisterGraph(const RegisterGraphRequest& request,
                             RegisterGraphResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      ++registrations_;
      waiting_ = !open_;
      bool opened = mu_.AwaitWithTimeout(absl::Condition(&open_), kGateTimeout);
      waiting_ = false;
      if (!opened) return absl::DeadlineExceededError("the gate never opened");
      if (fail_) return absl::UnavailableError("registration refused by the test");
    }
    absl::Status s = worker_.RegisterGraph(request, response);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      ++live_;
      handles_.push_back(response->graph_handle);
    }
    return s;
  }
  // Drops every graph registered here, as a restarted worker has none.
  void LoseGraphs() {
    std::vector<std::string> handles;
    {
      absl::MutexLock lock(&mu_);
      handles.swap(handles_);
    }
    for (const std::string& h : handles) DeregisterGraph(h).IgnoreError();
  }
  absl::Status DeregisterGraph(const std::string& graph_handle) override {
    absl::Status s = worker_.DeregisterGraph(graph_handle);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      --live_;
    }
    return s;
  }
  void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                     StatusCallback done) override {
    worker_.RunGraphAsync(request, response, std::move(done));
  }
  void AbortStep(int64_t step_id, const absl::Status& status) override {
    worker_.AbortStep(step_id, status);
  }
  void CleanupGraph(int64_t step_id) override { worker_.CleanupGraph(step_id); }

  const std::string& task_name() const { return worker_.task_name(); }

 private:
  Worker worker_;
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  bool waiting_ ABSL_GUARDED_BY(mu_) = false;
  bool fail_ ABSL_GUARDED_BY(mu_) = false;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> handles_ ABSL_GUARDED_BY(mu_);
};

// Two constants on each of two tasks: fetching {a0, a1} or {b0, b1} registers a graph on both.
constexpr char kTwoTasks[] = R"(
  node { name: "a0" op: "Const" device: "/job:localhost/replica:0/task:0/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
  node { name: "a1" op: "Const" device: "/job:localhost/replica:0/task:1/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
  node { name: "b0" op: "Const" device: "/job:localhost/replica:0/task:0/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
  node { name: "b1" op: "Const" device: "/job:localhost/replica:0/task:1/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 4 } } } }
)";

class MasterSessionTest : public ::testing::Test {
 protected:
  MasterSessionTest() : w0_(0), w1_(1) {
    cache_.Add(w0_.task_name(), &w0_);
    cache_.Add(w1_.task_name(), &w1_);
    std::vector<DeviceAttributes> devices, more;
    EXPECT_OK(w0_.GetStatus(&devices));
    EXPECT_OK(w1_.GetStatus(&more));
    devices.insert(devices.end(), more.begin(), more.end());
    session_ = std::make_unique<MasterSession>("test_session", &cache_, devices, ConfigProto());
    GraphDef def;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kTwoTasks, &def));
    EXPECT_OK(session_->Create(def));
  }
  ~MasterSessionTest() override {
    w0_.Open();
    w1_.Open();
  }

  // Runs a step fetching `fetches` and checks the fetched scalars.
  absl::Status RunAndCheck(std::vector<std::string> fetches, std::vector<float> want) {
    RunStepRequest req;
    req.fetches = std::move(fetches);
    RunStepResponse resp;
    SL_RETURN_IF_ERROR(session_->Run(req, &resp));
    if (resp.outputs.size() != want.size()) return absl::InternalError("wrong output count");
    for (size_t i = 0; i < want.size(); ++i) {
      if (resp.outputs[i].flat<float>()[0] != want[i]) return absl::InternalError("wrong value");
    }
    return absl::OkStatus();
  }

  GatedWorker w0_, w1_;
  LocalWorkerCache cache_;
  std::unique_ptr<MasterSession> session_;
};

TEST_F(MasterSessionTest, SlowRegistrationDoesNotDelayARegisteredSignature) {
  ASSERT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));

  w1_.Close();
  absl::Status new_signature;
  std::thread registering([&] { new_signature = RunAndCheck({"b0", "b1"}, {3, 4}); });
  ASSERT_TRUE(w1_.WaitUntilRegistering());

  // The registered signature runs while the other waits at task 1's gate.
  absl::Notification ran;
  absl::Status cached;
  std::thread run_cached([&] {
    cached = RunAndCheck({"a0", "a1"}, {1, 2});
    ran.Notify();
  });
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(kGateTimeout))
      << "a Run of a registered signature waited for another signature's registration";
  w1_.Open();
  run_cached.join();
  registering.join();
  EXPECT_OK(cached);
  EXPECT_OK(new_signature);
}

TEST_F(MasterSessionTest, RegistersOnEveryWorkerAtOnce) {
  // Each worker's RegisterGraph waits until the other's has started: sequential registration
  // would wait at the first gate forever (here: until the gate's timeout fails the step).
  w0_.Close();
  w1_.Close();
  absl::Status status;
  std::thread run([&] { status = RunAndCheck({"a0", "a1"}, {1, 2}); });
  ASSERT_TRUE(w0_.WaitUntilRegistering());
  ASSERT_TRUE(w1_.WaitUntilRegistering());
  w0_.Open();
  w1_.Open();
  run.join();
  EXPECT_OK(status);
}

TEST_F(MasterSessionTest, ConcurrentRunsOfANewSignatureRegisterOnce) {
  w0_.Close();
  std::vector<std::thread> runs;
  std::vector<absl::Status> statuses(4);
  for (int i = 0; i < 4; ++i) {
    runs.emplace_back([&, i] { statuses[i] = RunAndCheck({"a0", "a1"}, {1, 2}); });
  }
  ASSERT_TRUE(w0_.WaitUntilRegistering());
  w0_.Open();
  for (std::thread& t : runs) t.join();
  for (const absl::Status& s : statuses) EXPECT_OK(s);
  EXPECT_EQ(w0_.registrations(), 1);
  EXPECT_EQ(w1_.registrations(), 1);
}

TEST_F(MasterSessionTest, FailedRegistrationLeavesNothingRegisteredAndIsRetried) {
  w1_.FailRegistration(true);
  absl::Status s = RunAndCheck({"a0", "a1"}, {1, 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:localhost/replica:0/task:1"));
  EXPECT_EQ(w0_.live_graphs(), 0);  // Task 0's part was deregistered again.
  EXPECT_EQ(w1_.live_graphs(), 0);

  w1_.FailRegistration(false);
  EXPECT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));
  EXPECT_EQ(w0_.live_graphs(), 1);
  EXPECT_EQ(w1_.live_graphs(), 1);
  EXPECT_OK(session_->Close());
  EXPECT_EQ(w0_.live_graphs(), 0);
  EXPECT_EQ(w1_.live_graphs(), 0);
}

// A step that finds its graph gone (the worker restarted) fails, and the next Run of the same
// request registers the graphs again rather than reusing what it ran last time.
TEST_F(MasterSessionTest, AWorkerThatLostItsGraphsGetsThemAgainOnTheNextRun) {
  ASSERT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));
  ASSERT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));
  EXPECT_EQ(w1_.registrations(), 1);
  w1_.LoseGraphs();
  absl::Status s = RunAndCheck({"a0", "a1"}, {1, 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  ASSERT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));
  ASSERT_OK(RunAndCheck({"a0", "a1"}, {1, 2}));
  EXPECT_EQ(w1_.registrations(), 2);
  EXPECT_EQ(w1_.live_graphs(), 1);
}

// Handles are 128 random bits: another client cannot guess one, and a master started anew
// (handles used to restart at "session_0") never hands out a stale client's handle again.
TEST(MasterTest, SessionHandlesAreRandomAndNotReusedByANewMaster) {
  Worker worker({});
  LocalWorkerCache cache;
  cache.Add(worker.task_name(), &worker);
  std::string old_handle;
  {
    Master master(&cache);
    auto a = master.CreateSession(GraphDef(), ConfigProto());
    auto b = master.CreateSession(GraphDef(), ConfigProto());
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_NE(*a, *b);
    for (const std::string& h : {*a, *b}) {
      ASSERT_EQ(h.size(), std::string("session_").size() + 32) << h;
      EXPECT_EQ(h.find_first_not_of("0123456789abcdef", 8), std::string::npos) << h;
    }
    old_handle = *a;
  }
  Master restarted(&cache);
  auto fresh = restarted.CreateSession(GraphDef(), ConfigProto());
  ASSERT_OK(fresh);
  EXPECT_NE(*fresh, old_handle);
  RunStepRequest req;
  req.session_handle = old_handle;
  RunStepResponse resp;
  EXPECT_EQ(restarted.RunStep(req, &resp).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(restarted.CloseSession(old_handle).code(), absl::StatusCode::kNotFound);
}

// Clients that never close their sessions cannot make a master hold them forever: there is a
// limit on open sessions, and sessions idle beyond the timeout are closed (their graphs
// deregistered) when the next one is created. A session in use is never idle.
TEST(MasterTest, SessionsAreBoundedAndIdleOnesExpire) {
  GatedWorker worker(0);
  LocalWorkerCache cache;
  cache.Add(worker.task_name(), &worker);
  absl::Time now = absl::FromUnixSeconds(1000);
  MasterOptions options;
  options.max_sessions = 2;
  options.session_idle_timeout = absl::Seconds(60);
  options.now = [&now] { return now; };
  Master master(&cache, options);
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kTwoTasks, &def));
  def.mutable_node()->DeleteSubrange(1, 1);  // Task 0's nodes only: a0 and b0.
  def.mutable_node()->DeleteSubrange(2, 1);

  SL_ASSERT_OK_AND_ASSIGN(std::string a, master.CreateSession(def, ConfigProto()));
  SL_ASSERT_OK_AND_ASSIGN(std::string b, master.CreateSession(def, ConfigProto()));
  RunStepRequest run;
  run.session_handle = a;
  run.fetches = {"a0"};
  RunStepResponse resp;
  ASSERT_OK(master.RunStep(run, &resp));
  EXPECT_EQ(worker.live_graphs(), 1);

  absl::Status full = master.CreateSession(def, ConfigProto()).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(full.message()), HasSubstr("2 sessions"));

  // b is used at 1040; at 1090 only a (last used at 1000) has been idle for over 60 s.
  now += absl::Seconds(40);
  run.session_handle = b;
  run.fetches = {"b0"};
  ASSERT_OK(master.RunStep(run, &resp));
  now += absl::Seconds(50);
  SL_ASSERT_OK_AND_ASSIGN(std::string c, master.CreateSession(def, ConfigProto()));
  EXPECT_EQ(worker.live_graphs(), 1) << "a's graph was not deregistered";
  run.session_handle = a;
  run.fetches = {"a0"};
  absl::Status expired = master.RunStep(run, &resp);
  EXPECT_EQ(expired.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(expired.message()), HasSubstr("idle too long"));
  run.session_handle = b;
  run.fetches = {"b0"};
  EXPECT_OK(master.RunStep(run, &resp));
  EXPECT_OK(master.CloseSession(c));
}

}  // namespace
}  // namespace sluice
