// A step's timings (RunMetadata.step_stats, merged from every task by the master) as a Chrome
// trace, which chrome://tracing and Perfetto open: one track per device, named by its full
// device name, and one event per node execution (_Send and _Recv included), named by the
// node, with its op as category. Threads of a device become its sub-tracks.
//
//   RunOptions options;  options.set_trace_level(RunOptions::FULL_TRACE);
//   SL_RETURN_IF_ERROR(session->Run(options, feeds, fetches, {}, &outputs, &metadata));
//   std::ofstream("t.json") << StepStatsToChromeTrace(metadata.step_stats());
#ifndef SLUICE_TOOLS_CHROME_TRACE_H_
#define SLUICE_TOOLS_CHROME_TRACE_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/step_stats.pb.h"

namespace sluice {

std::string StepStatsToChromeTrace(const StepStats& stats);

// Writes StepStatsToChromeTrace(stats) to `file`; returns the number of node executions in it.
absl::StatusOr<int> WriteChromeTrace(const std::string& file, const StepStats& stats);

}  // namespace sluice

#endif  // SLUICE_TOOLS_CHROME_TRACE_H_
