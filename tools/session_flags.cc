#include "tools/session_flags.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "master/placement_policy.h"

namespace sluice {

absl::Status TakeSessionFlags(Args& args, SessionOptions* options) {
  options->target = args.Take("--target", options->target);
  if (!options->target.empty() && !absl::StartsWith(options->target, "grpc://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--target '", options->target, "': expected grpc://HOST:PORT"));
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
    std::ifstream in(map_file);
    if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read --device-map ", map_file));
    std::stringstream text;
    text << in.rdbuf();
    auto rules = ParseDeviceMap(text.str());
    SL_RETURN_IF_ERROR(rules.status(), map_file);
    for (auto& r : *rules) *placement->add_device_map() = std::move(r);
  }
  return absl::OkStatus();
}

}  // namespace sluice
