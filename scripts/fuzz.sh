#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) as libFuzzer binaries with AddressSanitizer and UBSan
# (--config=fuzz: clang, in a Bazel output base of its own so the gcc build's is untouched)
# and runs each on a copy of its seed corpus, one process on one core.
#
#   scripts/fuzz.sh                           # every target for 60 s
#   scripts/fuzz.sh -n 1000000                # every target for 10^6 executions
#   scripts/fuzz.sh -t 300 onnx_import_fuzzer # one target for 5 minutes
#   FUZZ_FLAGS=-entropic=1 scripts/fuzz.sh    # extra libFuzzer flags, after the defaults
#
# libFuzzer's entropic schedule is off by default here: with the whole runtime instrumented
# (about 370,000 counters) its per-run bookkeeping took 35-40% of onnx_structured_fuzzer's
# time (perf), and the fuzzer ran 169 exec/s with it against 348 without (with OpenBLAS
# held to one thread, as the fuzzed sessions ask for it).
#
# Prints per target the executions done, exec/s and FOUND or clean. Under -o (default
# out/fuzz): <target>/log, <target>/corpus (the seeds plus what the run added) and the
# crash-*, leak-*, timeout-* and oom-* inputs it found; replay one with
# the binary (its path is printed) with FILE as its argument.
set -uo pipefail
cd "$(dirname "$0")/.."

ALL="tensor_proto_fuzzer graphdef_fuzzer onnx_import_fuzzer onnx_structured_fuzzer onnx_run_fuzzer
     master_service_fuzzer worker_service_fuzzer"
runs="" seconds=60 out=out/fuzz
while getopts "n:t:o:h" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    t) seconds=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,21p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=${*:-$ALL}

output_base=${SLUICE_CLANG_OUTPUT_BASE:-$HOME/.cache/sluice-bazel-clang}
labels=$(for t in $targets; do echo "//fuzz:$t"; done)
# shellcheck disable=SC2086
bazel --output_base="$output_base" build --config=fuzz $labels || exit 1
bin=$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)

# Allocations above 1 GiB fail (RESOURCE_EXHAUSTED in Sluice, as on a machine without the
# memory) instead of being reported as out-of-memory; anything else over the RSS limit is.
# A small quarantine and short allocation stacks: each ONNX input forks the shape-inference
# child, whose cost grows with the fuzzer's RSS (690 MB with ASan's 256 MB quarantine, 210 MB
# with 16 MB), and unwinding 30 frames per allocation took 8% of the time. Replay a finding
# with plain ASAN_OPTIONS for full allocation stacks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1:handle_abort=1:quarantine_size_mb=16:malloc_context_size=5}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/fuzz/lsan_suppressions.txt}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
read -r -a extra_flags <<<"${FUZZ_FLAGS:-}"

found_any=0
for t in $targets; do
  case $t in
    onnx_*) seeds=fuzz/corpus/onnx max_len=65536 ;;
    *) seeds=fuzz/corpus/$t max_len=16384 ;;
  esac
  dir=$out/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp "$seeds"/* "$dir/corpus/"
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  "$bin/fuzz/$t" "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=3072 \
    -malloc_limit_mb=2048 -entropic=0 -print_final_stats=1 -artifact_prefix="$dir/" \
    "${extra_flags[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1
  status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  findings=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' -o -name 'slow-unit-*' \) | sort)
  if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
    found_any=1
    printf '%-24s %10s execs %7s exec/s  FOUND (exit %d): %s\n' "$t" "${execs:-?}" "${rate:-?}" \
      "$status" "${findings:-see $dir/log}"
  else
    printf '%-24s %10s execs %7s exec/s  clean\n' "$t" "${execs:-?}" "${rate:-?}"
  fi
done
echo "binaries: $bin/fuzz/; logs and findings: $out/<target>/"
exit $found_any
