#include "framework/device_name.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {

absl::StatusOr<DeviceName> DeviceName::Parse(absl::string_view name) {
  DeviceName d;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad device name '", name, "': ", why));
  };
  if (name.empty()) return d;
  if (name[0] != '/') return bad("must start with '/'");
  std::vector<absl::string_view> parts = absl::StrSplit(name.substr(1), '/');
  auto parse_int = [](absl::string_view s, bool* has, int* out) {
    if (s == "*") {
      *has = false;
      return true;
    }
    *has = true;
    return absl::SimpleAtoi(s, out) && *out >= 0;
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::string_view p = parts[i];
    std::vector<absl::string_view> kv = absl::StrSplit(p, absl::MaxSplits(':', 1));
    if (kv.size() != 2) return bad(absl::StrCat("component '", p, "' has no ':'"));
    absl::string_view key = kv[0], value = kv[1];
    if (key == "job") {
      if (value.empty()) return bad("empty job");
      if (value != "*") {
        d.has_job = true;
        d.job = std::string(value);
      }
    } else if (key == "replica") {
      if (!parse_int(value, &d.has_replica, &d.replica)) return bad("bad replica");
    } else if (key == "task") {
      if (!parse_int(value, &d.has_task, &d.task)) return bad("bad task");
    } else if (key == "device") {
      std::vector<absl::string_view> tv = absl::StrSplit(value, ':');
      if (tv.size() > 2 || tv[0].empty()) return bad("device must be TYPE or TYPE:ID");
      if (tv[0] != "*") {
        d.has_type = true;
        d.type = absl::AsciiStrToUpper(tv[0]);
      }
      if (tv.size() == 2 && !parse_int(tv[1], &d.has_id, &d.id)) return bad("bad device id");
    } else if (absl::AsciiStrToLower(key) == "cpu" || absl::AsciiStrToLower(key) == "gpu") {
      // Legacy "/cpu:0".
      d.has_type = true;
      d.type = absl::AsciiStrToUpper(key);
      if (!parse_int(value, &d.has_id, &d.id)) return bad("bad device id");
    } else {
      return bad(absl::StrCat("unknown component '", key, "'"));
    }
  }
  return d;
}

std::string DeviceName::Full(absl::string_view job, int replica, int task, absl::string_view type,
                             int id) {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task, "/device:", type, ":", id);
}

bool DeviceName::Matches(const DeviceName& o) const {
  if (has_job && (!o.has_job || job != o.job)) return false;
  if (has_replica && (!o.has_replica || replica != o.replica)) return false;
  if (has_task && (!o.has_task || task != o.task)) return false;
  if (has_type && (!o.has_type || type != o.type)) return false;
  if (has_id && (!o.has_id || id != o.id)) return false;
  return true;
}

std::string DeviceName::TaskName() const {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task);
}

std::string DeviceName::ToString() const {
  std::string s;
  if (has_job) absl::StrAppend(&s, "/job:", job);
  if (has_replica) absl::StrAppend(&s, "/replica:", replica);
  if (has_task) absl::StrAppend(&s, "/task:", task);
  if (has_type) absl::StrAppend(&s, "/device:", type, ":", has_id ? absl::StrCat(id) : "*");
  return s;
}

}  // namespace sluice
