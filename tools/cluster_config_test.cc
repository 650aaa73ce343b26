#include "tools/cluster_config.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/cluster_spec.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// gmock's string matchers take std::string, not absl::string_view.
std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(ParseTfConfigTest, ClusterAndTask) {
  SL_ASSERT_OK_AND_ASSIGN(
      TfConfig config,
      ParseTfConfig(R"({"cluster": {"worker": ["h0:2222", "h1:2222"], "ps": ["h2:2222"],
                                    "chief": ["h3:2222"]},
                        "task": {"type": "worker", "index": 1},
                        "environment": "cloud", "rpc_layer": "grpc"})"));
  // Jobs in name order, tasks in list order.
  EXPECT_EQ(ClusterSpecString(config.cluster), "chief=h3:2222;ps=h2:2222;worker=h0:2222,h1:2222");
  EXPECT_EQ(config.task_type, "worker");
  EXPECT_EQ(config.task_index, 1);
}

TEST(ParseTfConfigTest, EvaluatorJobAndIPv6) {
  SL_ASSERT_OK_AND_ASSIGN(TfConfig config,
                          ParseTfConfig(R"({"cluster": {"evaluator": ["[::1]:2222"]},
                                            "task": {"type": "evaluator", "index": 0.0}})"));
  EXPECT_EQ(ClusterSpecString(config.cluster), "evaluator=[::1]:2222");
  EXPECT_EQ(config.task_type, "evaluator");
  EXPECT_EQ(config.task_index, 0);
}

TEST(ParseTfConfigTest, NoTaskOrNoIndex) {
  for (const char* json : {R"({"cluster": {"worker": ["h0:1"]}})",
                           R"({"cluster": {"worker": ["h0:1"]}, "task": {}})",
                           R"({"cluster": {"worker": ["h0:1"]}, "task": null})"}) {
    SL_ASSERT_OK_AND_ASSIGN(TfConfig config, ParseTfConfig(json));
    EXPECT_EQ(config.task_type, "") << json;
    EXPECT_EQ(config.task_index, -1) << json;
  }
  // TensorFlow's default index.
  SL_ASSERT_OK_AND_ASSIGN(TfConfig config,
                          ParseTfConfig(R"({"cluster": {"worker": ["h0:1", "h1:1"]}, "task": {"type": "worker"}})"));
  EXPECT_EQ(config.task_type, "worker");
  EXPECT_EQ(config.task_index, 0);
}

