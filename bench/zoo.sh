#!/usr/bin/env bash
# The model zoo against ONNX Runtime, side by side in one run: every model of
# bench/zoo_models.py (exported once, cached under out/zoo), at 1 and 2 threads, timed by
# `sluice bench` and by ONNX Runtime (npm onnxruntime-node, bench/ort_bench.js) with the same
# random inputs policy. Prints per model and thread count the median run time of both, the
# ratio sluice/ort (below 1: Sluice is faster) and each process's peak resident memory, then
# the geometric mean of the ratios per thread count. Rows also go to out/zoo/results.tsv.
#
#   bench/zoo.sh                          # the whole zoo, 10 timed runs each (about 5 min)
#   bench/zoo.sh -n 20 -t 1 resnet50 gru  # some models, 20 runs, 1 thread only
#   bench/zoo.sh -b /tmp/old/sluice       # also an older sluice binary, in the same rounds
#   bench/zoo.sh -a                       # both on AVX2 kernels on an AVX-512 machine: Sluice under
#                                         # SLUICE_MAX_ISA=avx2, ONNX Runtime from a copy whose
#                                         # XGETBV reports no AVX-512 state (bench/ort_avx2.py)
#
# With -b, each row also has the older binary's time and old/ort, and the geometric means of
# both ratios are printed, so a change is checked for regressions on one machine in one run.
# SLUICE=PATH times that binary instead of building bazel-out/k8-opt/bin/tools/sluice.
# Peak memory is the whole process's (/usr/bin/time's maximum RSS): ORT's includes node's
# runtime (about 45 MB), Sluice's the model loaded once.
set -uo pipefail
cd "$(dirname "$0")/.."
iters=10 threads="1 2" old="" avx2=""
while getopts "n:t:b:ah" opt; do
  case $opt in
    n) iters=$OPTARG ;;
    t) threads=$OPTARG ;;
    b) old=$OPTARG ;;
    a) avx2=1 ;;
    *) sed -n '2,22p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
work=out/zoo
mkdir -p "$work"
source bench/zoo_prepare.sh  # models, peers, sluice
if [ -n "$avx2" ]; then
  # ONNX Runtime has no setting that caps its instruction set: see bench/ort_avx2.py.
  peers=$(bench/ort_avx2.sh "$peers") || { echo "could not make ONNX Runtime's AVX2 copy" >&2; exit 1; }
  export SLUICE_MAX_ISA=avx2
  echo "AVX2 kernels on both sides: SLUICE_MAX_ISA=avx2, ONNX Runtime with no AVX-512 state" >&2
fi
[ -z "$old" ] || [ -x "$old" ] || { echo "-b $old: not an executable" >&2; exit 2; }

# Runs "$@" under /usr/bin/time; prints "MEDIAN_MS PEAK_MB", or "- -" when it failed.
timed() {
  local log rss median
  log=$(mktemp)
  if /usr/bin/time -f "peak_kb %M" "$@" >"$log" 2>&1; then
    median=$(grep -o '"median_ms": *[0-9.]*' "$log" | tail -1 | grep -o '[0-9.]*$')
    rss=$(awk '/^peak_kb/ {printf "%.0f", $2 / 1024}' "$log")
    echo "${median:--} ${rss:--}"
  else
    sed 's/^/    /' "$log" | tail -3 >&2
    echo "- -"
  fi
  rm -f "$log"
}

results=$work/results.tsv
printf "model\tthreads\tsluice_ms\tort_ms\tratio\tsluice_mb\tort_mb\told_ms\told_ratio\told_mb\n" > "$results"
printf "%-22s %3s %11s %11s %7s %10s %8s" model thr sluice_ms ort_ms ratio sluice_mb ort_mb
[ -z "$old" ] && echo || printf " %9s %9s %7s %7s\n" old_ms old/ort old_mb new/old
declare -A log_sum count old_sum old_count step_sum
for m in "${models[@]}"; do
  model=$work/$m.onnx
  [ -f "$model" ] || continue
  for t in $threads; do
    read -r sm smb < <(timed "$sluice" bench "$model" --threads "$t" --iters "$iters")
    read -r om omb < <(NODE_PATH="$peers/node_modules" timed node bench/ort_bench.js "$model" "$t" "$iters")
    oldm=- oldmb=- old_ratio=- step=-
    if [ -n "$old" ]; then
      read -r oldm oldmb < <(timed "$old" bench "$model" --threads "$t" --iters "$iters")
      if [ "$oldm" != - ] && [ "$om" != - ] && [ "$sm" != - ]; then
        old_ratio=$(awk -v s="$oldm" -v o="$om" 'BEGIN { printf "%.2f", s / o }')
        step=$(awk -v s="$sm" -v o="$oldm" 'BEGIN { printf "%.3f", s / o }')
        old_sum[$t]=$(awk -v a="${old_sum[$t]:-0}" -v s="$oldm" -v o="$om" 'BEGIN { printf "%.6f", a + log(s / o) }')
        step_sum[$t]=$(awk -v a="${step_sum[$t]:-0}" -v s="$sm" -v o="$oldm" 'BEGIN { printf "%.6f", a + log(s / o) }')
        old_count[$t]=$(( ${old_count[$t]:-0} + 1 ))
      fi
    fi
    ratio=-
    if [ "$sm" != - ] && [ "$om" != - ]; then
      ratio=$(awk -v s="$sm" -v o="$om" 'BEGIN { printf "%.2f", s / o }')
      log_sum[$t]=$(awk -v a="${log_sum[$t]:-0}" -v s="$sm" -v o="$om" 'BEGIN { printf "%.6f", a + log(s / o) }')
      count[$t]=$(( ${count[$t]:-0} + 1 ))
    fi
    printf "%-22s %3s %11s %11s %7s %10s %8s" "$m" "$t" "$sm" "$om" "$ratio" "$smb" "$omb"
    [ -z "$old" ] && echo || printf " %9s %9s %7s %7s\n" "$oldm" "$old_ratio" "$oldmb" "$step"
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$m" "$t" "$sm" "$om" "$ratio" "$smb" "$omb" \
      "$oldm" "$old_ratio" "$oldmb" >> "$results"
  done
done
for t in $threads; do
  [ "${count[$t]:-0}" -gt 0 ] || continue
  printf "geometric mean sluice/ort at %s thread(s): %.2f over %d models\n" "$t" \
    "$(awk -v a="${log_sum[$t]}" -v n="${count[$t]}" 'BEGIN { print exp(a / n) }')" "${count[$t]}"
done
for t in $threads; do
  [ "${old_count[$t]:-0}" -gt 0 ] || continue
  printf "older binary at %s thread(s): geometric mean old/ort %.2f, new/old %.3f over %d models\n" "$t" \
    "$(awk -v a="${old_sum[$t]}" -v n="${old_count[$t]}" 'BEGIN { print exp(a / n) }')" \
    "$(awk -v a="${step_sum[$t]}" -v n="${old_count[$t]}" 'BEGIN { print exp(a / n) }')" "${old_count[$t]}"
done
