#include "rpc/cluster_spec.h"

#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {
namespace {

bool ValidJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}

// "host:port" or "[v6]:port"; the port in 1..65535.
absl::Status CheckAddress(absl::string_view address) {
  size_t colon = address.rfind(':');
  int port = 0;
  absl::string_view host = colon == absl::string_view::npos ? "" : address.substr(0, colon);
  if (colon == absl::string_view::npos || host.empty() ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "' is not an address of the form host:port"));
  }
  if (host.front() == '[' ? host.back() != ']' : host.find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "': write IPv6 hosts in brackets, as [::1]:2222"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClusterDef> ParseClusterSpec(absl::string_view spec) {
  ClusterDef cluster;
  std::set<std::string> jobs, addresses;
  for (absl::string_view part : absl::StrSplit(spec, ';', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("cluster spec '", spec, "': ", why,
                       " (expected jobs like worker=host:port,host:port;ps=host:port)"));
    };
    if (kv.size() != 2) return bad(absl::StrCat("'", part, "' has no '='"));
    std::string name(absl::StripAsciiWhitespace(kv[0]));
    if (!ValidJobName(name)) return bad(absl::StrCat("'", name, "' is not a job name"));
    if (name == "localhost") {
      return bad("job 'localhost' is reserved for the client's end of feeds and fetches");
    }
    if (!jobs.insert(name).second) return bad(absl::StrCat("job '", name, "' appears twice"));
    JobDef* job = cluster.add_job();
    job->set_name(name);
    int task = 0;
    for (absl::string_view a : absl::StrSplit(kv[1], ',')) {
      std::string address(absl::StripAsciiWhitespace(a));
      absl::Status s = CheckAddress(address);
      if (!s.ok()) return bad(s.message());
      if (!addresses.insert(address).second) {
        return bad(absl::StrCat("address ", address, " is given to two tasks"));
      }
      (*job->mutable_tasks())[task++] = address;
    }
  }
  if (cluster.job_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cluster spec '", spec, "' names no job"));
  }
  return cluster;
}

std::string ClusterSpecString(const ClusterDef& cluster) {
  std::vector<std::string> jobs;
  for (const JobDef& job : cluster.job()) {
    std::map<int, std::string> tasks(job.tasks().begin(), job.tasks().end());
    std::vector<std::string> addresses;
    for (const auto& [i, a] : tasks) addresses.push_back(a);
    jobs.push_back(absl::StrCat(job.name(), "=", absl::StrJoin(addresses, ",")));
  }
  return absl::StrJoin(jobs, ";");
}

absl::StatusOr<std::string> TaskAddress(const ClusterDef& cluster, absl::string_view job, int task) {
  for (const JobDef& j : cluster.job()) {
    if (j.name() != job) continue;
    auto it = j.tasks().find(task);
    if (it == j.tasks().end()) {
      return absl::NotFoundError(absl::StrCat("job '", job, "' of the cluster has no task ", task,
                                              " (it has ", j.tasks_size(), ")"));
    }
    return it->second;
  }
  return absl::NotFoundError(absl::StrCat("the cluster has no job '", job, "' (it has ",
                                          ClusterSpecString(cluster), ")"));
}

std::map<std::string, std::string> TaskAddresses(const ClusterDef& cluster) {
  std::map<std::string, std::string> out;
  for (const JobDef& job : cluster.job()) {
    for (const auto& [task, address] : job.tasks()) {
      out[absl::StrCat("/job:", job.name(), "/replica:0/task:", task)] = address;
    }
  }
  return out;
}

}  // namespace sluice