// Every malformed TF_CONFIG: INVALID_ARGUMENT, "TF_CONFIG: " then the offending key.
TEST(ParseTfConfigTest, MalformedNamesTheKey) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"(not json)", "TF_CONFIG: not a JSON object"},
      {R"(["worker"])", "TF_CONFIG: not a JSON object"},
      {R"({"cluster": {"worker": ["h0:1"]})", "TF_CONFIG: not a JSON object"},  // Unclosed.
      {R"({"task": {"type": "worker", "index": 0}})", "TF_CONFIG: cluster: missing"},
      {R"({"cluster": ["h0:1"]})", "TF_CONFIG: cluster: expected an object of jobs, got a list"},
      {R"({"cluster": "worker=h0:1"})", "TF_CONFIG: cluster: expected an object"},
      {R"({"cluster": {}})", "TF_CONFIG: cluster: names no job"},
      {R"({"cluster": {"worker": "h0:1"}})", "TF_CONFIG: cluster.worker: expected a list"},
      {R"({"cluster": {"worker": []}})", "TF_CONFIG: cluster.worker: has no tasks"},
      {R"({"cluster": {"worker": ["h0:1", 2222]}})",
       "TF_CONFIG: cluster.worker[1]: expected a \"host:port\" string, got the number 2222"},
      {R"({"cluster": {"worker": ["h0:1", {"a": 1}]}})", "TF_CONFIG: cluster.worker[1]: expected"},
      {R"({"cluster": {"worker": ["h0"]}})",
       "TF_CONFIG: cluster.worker[0]: 'h0' is not an address of the form host:port"},
      {R"({"cluster": {"worker": ["h0:1,h1:1"]}})", "TF_CONFIG: cluster.worker[0]: 'h0:1,h1:1' is not an address"},
      {R"({"cluster": {"worker": ["h0:99999"]}})", "TF_CONFIG: cluster.worker[0]: 'h0:99999' is not an address"},
      {R"({"cluster": {"worker": ["::1:2222"]}})", "TF_CONFIG: cluster.worker[0]: '::1:2222': write IPv6 hosts"},
      {R"({"cluster": {"worker": ["h0:1"], "ps": ["h0:1"]}})",
       "TF_CONFIG: cluster.worker[0]: address h0:1 is also cluster.ps[0]'s"},
      {R"({"cluster": {"localhost": ["h0:1"]}})", "TF_CONFIG: cluster.localhost: job 'localhost' is reserved"},
      {R"({"cluster": {"work er": ["h0:1"]}})", "TF_CONFIG: cluster.work er: 'work er' is not a job name"},
      {R"({"cluster": {"a=b": ["h0:1"]}})", "TF_CONFIG: cluster.a=b: 'a=b' is not a job name"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": "worker"})", "TF_CONFIG: task: expected an object"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"index": 0}})", "TF_CONFIG: task.type: missing"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": 1, "index": 0}})",
       "TF_CONFIG: task.type: expected a job name"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "chief", "index": 0}})",
       "TF_CONFIG: task.type: 'chief' is not a job of the cluster (its jobs: worker)"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "worker", "index": 1}})",
       "TF_CONFIG: task.index: 1 is out of range: job 'worker' has 1 task (0 to 0)"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "worker", "index": -1}})",
       "TF_CONFIG: task.index: -1 is out of range"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "worker", "index": 0.5}})",
       "TF_CONFIG: task.index: expected an integer, got the number 0.5"},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "worker", "index": "0"}})",
       "TF_CONFIG: task.index: expected an integer, got the string \"0\""},
      {R"({"cluster": {"worker": ["h0:1"]}, "task": {"type": "worker", "index": 1e300}})",
       "TF_CONFIG: task.index: 1e+300 is out of range"},
      {R"({"cluster": {"worker": ["h0:1"]}, "rpc_layer": "grpc+verbs"})",
       "TF_CONFIG: rpc_layer: the string \"grpc+verbs\" is not supported"},
  };
  for (const auto& [json, message] : cases) {
    absl::StatusOr<TfConfig> config = ParseTfConfig(json);
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(Message(config.status()), StartsWith(message)) << json;
  }
}

TEST(ParseClusterDefTextTest, JobsAndTasks) {
  SL_ASSERT_OK_AND_ASSIGN(
      ClusterDef cluster,
      ParseClusterDefText(R"(job { name: "worker" tasks { key: 1 value: "localhost:2223" }
                                                  tasks { key: 0 value: "localhost:2222" } }
                             job { name: "ps" tasks { key: 0 value: "localhost:2224" } })",
                          "test"));
  EXPECT_EQ(ClusterSpecString(cluster), "worker=localhost:2222,localhost:2223;ps=localhost:2224");
}

