# Helpers shared by the shell tests. Source it after setting `root`:
#   source "$root/tests/test_lib.sh"      (and list "test_lib.sh" in the sh_test's data)
#
#   require_python torch onnx      fails the test, with the set-up hint, unless Debian's
#                                  python3 imports the modules
#   check NAME COMMAND...          runs COMMAND, prints "PASS NAME" or "FAIL NAME"; a failure
#                                  sets fail=1
#   free_port                      prints a TCP port free on 127.0.0.1 now
#   pids+=($!)                     processes in `pids` get SIGTERM, then SIGKILL, at exit
python=${python:-/usr/bin/python3}
fail=0
pids=()

require_python() {
  local log="${TEST_TMPDIR:-/tmp}/require_python.txt"
  if ! "$python" -c "import $(IFS=,; echo "$*")" > "$log" 2>&1; then
    tail -3 "$log"
    echo "FAIL: $python cannot import $*; run scripts/setup.sh (it installs Debian's python3-torch," \
      "python3-torchvision and python3-onnx)"
    exit 1
  fi
}

check() {
  local name="$1"; shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fail=1; fi
}

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_kill_pids() {
  [ "${#pids[@]}" -gt 0 ] || return 0
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
}
trap _kill_pids EXIT
