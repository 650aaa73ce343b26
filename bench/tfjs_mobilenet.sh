#!/usr/bin/env bash
# bench/tfjs_mobilenet.sh -- MobileNetV2 predict on @tensorflow/tfjs-node@4.22.0
# over Sluice ('tensorflow' backend) against tfjs's pure-JavaScript 'cpu'
# backend, in one node process.
#
# This is a by-hand benchmark, NOT part of CI: it needs the npm registry.
#
# What it does:
#   1. tests/tfjs_node.sh --setup-only: in the work dir, npm installs
#      tfjs-node 4.22.0 (--ignore-scripts) and builds its unmodified native
#      addon against Sluice's headers and the two libraries in --lib (both
#      steps skipped when already done; the addon is rebuilt when the libraries
#      change). See that script's header.
#   2. Runs bench/tfjs_mobilenet.js with node, which requires
#      @tensorflow/tfjs-node from the work dir and:
#      - builds Keras's MobileNetV2 (keras.applications.MobileNetV2, alpha 1.0,
#        224x224x3, 1000 classes, same layer names: stem conv 3x3/2 32ch + BN +
#        ReLU6, 17 inverted-residual blocks, expansion 6 (block 0: 1),
#        depthwise 3x3 with ZeroPadding2D before the stride-2 ones, linear 1x1
#        projections, Add where stride 1 and channels match, 1x1 conv 1280 +
#        BN + ReLU6, global average pooling, dense 1000 softmax; 3,538,984
#        parameters) with tf.layers' functional API, seeded random weights
#        (glorot-uniform kernels; batch-norm gamma/beta/mean/variance drawn
#        uniformly so every batch norm does real work), once on each backend;
#        the CPU model gets the tensorflow model's weights copied in;
#      - checks that every weight, the input and the output of each model live
#        on that model's backend (so nothing is moved between backends);
#      - times model.predict(x) + dataSync() on one fixed 1x224x224x3 input:
#        2 warm-up runs on tensorflow and 1 on cpu, then --runs tensorflow runs
#        alternating with --cpu-runs cpu runs;
#      - compares both backends' outputs (softmax, and the 1280 pooled features
#        through a second model over the same layers);
#      - with --profile: one table per backend of where a predict's time goes
#        (see below).
#
# Usage:
#   bench/tfjs_mobilenet.sh [--work DIR] [--lib DIR] [--runs N] [--cpu-runs N]
#                           [--profile] [--json FILE]
#
#   --work DIR      work dir, shared with tests/tfjs_node.sh (default
#                   ${SLUICE_TFJS_WORK:-$HOME/.cache/sluice-tfjs}); do not run
#                   both at once on one work dir with different libraries
#   --lib DIR       dir with libtensorflow.so and libtensorflow_framework.so
#                   (default <repo>/bazel-bin/c_api; build them first with
#                   `bazel build //c_api:all`, this script never runs bazel)
#   --runs N        timed tensorflow-backend runs (default 10)
#   --cpu-runs N    timed cpu-backend runs (default 5; each takes ~1 s)
#   --profile       after the timed runs, profile 5 more tensorflow predicts
#                   (every TensorFlow op tfjs-node runs goes through the addon's
#                   executeOp, i.e. one synchronous TFE_Execute on Sluice; the
#                   binding is wrapped to time each call: per run, predict =
#                   executeOp + the addon's other calls + tfjs's JavaScript;
#                   per op type and the slowest single calls with their shapes
#                   for the median run, each also at its fastest of the 5) and
#                   one cpu predict under tf.profile (per kernel)
#   --json FILE     also write the figures (every run, the agreement, the
#                   profiles) as JSON
#
# Threads: tfjs-node offers no thread setting. Its addon creates the eager
# context with TFE_NewContextOptions() and no ConfigProto
# (binding/tfjs_backend.cc), so Sluice uses std::thread::hardware_concurrency()
# intra-op threads: eager kernels run on node's main thread with an OpenMP team
# of that size for oneDNN. taskset does not change that count (glibc's
# hardware_concurrency ignores the affinity mask); OMP_NUM_THREADS does not
# either (Sluice sets the team size before each oneDNN call). The CPU backend
# is single-threaded JavaScript.
#
# Needs: what tests/tfjs_node.sh needs (node >= 18, npm, node-gyp, Node headers,
# python3, make, g++; the npm registry on the first run).
#
# How long (2-core machine): setup as in tests/tfjs_node.sh (~1 min the first
# time, ~1 s after); the benchmark ~15 s with the defaults on an idle machine
# (most of it the cpu backend's runs), ~3 s more with --profile.
#
# The figures are only meaningful on an otherwise idle machine: the load
# average at the start and end is printed. On the 2-vCPU AMD EPYC (avx512f)
# reference machine, idle: tensorflow ~60-70 ms median, cpu ~1.0-1.5 s,
# speedup 16-21x. With two compilers running alongside (load 3-5) the
# tensorflow side took 1.2-1.6 s and the speedup fell to 2.4-2.7x: each of
# Sluice's kernels runs on an OpenMP team of both cores and waits for a
# descheduled member (tens of ms, at a different op each run), while the
# single-threaded cpu backend only slows ~3x.
#
# What it prints: progress on stderr (setup, model size, warm-up and each
# run's wall and process CPU times, the output agreement); on stdout, with --profile, the profile
# tables, then as the very last line:
#   tfjs MobileNetV2 predict: tensorflow(Sluice) median X ms [min-max], cpu median Y ms [min-max], speedup Z x
# (speedup = cpu median / tensorflow median). Exit status: 0 when the backends'
# softmax outputs agree to 1e-4 (absolute) and the argmax is the same, 1 when
# they do not, 2 on a setup or run error.

