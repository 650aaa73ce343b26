#!/usr/bin/env bash
# Whether the master, not the frontend, makes a model fast: for each ONNX model, the GraphDef
# that `sluice convert --no-optimize` writes is timed by `sluice bench` against the model
# itself, interleaved, on the same input values (written once from a fixed seed). With -b, a
# second sluice binary (an older build, say) times the ONNX model in the same rounds, so a
# change can be checked for regressions on the same machine in the same run.
#
#   bench/graphdef_parity.sh out/zoo/resnet50.onnx out/zoo/swin_t.onnx
#   bench/graphdef_parity.sh -n 7 -i 10 -t 2 -b /tmp/old/sluice out/zoo/*.onnx
#
# Prints per model the median (over rounds) of each bench's median_ms, the spread
# (min..max over rounds), and the ratios graphdef/onnx (and old/new with -b, of the medians and
# of the fastest rounds, which a busy neighbour disturbs least).
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=5 iters=10 threads=1 old=""
while getopts "n:i:t:b:h" opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    i) iters=$OPTARG ;;
    t) threads=$OPTARG ;;
    b) old=$OPTARG ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,13p' "$0"; exit 2; }
bazel build -c opt //tools:sluice >/dev/null 2>&1 || { echo "bazel build -c opt //tools:sluice failed" >&2; exit 1; }
sluice=${SLUICE:-bazel-out/k8-opt/bin/tools/sluice}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median_of() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread_of() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
bench_ms() { "$@" --threads "$threads" --iters "$iters" --json 2>/dev/null | grep -o '"median_ms": *[0-9.]*' | grep -o '[0-9.]*$'; }

printf "%-24s %10s %10s %7s %16s %16s" model onnx_ms pb_ms pb/onnx onnx_spread pb_spread
[ -n "$old" ] && printf " %10s %8s %16s %8s" old_ms old/new old_spread min_o/n
printf "\n"
for model in "$@"; do
  name=$(basename "$model" .onnx)
  pb=$work/$name.pb
  "$sluice" convert --no-optimize "$model" -o "$pb" --json > "$work/$name.json" || continue
  # The same values for both: one file per required input, named by ONNX input and by tensor.
  /usr/bin/python3 - "$work/$name.json" "$work/$name" <<'PY' > "$work/$name.args" || continue
import json, sys
import numpy as np
from onnx import numpy_helper
doc, prefix = json.load(open(sys.argv[1])), sys.argv[2]
rng = np.random.default_rng(0)
kinds = {"float": np.float32, "int64": np.int64, "int32": np.int32, "bool": np.bool_, "double": np.float64}
onnx_args, pb_args = [], []
for i, inp in enumerate(doc["inputs"]):
    if inp["has_default"]:
        continue
    dims = [int(d) if d.lstrip("-").isdigit() and int(d) > 0 else 1 for d in inp["shape"].strip("[]").split(",") if d]
    dt = kinds[inp["dtype"]]
    value = rng.uniform(-1, 1, dims).astype(dt) if dt in (np.float32, np.float64) else rng.integers(0, 8, dims).astype(dt)
    path = f"{prefix}_in{i}.pb"
    open(path, "wb").write(numpy_helper.from_array(value, inp["name"]).SerializeToString())
    onnx_args.append(f"--input {inp['name']}={path}")
    pb_args.append(f"--input {inp['tensor']}={path}")
for o in doc["outputs"]:
    pb_args.append(f"--output {o['tensor']}")
print(" ".join(onnx_args))
print(" ".join(pb_args))
PY
  onnx_args=$(sed -n 1p "$work/$name.args")
  pb_args=$(sed -n 2p "$work/$name.args")
  : > "$work/onnx.ms"; : > "$work/pb.ms"; : > "$work/old.ms"
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2086  # the args are words
    bench_ms "$sluice" bench "$model" $onnx_args >> "$work/onnx.ms"
    # shellcheck disable=SC2086
    bench_ms "$sluice" bench "$pb" $pb_args >> "$work/pb.ms"
    # shellcheck disable=SC2086
    [ -n "$old" ] && bench_ms "$old" bench "$model" $onnx_args >> "$work/old.ms"
  done
  o=$(median_of < "$work/onnx.ms") p=$(median_of < "$work/pb.ms")
  printf "%-24s %10s %10s %7s %16s %16s" "$name" "$o" "$p" "$(awk -v a="$p" -v b="$o" 'BEGIN { printf "%.3f", a / b }')" \
    "$(spread_of < "$work/onnx.ms")" "$(spread_of < "$work/pb.ms")"
  if [ -n "$old" ]; then
    d=$(median_of < "$work/old.ms")
    lo_old=$(sort -g "$work/old.ms" | head -1) lo_new=$(sort -g "$work/onnx.ms" | head -1)
    printf " %10s %8s %16s %8s" "$d" "$(awk -v a="$d" -v b="$o" 'BEGIN { printf "%.3f", a / b }')" \
      "$(spread_of < "$work/old.ms")" "$(awk -v a="$lo_old" -v b="$lo_new" 'BEGIN { printf "%.3f", a / b }')"
  fi
  printf "\n"
done
