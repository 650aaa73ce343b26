#!/usr/bin/env bash
# Data-parallel training scaling on this machine: `sluice train` in one process at 1 thread
# against two `sluice serve` worker tasks of 1 thread each (all-reduce), and against a ps and
# two workers (the ps path), in alternating rounds. Prints each setup's median step time over
# the rounds (steps after the first two of each run), samples/s and the speed-up over one
# process; the losses of the first steps are compared too.
#
#   bench/scaling.sh                       # ResNet-18, batch 8, 3 rounds of 6 steps
#   bench/scaling.sh -m mobilenet_v2 -r 5 -s 8
#   bench/scaling.sh -m bert_encoder         # also lstm, from bench/train_zoo.py
#   bench/scaling.sh -p resnet50             # pipeline inference instead: 2 stages on 2 tasks,
#                                            # --concurrency 2, against one process (runs/s, p99)
#
# The models come from bench/train_model.py (torch exports with a TrainingInfoProto), written
# once under $SLUICE_BENCH_DIR (default /tmp/sluice-scaling). Build first:
#   bazel build -c opt //tools:sluice
set -uo pipefail
cd "$(dirname "$0")/.."
model=resnet18 rounds=3 steps=6 batch=8 pipeline=
while getopts "m:r:s:b:p:h" opt; do
  case $opt in
    p) pipeline=$OPTARG ;;
    m) model=$OPTARG ;;
    r) rounds=$OPTARG ;;
    s) steps=$OPTARG ;;
    b) batch=$OPTARG ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
sluice=${SLUICE:-bazel-bin/tools/sluice}
python=/usr/bin/python3
dir=${SLUICE_BENCH_DIR:-/tmp/sluice-scaling}
mkdir -p "$dir"
head -c 32 /dev/urandom | base64 > "$dir/secret"
export SLUICE_CLUSTER_SECRET_FILE=$dir/secret
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ -n "$pipeline" ]; then
  # A torchvision model for inference, batch 1; its stages on two `serve --threads 1` tasks.
  onnx=$dir/${pipeline}_inference.onnx
  if [ ! -f "$onnx" ]; then
    "$python" -c 'import sys, torch, torchvision
m = getattr(torchvision.models, sys.argv[1])(num_classes=1000).eval()
torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[2], input_names=["x"], opset_version=13)' \
      "$pipeline" "$onnx" || exit 1
  fi
  q0=$(free_port) q1=$(free_port)
  for t in 0 1; do
    "$sluice" serve --cluster "worker=127.0.0.1:$q0,127.0.0.1:$q1" --job worker --task $t --threads 1 \
      > "$dir/stage_$t.log" 2>&1 &
    pids+=($!)
    timeout 60 bash -c "until grep -q 'ready on' '$dir/stage_$t.log'; do sleep 0.1; done" || exit 1
  done
  iters=$((steps * 8))
  rm -f "$dir"/pipe_{local,stages}.json
  for ((r = 1; r <= rounds; r++)); do
    "$sluice" bench "$onnx" --threads 1 --iters "$iters" --json | tail -1 >> "$dir/pipe_local.json" || exit 1
    "$sluice" bench "$onnx" --iters "$iters" --target "grpc://127.0.0.1:$q0" --placement pipeline \
      --concurrency 2 --json | tail -1 >> "$dir/pipe_stages.json" || exit 1
  done
  "$python" - "$dir" "$pipeline" <<'PY'
import json, statistics, sys
d, model = sys.argv[1], sys.argv[2]
local = [json.loads(l) for l in open(d + "/pipe_local.json")]
stages = [json.loads(l) for l in open(d + "/pipe_stages.json")]
print("%s inference, batch 1, 1 thread per process; %d alternating rounds" % (model, len(local)))
for name, runs in (("one process", local), ("2 stages, concurrency 2", stages)):
    r = [x["runs_per_s"] for x in runs]
    print("%-26s %7.2f runs/s (%.2f-%.2f)  p50 %.1f ms  p99 %.1f ms" % (
        name, statistics.median(r), min(r), max(r), statistics.median(x["p50_ms"] for x in runs),
        statistics.median(x["p99_ms"] for x in runs)))
