#!/usr/bin/env bash
# Soak: a two-task `sluice serve` cluster under a steady mix of work for MINUTES (default 30),
# with each task's resident memory and open descriptors sampled along the way.
#
#   scripts/soak.sh [MINUTES] [SAMPLE_SECONDS]
#
# The mix, repeated until the time is up, from two client loops at once:
#   - short sessions: one `sluice run --target` per session (create, run, close), checked;
#   - large tensors: 64 MiB made on task 1 and reduced on task 0, the sum checked;
#   - cancelled steps: a Loop that would run for hours, cut by --timeout 0.5 on both tasks;
#   - abandoned sessions: clients killed mid-step (the server must drop what they left; the
#     tasks close sessions idle for a minute).
# Ends with a table of the samples and fails when, after the first fifth of the run (warm-up),
# a task's RSS grew by more than 10% + 16 MiB or its descriptor count by more than 8, or when
# any step's result was wrong.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
sample_every=${2:-30}
bazel build //tools:sluice >/dev/null 2>&1 || { echo "soak: bazel build //tools:sluice failed"; exit 1; }
work=$(mktemp -d)
cp bazel-bin/tools/sluice "$work/sluice"  # A later build cannot swap it mid-run.
sluice=$work/sluice
source tests/test_lib.sh
trap '_kill_pids; rm -rf "$work"' EXIT

# Sessions of clients killed mid-step are never closed: they expire after a minute of idleness.
start_cluster "$work/cluster" "worker=2" --session-idle-timeout 60 || { echo "soak: the cluster did not start"; exit 1; }
target="grpc://${task_address[worker:0]}"

# out = -(c0 + c1): a short step over both tasks.
cat > "$work/short.pbtxt" <<'PBTXT'
node { name: "c0" op: "Const" device: "/job:worker/task:0"
       attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 2 } } } }
