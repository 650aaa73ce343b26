#include "rpc/cluster_spec.h"

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(ClusterSpecTest, ParsesJobsAndTasksInOrder) {
  auto cluster = ParseClusterSpec("worker=127.0.0.1:2222, host-b:2223 ;ps=[::1]:2224");
  ASSERT_OK(cluster);
  ASSERT_EQ(cluster->job_size(), 2);
  EXPECT_EQ(cluster->job(0).name(), "worker");
  EXPECT_EQ(cluster->job(0).tasks().at(0), "127.0.0.1:2222");
  EXPECT_EQ(cluster->job(0).tasks().at(1), "host-b:2223");
  EXPECT_EQ(cluster->job(1).tasks().at(0), "[::1]:2224");
  EXPECT_EQ(ClusterSpecString(*cluster), "worker=127.0.0.1:2222,host-b:2223;ps=[::1]:2224");
  EXPECT_EQ(*TaskAddress(*cluster, "worker", 1), "host-b:2223");
  EXPECT_EQ(TaskAddress(*cluster, "worker", 2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(TaskAddress(*cluster, "chief", 0).status().code(), absl::StatusCode::kNotFound);
  auto all = TaskAddresses(*cluster);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.at("/job:worker/replica:0/task:1"), "host-b:2223");
  EXPECT_EQ(all.at("/job:ps/replica:0/task:0"), "[::1]:2224");
}

TEST(ClusterSpecTest, TrailingSeparatorIsFine) {
  auto cluster = ParseClusterSpec("worker=localhost:1;");
  ASSERT_OK(cluster);
  EXPECT_EQ(cluster->job_size(), 1);
}

TEST(ClusterSpecTest, RejectsMalformedSpecs) {
  for (const char* spec : {"", "worker", "worker=", "worker=host", "worker=host:0",
                           "worker=host:70000", "worker=host:port", "=h:1", "9job=h:1",
                           "worker=h:1;worker=h:2", "worker=h:1,h:1", "worker=::1:5",
                           "localhost=h:1", "worker=h:1,,h:2"}) {
    auto cluster = ParseClusterSpec(spec);
    EXPECT_FALSE(cluster.ok()) << "'" << spec << "' parsed";
    if (!cluster.ok()) {
      EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(ClusterSpecTest, ErrorsSayWhatIsWrong) {
  auto cluster = ParseClusterSpec("worker=h:1;ps=h:99999");
  ASSERT_FALSE(cluster.ok());
  EXPECT_NE(cluster.status().message().find("'h:99999' is not an address"), std::string::npos)
      << cluster.status();
}

}  // namespace
}  // namespace sluice
