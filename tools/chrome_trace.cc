#include "tools/chrome_trace.h"

#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace {

std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string StepStatsToChromeTrace(const StepStats& stats) {
  // Devices in name order, so that a device keeps its track from one trace to the next.
  std::map<std::string, std::vector<const DeviceStepStats*>> devices;
  for (const auto& d : stats.dev_stats()) devices[d.device()].push_back(&d);
  std::vector<std::string> events;
  int pid = 0;
  for (const auto& [device, parts] : devices) {
    events.push_back(absl::StrCat(R"({"ph": "M", "name": "process_name", "pid": )", pid,
                                  R"(, "args": {"name": )", Quote(device), "}}"));
    events.push_back(absl::StrCat(R"({"ph": "M", "name": "process_sort_index", "pid": )", pid,
                                  R"(, "args": {"sort_index": )", pid, "}}"));
    std::map<uint32_t, int> threads;  // Executor thread ids, numbered per device.
    for (const DeviceStepStats* d : parts) {
      for (const NodeExecStats& n : d->node_stats()) {
        auto [it, inserted] = threads.emplace(n.thread_id(), static_cast<int>(threads.size()));
        const double start_us = n.all_start_nanos() != 0 ? n.all_start_nanos() / 1e3
                                                         : static_cast<double>(n.all_start_micros());
        const double dur_us = n.all_end_rel_nanos() != 0 ? n.all_end_rel_nanos() / 1e3
                                                         : static_cast<double>(n.all_end_rel_micros());
        events.push_back(absl::StrFormat(
            R"({"ph": "X", "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, "name": %s, "cat": %s, "args": {"op": %s}})",
            pid, it->second, start_us, dur_us, Quote(n.node_name()), Quote(n.timeline_label()),
            Quote(n.timeline_label())));
      }
    }
    ++pid;
  }
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    absl::StrAppend(&out, "  ", events[i], i + 1 < events.size() ? ",\n" : "\n");
  }
  return out + "]}\n";
}

absl::StatusOr<int> WriteChromeTrace(const std::string& file, const StepStats& stats) {
  std::ofstream out(file);
  out << StepStatsToChromeTrace(stats);
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write the trace to '", file, "'"));
  int events = 0;
  for (const auto& d : stats.dev_stats()) events += d.node_stats_size();
  return events;
}

}  // namespace sluice
