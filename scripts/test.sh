#!/usr/bin/env bash
# Builds everything and runs the test suite; ends with "N passed, N failed" (test targets).
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
bazel test //... --test_summary=short "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|INCOMPLETE)' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1  # The build itself failed before any test ran.
fi
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ]