TEST(ParseClusterDefTextTest, RefusesGapsAndBadText) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"(job { name: "worker" tasks { key: 0 value: "h:1" } tasks { key: 2 value: "h:2" } })",
       "f: job 'worker': has task 2 but no task 1 (tasks are numbered from 0 without gaps)"},
      {R"(job { name: "worker" tasks { key: 1 value: "h:1" } })", "f: job 'worker': has task 1 but no task 0"},
      {R"(job { name: "worker" tasks { key: -1 value: "h:1" } })", "f: job 'worker': has task -1 but no task 0"},
      {R"(job { name: "worker" })", "f: job 'worker': has no tasks"},
      {"", "f: ClusterDef: names no job"},
      {R"(job { name: "worker" tasks { key: 0 value: "h:1" } } job { name: "worker" tasks { key: 0 value: "h:2" } })",
       "f: job 'worker': appears twice"},
      {R"(job { name: "localhost" tasks { key: 0 value: "h:1" } })", "f: job 'localhost': job 'localhost' is reserved"},
      {R"(job { name: "worker" tasks { key: 0 value: "h" } })", "f: job 'worker' task 0: 'h' is not an address"},
      {R"(job { name: "worker" tasks { key: 0 value: "h:1" } tasks { key: 1 value: "h:1" } })",
       "f: job 'worker' task 1: address h:1 is also job 'worker' task 0's"},
      {R"(job { nme: "worker" })", "f: not a ClusterDef in text format (line 1 column"},
      {R"(worker=h:1)", "f: not a ClusterDef in text format"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<ClusterDef> cluster = ParseClusterDefText(text, "f");
    EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(Message(cluster.status()), StartsWith(message)) << text;
  }
}

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadClusterFlagTest, FileOrSpec) {
  const std::string path = WriteTempFile(
      "cluster.pbtxt", R"(job { name: "worker" tasks { key: 0 value: "localhost:2222" } })");
  SL_ASSERT_OK_AND_ASSIGN(ClusterDef from_file, ReadClusterFlag(path));
  EXPECT_EQ(ClusterSpecString(from_file), "worker=localhost:2222");
  SL_ASSERT_OK_AND_ASSIGN(ClusterDef from_spec, ReadClusterFlag("worker=localhost:2222;ps=localhost:2223"));
  EXPECT_EQ(ClusterSpecString(from_spec), "worker=localhost:2222;ps=localhost:2223");

  const std::string gap = WriteTempFile("gap.pbtxt", R"(job { name: "worker" tasks { key: 1 value: "h:1" } })");
  EXPECT_THAT(Message(ReadClusterFlag(gap).status()),
              StartsWith("--cluster file '" + gap + "': job 'worker': has task 1 but no task 0"));
  EXPECT_THAT(Message(ReadClusterFlag("/no/such/cluster.pbtxt").status()),
              StartsWith("--cluster '/no/such/cluster.pbtxt': no such file"));
  const std::string dir = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp");
  EXPECT_THAT(Message(ReadClusterFlag(dir).status()), HasSubstr("not a regular file"));
  EXPECT_THAT(Message(ReadClusterFlag("worker=h0").status()), HasSubstr("'h0' is not an address"));
}

TEST(TfConfigTargetTest, OwnTasksMaster) {
  setenv("TF_CONFIG", R"({"cluster": {"worker": ["h0:2222", "h1:2223"]}, "task": {"type": "worker", "index": 1}})", 1);
  SL_ASSERT_OK_AND_ASSIGN(std::string target, TfConfigTarget());
  EXPECT_EQ(target, "grpc://h1:2223");

  setenv("TF_CONFIG", R"({"cluster": {"worker": ["h0:2222"]}})", 1);
  EXPECT_THAT(Message(TfConfigTarget().status()), StartsWith("--target tf_config: TF_CONFIG names no task"));
  setenv("TF_CONFIG", R"({"cluster": {"worker": 1}})", 1);
  EXPECT_THAT(Message(TfConfigTarget().status()),
              StartsWith("--target tf_config: TF_CONFIG: cluster.worker: expected a list"));
  setenv("TF_CONFIG", "  ", 1);
  EXPECT_THAT(Message(TfConfigTarget().status()), StartsWith("--target tf_config: TF_CONFIG is not set"));
  unsetenv("TF_CONFIG");
  EXPECT_EQ(TfConfigFromEnvironment(), "");
  EXPECT_THAT(Message(TfConfigTarget().status()), StartsWith("--target tf_config: TF_CONFIG is not set"));
}

}  // namespace
}  // namespace sluice