set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO="$(dirname "$(dirname "$SELF")")"
WORK="${SLUICE_TFJS_WORK:-$HOME/.cache/sluice-tfjs}"
LIB="$REPO/bazel-bin/c_api"
RUNS=10
CPU_RUNS=5
PROFILE=0
JSON_OUT=""

die() { echo "tfjs_mobilenet.sh: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) WORK="${2:?--work needs a value}"; shift 2 ;;
    --work=*) WORK="${1#*=}"; shift ;;
    --lib) LIB="${2:?--lib needs a value}"; shift 2 ;;
    --lib=*) LIB="${1#*=}"; shift ;;
    --runs) RUNS="${2:?--runs needs a value}"; shift 2 ;;
    --runs=*) RUNS="${1#*=}"; shift ;;
    --cpu-runs) CPU_RUNS="${2:?--cpu-runs needs a value}"; shift 2 ;;
    --cpu-runs=*) CPU_RUNS="${1#*=}"; shift ;;
    --profile) PROFILE=1; shift ;;
    --json) JSON_OUT="${2:?--json needs a value}"; shift 2 ;;
    --json=*) JSON_OUT="${1#*=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number"
[[ "$CPU_RUNS" =~ ^[1-9][0-9]*$ ]] || die "--cpu-runs must be a positive number"
if [[ -n "$JSON_OUT" ]]; then
  mkdir -p "$(dirname "$JSON_OUT")"
  JSON_OUT="$(cd "$(dirname "$JSON_OUT")" && pwd)/$(basename "$JSON_OUT")"
fi

"$REPO/tests/tfjs_node.sh" --setup-only --backend tensorflow --work "$WORK" --lib "$LIB" >/dev/null \
  || die "setup failed (tests/tfjs_node.sh --setup-only)"
WORK="$(cd "$WORK" && pwd)"

isa="no avx512f"
grep -qw avx512f /proc/cpuinfo && isa="avx512f"
echo "== $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, $isa; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "== running MobileNetV2 on tensorflow (Sluice: $LIB) and cpu, $RUNS + $CPU_RUNS timed runs" >&2

# Run from the work dir: tfjs-node finds its addon relative to its own package.
cd "$WORK"
set +e
node "$REPO/bench/tfjs_mobilenet.js" "$WORK" "$RUNS" "$CPU_RUNS" "$PROFILE" "$JSON_OUT"
rc=$?
set -e
[[ $rc -eq 0 || $rc -eq 1 ]] || die "the benchmark failed (node exit status $rc)"
exit "$rc"
