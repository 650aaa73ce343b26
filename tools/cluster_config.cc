#include "tools/cluster_config.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "rpc/cluster_spec.h"

namespace sluice {
namespace {

using google::protobuf::Value;

// A cluster file names hosts, never tensors: 16 MiB is hundreds of thousands of tasks.
constexpr uint64_t kMaxClusterFileBytes = uint64_t{16} << 20;

// Jobs by name, each with its addresses in task order.
using JobList = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Names a place in the source of a cluster: the whole (job empty), a job (task < 0) or a task.
using Where = std::function<std::string(const std::string& job, int task)>;

// ParseClusterSpec's message without the spec it quotes and the example it ends with: the
// caller names the key instead.
std::string SpecProblem(const absl::Status& status, absl::string_view spec) {
  absl::string_view m = status.message();
  absl::ConsumePrefix(&m, absl::StrCat("cluster spec '", spec, "': "));
  absl::ConsumeSuffix(&m, " (expected jobs like worker=host:port,host:port;ps=host:port)");
  return std::string(m);
}

// A job name as ParseClusterSpec takes one: a letter, then letters, digits, '_' or '-'.
bool ValidJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}

// Characters that would split or join parts of a spec string.
bool HasSpecSeparator(absl::string_view s) {
  for (char c : s) {
    if (c == ',' || c == ';' || c == '=' || absl::ascii_isspace(c)) return true;
  }
  return s.empty();
}

// The jobs checked as ParseClusterSpec checks a spec, each problem named by `where` after
// `source` ("TF_CONFIG: cluster.worker[1]: ..."); ParseClusterSpec of the whole has the last
// word, so the two can never disagree.
absl::StatusOr<ClusterDef> CheckedCluster(const JobList& jobs, absl::string_view source,
                                          const Where& where) {
  auto bad = [&](const std::string& job, int task, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", where(job, task), ": ", why));
  };
  if (jobs.empty()) return bad("", -1, "names no job");
  std::set<std::string> seen_jobs;
  std::map<std::string, std::string> seen_addresses;  // To the key of the task that has it.
  std::vector<std::string> parts;
  for (const auto& [name, addresses] : jobs) {
    if (!ValidJobName(name)) {
      return bad(name, -1, absl::StrCat("'", name,
                                        "' is not a job name (a letter, then letters, digits, '_' or '-')"));
    }
    if (name == "localhost") {
      return bad(name, -1, "job 'localhost' is reserved for the client's end of feeds and fetches");
    }
    if (!seen_jobs.insert(name).second) return bad(name, -1, "appears twice");
    if (addresses.empty()) return bad(name, -1, "has no tasks");
    for (int i = 0; i < static_cast<int>(addresses.size()); ++i) {
      const std::string& address = addresses[i];
      if (HasSpecSeparator(address)) {
        return bad(name, i, absl::StrCat("'", address, "' is not an address of the form host:port"));
      }
      const std::string one = absl::StrCat(name, "=", address);
      absl::StatusOr<ClusterDef> task = ParseClusterSpec(one);
      if (!task.ok()) return bad(name, i, SpecProblem(task.status(), one));
      auto [it, fresh] = seen_addresses.emplace(address, where(name, i));
      if (!fresh) return bad(name, i, absl::StrCat("address ", address, " is also ", it->second, "'s"));
    }
    parts.push_back(absl::StrCat(name, "=", absl::StrJoin(addresses, ",")));
  }
  const std::string spec = absl::StrJoin(parts, ";");
  absl::StatusOr<ClusterDef> cluster = ParseClusterSpec(spec);
  if (!cluster.ok()) return bad("", -1, SpecProblem(cluster.status(), spec));
  return cluster;
}

// What a JSON value is, for messages: "a string", "a list", ...
std::string KindOf(const Value& v) {
  switch (v.kind_case()) {
    case Value::kStructValue: return "an object";
    case Value::kListValue: return "a list";
    case Value::kStringValue: return absl::StrCat("the string \"", v.string_value(), "\"");
    case Value::kNumberValue: return absl::StrCat("the number ", v.number_value());
    case Value::kBoolValue: return v.bool_value() ? "true" : "false";
    default: return "null";
  }
}

absl::Status BadTfConfig(absl::string_view key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("TF_CONFIG: ", key, ": ", why));
}

