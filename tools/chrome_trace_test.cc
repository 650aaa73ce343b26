#include "tools/chrome_trace.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(ChromeTraceTest, OneTrackPerDeviceAndOneEventPerNode) {
  StepStats stats;
  DeviceStepStats* task1 = stats.add_dev_stats();
  task1->set_device("/job:worker/replica:0/task:1/device:CPU:0");
  NodeExecStats* recv = task1->add_node_stats();
  recv->set_node_name("_recv/x_0/0");
  recv->set_timeline_label("_Recv");
  recv->set_all_start_nanos(2'000'500);
  recv->set_all_end_rel_nanos(1'500);
  recv->set_thread_id(77);
  DeviceStepStats* task0 = stats.add_dev_stats();
  task0->set_device("/job:worker/replica:0/task:0/device:CPU:0");
  NodeExecStats* send = task0->add_node_stats();
  send->set_node_name("_send/x_0/0");
  send->set_timeline_label("_Send");
  send->set_all_start_micros(1999);  // Micros only: an older recorder.
  send->set_all_end_rel_micros(1);
  send->set_thread_id(5);
  NodeExecStats* quoted = task0->add_node_stats();
  quoted->set_node_name("a\"b");
  quoted->set_timeline_label("Relu");
  quoted->set_thread_id(6);

  const std::string json = StepStatsToChromeTrace(stats);
  // Devices in name order: task 0 is process 0.
  EXPECT_THAT(json, HasSubstr(R"({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "/job:worker/replica:0/task:0/device:CPU:0"}})"));
  EXPECT_THAT(json, HasSubstr(R"({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/job:worker/replica:0/task:1/device:CPU:0"}})"));
  EXPECT_THAT(json, HasSubstr(R"({"ph": "X", "pid": 1, "tid": 0, "ts": 2000.500, "dur": 1.500, "name": "_recv/x_0/0", "cat": "_Recv")"));
  EXPECT_THAT(json, HasSubstr(R"({"ph": "X", "pid": 0, "tid": 0, "ts": 1999.000, "dur": 1.000, "name": "_send/x_0/0", "cat": "_Send")"));
  EXPECT_THAT(json, HasSubstr(R"("pid": 0, "tid": 1, "ts": 0.000, "dur": 0.000, "name": "a\"b")"));
  EXPECT_EQ(json.substr(0, 17), "{\"displayTimeUnit");
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

}  // namespace
}  // namespace sluice