node { name: "c1" op: "Const" device: "/job:worker/task:1"
       attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
node { name: "s" op: "Add" input: "c0" input: "c1" device: "/job:worker/task:1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Neg" input: "s" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
# out = sum(-ones([4096, 4096])): 64 MiB sent from task 1 to task 0.
cat > "$work/large.pbtxt" <<'PBTXT'
node { name: "shape" op: "Const" device: "/job:worker/task:1" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: 4096 int64_val: 4096 } } } }
node { name: "x" op: "Onnx>ConstantOfShape" input: "shape" device: "/job:worker/task:1"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 } } } }
node { name: "y" op: "Neg" input: "x" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Onnx>ReduceSum" input: "y" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "Taxes" value { list { } } } attr { key: "keepdims" value { b: false } } }
PBTXT
# A Loop of 2^40 trips on task 1, its result negated on task 0.
loop_graph "/job:worker/task:1" "/job:worker/task:0" 1099511627776 > "$work/forever.pbtxt"

errors=$work/errors.txt
: > "$errors"
value_is() {  # JSON FILE, expected first output value
  "$python" -c 'import json,sys; v=json.load(open(sys.argv[1]))["outputs"][0]["values"][0]; sys.exit(v != float(sys.argv[2]))' "$1" "$2"
}
client_loop() {
  local id=$1 end=$2 i=0 f="$work/client$1.json"
  while (( SECONDS < end )); do
    i=$((i + 1))
    timeout 60 "$sluice" run "$work/short.pbtxt" --output out --target "$target" --json > "$f" 2>&1 &&
      value_is "$f" -5 || echo "client $id step $i: short session: $(head -c 300 "$f")" >> "$errors"
    if (( i % 5 == 0 )); then
      timeout 120 "$sluice" run "$work/large.pbtxt" --output out --target "$target" --json > "$f" 2>&1 &&
        value_is "$f" -16777216 || echo "client $id step $i: large tensor: $(head -c 300 "$f")" >> "$errors"
    fi
    if (( i % 7 == 0 )); then
      if timeout 60 "$sluice" run "$work/forever.pbtxt" --output out --target "$target" --timeout 0.5 > "$f" 2>&1 ||
         ! grep -q DEADLINE_EXCEEDED "$f"; then
        echo "client $id step $i: cancelled step: $(head -c 300 "$f")" >> "$errors"
      fi
    fi
    if (( i % 11 == 0 )); then  # A client that dies mid-step: its session is left to expire.
      ( timeout -s KILL 0.7 "$sluice" run "$work/forever.pbtxt" --output out --target "$target" > /dev/null 2>&1 ) 2> /dev/null
    fi
  done
  echo "$i" > "$work/client$id.steps"
}

sample() {  # prints "rss_kib fds" of a pid
  local rss
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  echo "$rss $(ls "/proc/$1/fd" 2>/dev/null | wc -l)"
}

start=$SECONDS
end=$((start + minutes * 60))
client_loop 1 "$end" &
c1=$!
client_loop 2 "$end" &
c2=$!
samples=$work/samples.txt
: > "$samples"
printf "%8s %14s %10s %14s %10s\n" seconds "task0 RSS KiB" "task0 fds" "task1 RSS KiB" "task1 fds"
while (( SECONDS < end )); do
  s0=$(sample "${task_pid[worker:0]}") || { echo "soak: task 0 died" >> "$errors"; break; }
  s1=$(sample "${task_pid[worker:1]}") || { echo "soak: task 1 died" >> "$errors"; break; }
  echo "$((SECONDS - start)) $s0 $s1" >> "$samples"
  printf "%8s %14s %10s %14s %10s\n" $((SECONDS - start)) $s0 $s1
  if [ -s "$errors" ] && [ -z "${backtraces:-}" ] && command -v gdb > /dev/null; then
    backtraces=${SOAK_BACKTRACES:-/tmp/soak_backtraces.txt}  # What each task was doing.
    for t in 0 1; do
      echo "== task $t" >> "$backtraces"
      gdb -p "${task_pid[worker:$t]}" -batch -ex "thread apply all bt 12" >> "$backtraces" 2>&1
    done
    echo "soak: first failure; thread backtraces in $backtraces"
  fi
  sleep "$sample_every"
done
wait "$c1" "$c2"
s0=$(sample "${task_pid[worker:0]}") && s1=$(sample "${task_pid[worker:1]}") &&
  echo "$((SECONDS - start)) $s0 $s1" >> "$samples" && printf "%8s %14s %10s %14s %10s\n" $((SECONDS - start)) $s0 $s1

steps=$(( $(cat "$work/client1.steps" 2>/dev/null || echo 0) + $(cat "$work/client2.steps" 2>/dev/null || echo 0) ))
echo "client rounds: $steps; wrong or failed results: $(wc -l < "$errors")"
head -20 "$errors"
"$python" - "$samples" "$minutes" <<'PY'
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm = [r for r in rows if r[0] >= int(sys.argv[2]) * 60 / 5] or rows[-1:]
ok = True
for task, (rss, fds) in enumerate(((1, 2), (3, 4))):
    # The floor of a few samples: a sample may catch a 64 MiB tensor in flight.
    base, last = min(r[rss] for r in warm[:3]), min(r[rss] for r in rows[-3:])
    base_fds, last_fds = min(r[fds] for r in warm[:3]), min(r[fds] for r in rows[-3:])
    grew = last - base
    print("task %d: RSS %d -> %d KiB after warm-up (%+.1f%%), peak %d KiB; descriptors %d -> %d"
          % (task, base, last, 100.0 * grew / base, max(r[rss] for r in rows), base_fds, last_fds))
    if grew > base * 0.10 + 16 * 1024 or last_fds - base_fds > 8:
        ok = False
print("soak: " + ("flat" if ok else "GREW"))
sys.exit(0 if ok else 1)
PY
flat=$?
[ "$flat" -eq 0 ] && [ ! -s "$errors" ] && echo "soak: PASS" || { echo "soak: FAIL"; exit 1; }