std::string TfConfigKey(const std::string& job, int task) {
  if (job.empty()) return "cluster";
  return task < 0 ? absl::StrCat("cluster.", job) : absl::StrCat("cluster.", job, "[", task, "]");
}

// Keeps the first error protobuf's text parser reports, with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view json) {
  google::protobuf::Struct root;
  auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG: not a JSON object (", parsed.message().ToString(), ")"));
  }
  const auto& top = root.fields();
  if (auto rpc = top.find("rpc_layer"); rpc != top.end()) {
    if (rpc->second.kind_case() != Value::kStringValue || rpc->second.string_value() != "grpc") {
      return BadTfConfig("rpc_layer", absl::StrCat(KindOf(rpc->second),
                                                   " is not supported: sluice serves \"grpc\" only"));
    }
  }
  auto cluster_it = top.find("cluster");
  if (cluster_it == top.end()) {
    return BadTfConfig("cluster", R"(missing (expected {"worker": ["host:port", ...], ...}))");
  }
  if (cluster_it->second.kind_case() != Value::kStructValue) {
    return BadTfConfig("cluster", absl::StrCat("expected an object of jobs, got ", KindOf(cluster_it->second)));
  }
  // Jobs in name order: a JSON object's keys have none, and the spec string should not change
  // from one start to the next.
  const auto& jobs_json = cluster_it->second.struct_value().fields();
  std::map<std::string, const Value*> sorted;
  for (const auto& [name, value] : jobs_json) sorted.emplace(name, &value);
  JobList jobs;
  for (const auto& [name, value] : sorted) {
    if (value->kind_case() != Value::kListValue) {
      return BadTfConfig(TfConfigKey(name, -1),
                         absl::StrCat("expected a list of \"host:port\" strings, got ", KindOf(*value)));
    }
    std::vector<std::string> addresses;
    for (int i = 0; i < value->list_value().values_size(); ++i) {
      const Value& a = value->list_value().values(i);
      if (a.kind_case() != Value::kStringValue) {
        return BadTfConfig(TfConfigKey(name, i), absl::StrCat("expected a \"host:port\" string, got ", KindOf(a)));
      }
      addresses.push_back(a.string_value());
    }
    jobs.emplace_back(name, std::move(addresses));
  }
  TfConfig config;
  SL_ASSIGN_OR_RETURN(config.cluster, CheckedCluster(jobs, "TF_CONFIG", TfConfigKey));

  auto task_it = top.find("task");
  if (task_it == top.end() || task_it->second.kind_case() == Value::kNullValue) return config;
  if (task_it->second.kind_case() != Value::kStructValue) {
    return BadTfConfig("task", absl::StrCat(R"(expected an object like {"type": "worker", "index": 0}, got )",
                                            KindOf(task_it->second)));
  }
  const auto& task = task_it->second.struct_value().fields();
  if (task.empty()) return config;  // As TensorFlow reads it: no task.
  auto type = task.find("type");
  if (type == task.end()) return BadTfConfig("task.type", "missing (this task's job, e.g. \"worker\")");
  if (type->second.kind_case() != Value::kStringValue) {
    return BadTfConfig("task.type", absl::StrCat("expected a job name, got ", KindOf(type->second)));
  }
  const JobList::value_type* job = nullptr;
  std::vector<std::string> names;
  for (const auto& j : jobs) {
    names.push_back(j.first);
    if (j.first == type->second.string_value()) job = &j;
  }
  if (job == nullptr) {
    return BadTfConfig("task.type", absl::StrCat("'", type->second.string_value(),
                                                 "' is not a job of the cluster (its jobs: ",
                                                 absl::StrJoin(names, ", "), ")"));
  }
  config.task_type = job->first;
  config.task_index = 0;  // TensorFlow's default when "index" is absent.
  if (auto index = task.find("index"); index != task.end()) {
    const double d = index->second.number_value();
    if (index->second.kind_case() != Value::kNumberValue || d != std::floor(d) || !std::isfinite(d)) {
      return BadTfConfig("task.index", absl::StrCat("expected an integer, got ", KindOf(index->second)));
    }
    const int n = static_cast<int>(job->second.size());
    if (d < 0 || d >= n) {
      return BadTfConfig("task.index", absl::StrCat(d, " is out of range: job '", job->first, "' has ", n,
                                                    " task", n == 1 ? "" : "s", " (0 to ", n - 1, ")"));
    }
    config.task_index = static_cast<int>(d);
  }
  return config;
}