ratios = [s["runs_per_s"] / l["runs_per_s"] for l, s in zip(local, stages)]
print("speed-up per round: %s; median %.2fx" % (" ".join("%.2fx" % x for x in ratios), statistics.median(ratios)))
PY
  exit 0
fi

case $model in
  bert_encoder | lstm)  # Token models, written by bench/train_zoo.py's export, batch dynamic.
    base=$(cd bench && "$python" -c 'import sys; from train_zoo import export; print(export(sys.argv[1], int(sys.argv[2]), sys.argv[3], dynamic_batch=True))' \
      "$model" "$batch" "$dir") || exit 1
    base=${base%.onnx}
    ln -sf "$base.onnx" "$dir/$model.onnx"
    feeds=(--feed "ids=${base}_input.pb" --feed "target=${base}_target.pb") ;;
  *)
    if [ ! -f "$dir/$model.onnx" ]; then
      "$python" bench/train_model.py "$dir" --model "$model" --batch "$batch" || exit 1
    fi
    feeds=(--feed "x=$dir/${model}_x.pb" --feed "target=$dir/${model}_target.pb") ;;
esac

# start_tasks SPEC JOB:N...: one `serve --threads 1` per task, waits until each is ready.
start_tasks() {
  local spec=$1 job i log
  shift
  for jt in "$@"; do
    job=${jt%:*}
    for ((i = 0; i < ${jt#*:}; i++)); do
      log="$dir/${job}_$i.log"
      "$sluice" serve --cluster "$spec" --job "$job" --task "$i" --threads 1 > "$log" 2>&1 &
      pids+=($!)
      timeout 60 bash -c "until grep -q 'ready on' '$log'; do sleep 0.1; done" || { cat "$log"; exit 1; }
    done
  done
}

w0=$(free_port) w1=$(free_port) p0=$(free_port) v0=$(free_port) v1=$(free_port)
start_tasks "worker=127.0.0.1:$w0,127.0.0.1:$w1" worker:2
start_tasks "ps=127.0.0.1:$p0;worker=127.0.0.1:$v0,127.0.0.1:$v1" ps:1 worker:2

# run NAME ARGS...: one `sluice train` run; appends its step times and losses to NAME's files.
run() {
  local name=$1
  shift
  timeout 1800 "$sluice" train "$dir/$model.onnx" --steps "$steps" "${feeds[@]}" --json "$@" \
    > "$dir/$name.json" 2> "$dir/$name.err" || { cat "$dir/$name.err"; exit 1; }
  "$python" - "$dir/$name.json" >> "$dir/$name.ms" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%.1f" % s["ms"] for s in d["steps"][2:]))
print("#losses", " ".join("%.6g" % s["outputs"]["loss"] for s in d["steps"][:3]), file=sys.stderr)
PY
}
rm -f "$dir"/{local,allreduce,ps}.ms
for ((r = 1; r <= rounds; r++)); do
  run local --threads 1
  run allreduce --target "grpc://127.0.0.1:$w0"
  run ps --target "grpc://127.0.0.1:$p0"
done
"$python" - "$dir" "$batch" "$model" <<'PY'
import statistics, sys
d, batch, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def ms(name):
    v = [float(x) for line in open("%s/%s.ms" % (d, name)) for x in line.split()]
    return statistics.median(v), min(v), max(v), len(v)
base = ms("local")[0]
print("%s, batch %d, 1 thread per process; median step over %d steps (min-max)" % (model, batch, ms("local")[3]))
for name, what in (("local", "one process"), ("allreduce", "2 workers, all-reduce"), ("ps", "ps + 2 workers")):
    med, lo, hi, n = ms(name)
    print("%-24s %8.0f ms (%6.0f-%6.0f)  %6.2f samples/s  %5.2fx" % (what, med, lo, hi, batch * 1000 / med, base / med))
PY
