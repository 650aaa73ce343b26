#!/usr/bin/env bash
# Runs the unit suite under a sanitizer, built with Debian's clang in a Bazel output base of
# its own (~/.cache/sluice-bazel-clang), so the gcc build's is untouched:
#
#   scripts/sanitize.sh asan            # AddressSanitizer (+ LeakSanitizer)
#   scripts/sanitize.sh ubsan           # UndefinedBehaviorSanitizer, every finding fatal
#   scripts/sanitize.sh tsan //rpc/...  # ThreadSanitizer, on some targets
#
# Ends with "N passed, N failed" like scripts/test.sh. Slow: a full clang build with the
# sanitizer (about as long as the gcc build), then the suite at a third of its usual speed.
# Tests that load the C library into Debian's python3 are left out under asan and tsan (the
# sanitizer runtime would have to be preloaded into the interpreter). Under tsan the tests
# load instrumented builds of the system's abseil and gRPC (scripts/tsan_deps.sh; the first
# run builds them), without which ThreadSanitizer cannot see absl::Mutex or gRPC's handoffs
# between threads and reports what they order as races.
set -uo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case $kind in
  asan|ubsan|tsan) shift ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(//...)
output_base=${SLUICE_CLANG_OUTPUT_BASE:-$HOME/.cache/sluice-bazel-clang}
filters=()
if [ "$kind" != ubsan ]; then filters=(--test_tag_filters=-python); fi
env_args=()
if [ "$kind" = tsan ]; then
  tsan_libs=$(scripts/tsan_deps.sh) || { echo "0 passed, 1 failed"; exit 1; }
  env_args=(--test_env=LD_LIBRARY_PATH="$tsan_libs")
fi
log=$(mktemp)
bazel --output_base="$output_base" test --config="$kind" --keep_going "${filters[@]}" "${env_args[@]}" --test_summary=short \
  --test_env=ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:handle_abort=1 \
  --test_env=LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan_suppressions.txt \
  --test_env=UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  --test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$PWD/build_defs/tsan_suppressions.txt \
  "${targets[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|INCOMPLETE)' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ]
