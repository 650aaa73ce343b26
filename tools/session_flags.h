// The flags of every verb that runs a session: where it runs and how nodes are placed.
//
//   SessionOptions options;
//   SL_RETURN_IF_ERROR(TakeSessionFlags(args, &options));   // before args.Positional(...)
//   auto session = NewSession(options);
#ifndef SLUICE_TOOLS_SESSION_FLAGS_H_
#define SLUICE_TOOLS_SESSION_FLAGS_H_

#include "absl/status/status.h"
#include "frontend/onnx/importer.h"
#include "master/session.h"
#include "tools/cli.h"

namespace sluice {

inline constexpr char kSessionFlagsHelp[] =
    R"(  --target grpc://HOST:PORT   run on a `sluice serve` cluster, through that task's master
                              (default: an embedded session in this process)
  --target tf_config          the same, through the master of the TF_CONFIG environment
                              variable's own task: grpc:// the address of
                              cluster[task.type][task.index] (without --target, TF_CONFIG
                              changes nothing: the session is embedded)
  --placement pipeline        nodes that name no device go in contiguous stages of balanced
                              estimated cost, one per device of job "worker"
  --device-map FILE           lines "PATTERN DEVICE": nodes whose name matches the glob go to
                              DEVICE (full or partial, e.g. /job:worker/task:1); before --placement
  --timeout SECONDS           each step that runs longer is cancelled on every task and fails
                              with DEADLINE_EXCEEDED (default: none)
  --memory-limit SIZE         bytes of tensors the session may hold at once on each task, e.g.
                              512M or 2G; a node that needs more fails with RESOURCE_EXHAUSTED
)";

// `--target tf_config`: the target is TF_CONFIG's own task (tools/cluster_config.h).
inline constexpr char kTfConfigTarget[] = "tf_config";

// Sets options->target (tf_config resolved to grpc://HOST:PORT), options->config.placement,
// (--timeout) the config's operation_timeout_in_ms and (--memory-limit) its resource_limits;
// INVALID_ARGUMENT for a bad value, an unreadable device map or an unusable TF_CONFIG.
absl::Status TakeSessionFlags(Args& args, SessionOptions* options);

// The flags of every verb that runs or converts a graph: the graph optimizer's passes, which
// the master runs on every graph (optimizer/).
inline constexpr char kOptimizeFlagsHelp[] =
    R"(  --no-optimize               run the graph as it is, without the graph optimizer
  --disable-pass NAME         skip one optimizer pass (repeatable; `sluice convert --help`
                              lists them)
)";

// Sets the session's config.graph_options.rewrite_options: disable_meta_optimizer for
// --no-optimize, disabled_passes for each --disable-pass (each must name a pass:
// INVALID_ARGUMENT listing them otherwise).
absl::Status TakeOptimizeFlags(Args& args, SessionOptions* options);

}  // namespace sluice

#endif  // SLUICE_TOOLS_SESSION_FLAGS_H_