absl::StatusOr<ClusterDef> ParseClusterDefText(absl::string_view text, absl::string_view what) {
  ClusterDef def;
  google::protobuf::TextFormat::Parser parser;
  FirstError error;
  parser.RecordErrorsTo(&error);
  if (!parser.ParseFromString(std::string(text), &def)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a ClusterDef in text format (", error.first(),
                                                   ")"));
  }
  auto where = [](const std::string& job, int task) {
    if (job.empty()) return std::string("ClusterDef");
    return task < 0 ? absl::StrCat("job '", job, "'") : absl::StrCat("job '", job, "' task ", task);
  };
  JobList jobs;
  for (const JobDef& job : def.job()) {
    std::map<int, std::string> tasks(job.tasks().begin(), job.tasks().end());
    std::vector<std::string> addresses;
    for (const auto& [index, address] : tasks) {
      if (index != static_cast<int>(addresses.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": ", where(job.name(), -1), ": has task ", index, " but no task ", addresses.size(),
            " (tasks are numbered from 0 without gaps)"));
      }
      addresses.push_back(address);
    }
    jobs.emplace_back(job.name(), std::move(addresses));
  }
  return CheckedCluster(jobs, what, where);
}

absl::StatusOr<ClusterDef> ReadClusterFlag(const std::string& arg) {
  struct stat st;
  const bool exists = stat(arg.c_str(), &st) == 0;
  const bool spec_like = absl::StrContains(arg, '=');
  if (exists && (S_ISREG(st.st_mode) || !spec_like)) {
    // A FIFO or a folder is refused by ReadRegularFile without waiting on it.
    SL_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(arg, "--cluster file", kMaxClusterFileBytes));
    return ParseClusterDefText(text, absl::StrCat("--cluster file '", arg, "'"));
  }
  if (!spec_like) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cluster '", arg, "': no such file, and not a spec like worker=host:port,host:port;ps=host:port"));
  }
  return ParseClusterSpec(arg);
}

std::string TfConfigFromEnvironment() {
  const char* value = std::getenv("TF_CONFIG");
  if (value == nullptr) return "";
  return std::string(absl::StripAsciiWhitespace(value)).empty() ? "" : value;
}

absl::StatusOr<std::string> TfConfigTarget() {
  const std::string json = TfConfigFromEnvironment();
  if (json.empty()) {
    return absl::InvalidArgumentError(
        R"(--target tf_config: TF_CONFIG is not set (expected {"cluster": {...}, "task": {"type": "worker", "index": 0}}))");
  }
  SL_ASSIGN_OR_RETURN(TfConfig config, ParseTfConfig(json), "--target tf_config");
  if (config.task_type.empty()) {
    return absl::InvalidArgumentError(
        R"(--target tf_config: TF_CONFIG names no task; its "task" ({"type": "worker", "index": 0}) says whose master to use)");
  }
  SL_ASSIGN_OR_RETURN(std::string address, TaskAddress(config.cluster, config.task_type, config.task_index));
  return absl::StrCat("grpc://", address);
}

}  // namespace sluice
