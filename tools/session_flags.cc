#include "tools/session_flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "optimizer/meta_optimizer.h"
#include "master/placement_policy.h"
#include "tools/cluster_config.h"

namespace sluice {

absl::Status TakeSessionFlags(Args& args, SessionOptions* options) {
  options->target = args.Take("--target", options->target);
  if (options->target == kTfConfigTarget) {
    SL_ASSIGN_OR_RETURN(options->target, TfConfigTarget());
  } else if (!options->target.empty() && !absl::StartsWith(options->target, "grpc://")) {
    return absl::InvalidArgumentError(absl::StrCat("--target '", options->target,
                                                   "': expected grpc://HOST:PORT or tf_config"));
  }
  std::string timeout = args.Take("--timeout");
  if (!timeout.empty()) {
    double seconds = 0;
    if (!absl::SimpleAtod(timeout, &seconds) || !(seconds > 0) || seconds > 1e9) {
      return absl::InvalidArgumentError(
          absl::StrCat("--timeout '", timeout, "': expected a positive number of seconds"));
    }
    // The session's default for every step (the trainer's included), as RunOptions'
    // timeout_in_ms would be for one.
    options->config.set_operation_timeout_in_ms(
        std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
  }
  std::string memory_limit = args.Take("--memory-limit");
  if (!memory_limit.empty()) {
    SL_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(memory_limit, "--memory-limit"));
    options->config.mutable_resource_limits()->set_memory_limit_bytes(bytes);
  }
  PlacementOptions* placement = options->config.mutable_placement();
  std::string policy = args.Take("--placement");
  if (!policy.empty()) {
    if (policy != kPipelinePolicy) {
      return absl::InvalidArgumentError(
          absl::StrCat("--placement '", policy, "': the only policy is 'pipeline'"));
    }
    placement->set_policy(policy);
  }
  std::string map_file = args.Take("--device-map");
  if (!map_file.empty()) {
    SL_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(map_file, "--device-map"));
    auto rules = ParseDeviceMap(text);
    SL_RETURN_IF_ERROR(rules.status(), map_file);
    for (auto& r : *rules) *placement->add_device_map() = std::move(r);
  }
  return absl::OkStatus();
}

absl::Status TakeOptimizeFlags(Args& args, SessionOptions* options) {
  RewriterConfig* rewrite = options->config.mutable_graph_options()->mutable_rewrite_options();
  args.Has("--optimize");  // The default, accepted for symmetry.
  if (args.Has("--no-optimize")) rewrite->set_disable_meta_optimizer(true);
  for (std::string& pass : args.TakeAll("--disable-pass")) {
    // Checked here, not only when the optimizer runs: with --no-optimize, or for a GraphDef,
    // a misspelt name would otherwise pass unnoticed.
    bool known = false;
    std::vector<std::string> names;
    for (const OptimizerPass& p : OptimizerPasses()) {
      known = known || pass == p.name;
      names.push_back(p.name);
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("--disable-pass: no optimizer pass '", pass,
                                                     "' (the passes are ", absl::StrJoin(names, ", "), ")"));
    }
    rewrite->add_disabled_passes(std::move(pass));
  }
  return absl::OkStatus();
}

}  // namespace sluice
