#!/usr/bin/env bash
# All-reduce bus bandwidth on N `sluice serve` tasks, each in its own network namespace, joined
# by veth pairs to a bridge and shaped with tc's tbf to RATE (a small cluster of machines
# behind 1 Gbit/s links). Trains a model whose step is almost only the all-reduce of one
# MEGABYTES-MiB gradient (bench/allreduce_netns.py) with `sluice train --target`, and prints the
# median step time, the bus bandwidth 2(N-1)/N * size / time against the link rate, and the
# same step on one task (what is not communication). Needs root and iproute2.
#
#   bench/allreduce_netns.sh                   # 4 tasks, 64 MiB, 1gbit, 6 steps
#   bench/allreduce_netns.sh -n 2 -m 16 -r 10gbit
#   bench/allreduce_netns.sh -p                # --insecure tasks: no TLS, no sealed streams
#   bench/allreduce_netns.sh -t trace.json     # and a Chrome trace of one more cluster step
#   bench/allreduce_netns.sh -M resnet18       # train a torchvision model (batch 2 per task)
#                                              # instead, and report each replica's exposed
#                                              # all-reduce: the part that ran past its backward
set -uo pipefail
cd "$(dirname "$0")/.."
tasks=4 mb=64 rate=1gbit steps=6 bucket=25 plaintext=0 trace= model=
while getopts "n:m:r:s:b:t:M:ph" opt; do
  case $opt in
    M) model=$OPTARG ;;
    n) tasks=$OPTARG ;; m) mb=$OPTARG ;; r) rate=$OPTARG ;; s) steps=$OPTARG ;; b) bucket=$OPTARG ;;
    p) plaintext=1 ;; t) trace=$(realpath "$OPTARG") ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
sluice=$(realpath "${SLUICE:-bazel-bin/tools/sluice}")
[ "$(id -u)" = 0 ] || { echo "needs root (ip netns, tc)"; exit 1; }
work=$(mktemp -d)
id=$$
net="10.214.$(( id % 200 + 20 ))"
bridge="sabr$id"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for ((i = 0; i < tasks; i++)); do ip netns del "sa$id$i" 2>/dev/null; done
  ip link del "$bridge" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
if [ -n "$model" ]; then
  /usr/bin/python3 bench/train_model.py "$work" --model "$model" --batch $((2 * tasks)) || exit 1
  feeds=(--feed "x=$work/${model}_x.pb" --feed "target=$work/${model}_target.pb")
  onnx_model=$work/$model.onnx
else
  /usr/bin/python3 bench/allreduce_netns.py "$work" "$mb" "$tasks" || exit 1
  feeds=(--feed "x=$work/allreduce_x.pb")
  onnx_model=$work/allreduce.onnx
fi
ip link add "$bridge" type bridge && ip link set "$bridge" up && ip addr add "$net.254/24" dev "$bridge" || exit 1
spec="worker="
for ((i = 0; i < tasks; i++)); do
  ns="sa$id$i"
  ip netns add "$ns"
  ip link add "sav$id$i" type veth peer name "sap$id$i"
  ip link set "sap$id$i" netns "$ns"
  ip link set "sav$id$i" master "$bridge" up
  ip netns exec "$ns" ip addr add "$net.$((i + 1))/24" dev "sap$id$i"
  ip netns exec "$ns" ip link set "sap$id$i" up
  ip netns exec "$ns" ip link set lo up
  # Both directions of the task's link at RATE.
  tc qdisc add dev "sav$id$i" root tbf rate "$rate" burst 256kb latency 50ms || exit 1
  ip netns exec "$ns" tc qdisc add dev "sap$id$i" root tbf rate "$rate" burst 256kb latency 50ms || exit 1
  [ "$i" -gt 0 ] && spec+=","
  spec+="$net.$((i + 1)):2222"
done
security=(--insecure)
if [ "$plaintext" = 0 ]; then
  head -c 32 /dev/urandom | base64 > "$work/secret"
  export SLUICE_CLUSTER_SECRET_FILE=$work/secret
  security=()
fi
export SLUICE_SAME_HOST_RECV_TENSOR=0  # Separate machines: the bytes cross the links.
for ((i = 0; i < tasks; i++)); do
  ip netns exec "sa$id$i" "$sluice" serve --cluster "$spec" --job worker --task "$i" --threads 1 "${security[@]}" \
    > "$work/task$i.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < tasks; i++)); do
  timeout 60 bash -c "until grep -q ' ready on ' '$work/task$i.log'; do sleep 0.1; done" || { cat "$work/task$i.log"; exit 1; }
done
train() {
  timeout 1200 "$sluice" train "$onnx_model" --steps "$steps" "${feeds[@]}" --json \
    --bucket-mb "$bucket" "$@" > "$work/out.json" 2> "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
  /usr/bin/python3 -c '
import json, statistics, sys
d = json.load(open(sys.argv[1]))
print(statistics.median(s["ms"] for s in d["steps"][1:]), d["replicas"])' "$work/out.json"
}
traced=()
[ -n "$trace" ] && traced=(--trace "$trace")
[ -n "$model" ] && [ -z "$trace" ] && traced=(--profile)
read -r cluster_ms replicas <<< "$(train --target "grpc://$net.1:2222" "${traced[@]}")"
if [ -n "$model" ]; then
  cp "$work/out.json" "$work/cluster.json"
  read -r local_ms _ <<< "$(train --threads 1)"
  /usr/bin/python3 - "$work/cluster.json" "$tasks" "$rate" "$cluster_ms" "$local_ms" "$model" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
n, rate, cluster, local, model = int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
print("%s, %d tasks (%d replicas), batch %d, links %s" % (model, n, d["replicas"], 2 * n, rate))
print("step on the cluster %.0f ms (median); the same step in one process at 1 thread %.0f ms" % (cluster, local))
for e in d.get("exposed", []):
    where = "of the step, past every replica's backward pass" if e["device"] == "step" else "on " + e["device"]
    print("exposed all-reduce %s: %.0f ms of its %.0f ms traced step (%.1f%%)"
          % (where, e["exposed_ms"], e["step_ms"], 100 * e["exposed_ms"] / e["step_ms"]))
PY
  exit 0
fi
read -r local_ms _ <<< "$(train --threads 1)"
/usr/bin/python3 - "$tasks" "$mb" "$rate" "$cluster_ms" "$local_ms" "$replicas" <<'PY'
import sys
n, mb, rate, cluster, local, replicas = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
link = next(float(rate[:-len(u)]) * m / 8 for u, m in units.items() if rate.endswith(u))
size = mb * (1 << 20)
bus = 2 * (n - 1) / n * size / (cluster / 1e3)
bus_comm = 2 * (n - 1) / n * size / (max(cluster - local, 1e-3) / 1e3)
print("%d tasks (%d replicas), %.0f MiB gradient, links %s (%.0f MB/s)" % (n, replicas, mb, rate, link / 1e6))
print("step on the cluster %.0f ms; the same step on one task %.0f ms" % (cluster, local))
print("bus bandwidth %.0f MB/s = %.0f%% of the link (%.0f MB/s = %.0f%% counting only the time beyond the one-task step)"
      % (bus / 1e6, 100 * bus / link, bus_comm / 1e6, 100 * bus_comm / link))
PY
