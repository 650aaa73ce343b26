#!/usr/bin/env bash
# Three `sluice serve` tasks, each in its own network namespace joined by veth pairs to a
# bridge (a small network of three machines): a model pipelined over them matches the
# embedded session, each server listens on its own address only, and a task killed with -9
# fails the client within 20 s naming it, then works again once restarted. Needs root and
# `ip netns`; skips with a message otherwise.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}/netns"
mkdir -p "$work"

if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns)"
  exit 0
fi
id=$$
probe="slprobe$id"
if ! ip netns add "$probe" 2> "$work/probe.txt"; then
  echo "SKIP: cannot create network namespaces: $(cat "$work/probe.txt")"
  exit 0
fi
ip netns del "$probe"

net="10.213.$(( id % 200 + 20 ))"
bridge="slbr$id"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for i in 0 1 2; do ip netns del "sl$id$i" 2>/dev/null; done
  ip link del "$bridge" 2>/dev/null
}
trap cleanup EXIT

ip link add "$bridge" type bridge && ip link set "$bridge" up && ip addr add "$net.254/24" dev "$bridge" || {
  echo "SKIP: cannot create a bridge"; exit 0; }
for i in 0 1 2; do
  ns="sl$id$i"
  ip netns add "$ns"
  ip link add "slv$id$i" type veth peer name "slp$id$i"
  ip link set "slp$id$i" netns "$ns"
  ip link set "slv$id$i" master "$bridge" up
  ip netns exec "$ns" ip addr add "$net.$((i + 1))/24" dev "slp$id$i"
  ip netns exec "$ns" ip link set "slp$id$i" up
  ip netns exec "$ns" ip link set lo up
done

# Three machines: tensors cross the network, not the same-host path that these processes
# (one kernel, one pid namespace) would otherwise take.
export SLUICE_SAME_HOST_RECV_TENSOR=0

fail=0
check() {
  local name="$1"; shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fail=1; fi
}
spec="worker=$net.1:2222,$net.2:2222,$net.3:2222"
serve() {  # serve TASK: starts task TASK in its namespace; sets server_pid.
  ip netns exec "sl$id$1" "$sluice" serve --insecure --cluster "$spec" --job worker --task "$1" --threads 1 \
    > "$work/task$1.log" 2>&1 &
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 1 300); do grep -q " ready on " "$work/task$1.log" && return 0; sleep 0.1; done
  cat "$work/task$1.log"; return 1
}
declare -a server
for i in 0 1 2; do
  serve $i || { echo "FAIL: task $i did not start"; exit 1; }
  server[$i]=$server_pid
  cat "$work/task$i.log"
done

if command -v ss > /dev/null; then
  ip netns exec "sl${id}1" ss -ltn > "$work/listen.txt"
  cat "$work/listen.txt"
  check "task 1 listens on its own address only" \
    bash -c "grep -qE '$net\.2\]?:2222' '$work/listen.txt' && ! grep -qE '(0\.0\.0\.0|\*|\[::\]):2222' '$work/listen.txt'"
fi

run() { timeout 60 "$sluice" "$@"; }
/usr/bin/python3 "$root/tests/cluster_models.py" "$work/models" || { echo "FAIL: models"; exit 1; }
deep="$work/models/deep"
run run "$deep/model.onnx" --input "$deep/x.pb" --output-dir "$work/embedded" > /dev/null
run run "$deep/model.onnx" --input "$deep/x.pb" --target "grpc://$net.1:2222" --placement pipeline \
  --show-placement --output-dir "$work/cluster" > "$work/cluster.txt" 2>&1
cat "$work/cluster.txt"
check "a model pipelined over three machines matches the embedded session" \
  cmp "$work/embedded/output_0.pb" "$work/cluster/output_0.pb"
check "every machine runs part of it" test "$(grep -c '^placement: /job:worker' "$work/cluster.txt")" = 3

run bench "$deep/model.onnx" --target "grpc://$net.1:2222" --placement pipeline --iters 100000 \
  --warmup 1 > "$work/bench.txt" 2>&1 &
bench=$!
sleep 2
start=$(date +%s)
kill -KILL "${server[2]}"
wait "$bench"; code=$?
cat "$work/bench.txt"
check "task 2 killed mid-run: the client exits non-zero within 20 s naming it" \
  bash -c "[ $code != 0 ] && [ $code != 124 ] && [ $(( $(date +%s) - start )) -le 20 ] &&
           grep -q 'UNAVAILABLE.*/job:worker/replica:0/task:2' '$work/bench.txt'"
check "task 2 restarts" serve 2
run run "$deep/model.onnx" --input "$deep/x.pb" --target "grpc://$net.1:2222" --placement pipeline \
  --output-dir "$work/again" > "$work/again.txt" 2>&1
cat "$work/again.txt"
check "after the restart the same run works again" cmp "$work/embedded/output_0.pb" "$work/again/output_0.pb"

[ $fail = 0 ] && echo "netns cluster test passed"
exit $fail
