# Helpers shared by the shell tests. Source it after setting `root`:
#   source "$root/tests/test_lib.sh"      (and list "test_lib.sh" in the sh_test's data)
#
#   require_python torch onnx      fails the test, with the set-up hint, unless Debian's
#                                  python3 imports the modules
#   check NAME COMMAND...          runs COMMAND, prints "PASS NAME" or "FAIL NAME"; a failure
#                                  sets fail=1
#   json_is FILE EXPR              true when the Python expression EXPR holds for `d`, the JSON
#                                  document in FILE (`sluice VERB --json > FILE`); prints the
#                                  expression and the document when it does not
#   json_value FILE EXPR           prints EXPR evaluated on `d` (strings bare, others as JSON)
#   start_cluster DIR JOBS [serve options...]
#                                  starts `sluice serve --port 0 --cluster-file DIR/cluster.spec
#                                  --json` for every task of JOBS ("ps=1;worker=2"), writes the
#                                  spec once all listen, waits until all are ready. Sets
#                                  cluster_spec, task_address[JOB:I], task_pid[JOB:I]; logs in
#                                  DIR/JOB_I.log. Needs $sluice.
#   serve_event LOG EVENT          prints the `sluice serve --json` line of EVENT (listening,
#                                  ready, stopped) in LOG once there (30 s at most)
#   restart_task DIR JOB I [serve options...]
#                                  starts that task again on its old port; waits until ready
#   loop_graph LOOP_DEV OUT_DEV M  prints a text GraphDef: x = 0; Loop M times x = x + 1 (on
#                                  LOOP_DEV); out = Neg(x) (on OUT_DEV); 2^40 runs for hours
#   pids+=($!)                     processes in `pids` get SIGTERM, then SIGKILL, at exit
#
# Every `sluice serve` a test starts, and every client it runs, shares one cluster secret
# (SLUICE_CLUSTER_SECRET, new for each test run), as a real cluster would.
python=${python:-/usr/bin/python3}
export SLUICE_CLUSTER_SECRET=${SLUICE_CLUSTER_SECRET:-$(head -c 24 /dev/urandom | base64)}
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

json_is() {
  "$python" - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if not eval("(%s)" % sys.argv[2], {"d": d}):  # parenthesized: it may span lines
    print("not true: %s\n  of %s: %s" % (sys.argv[2], sys.argv[1], json.dumps(d)[:3000]))
    sys.exit(1)
PY
}

json_value() {
  "$python" - "$@" <<'PY'
import json, sys
v = eval("(%s)" % sys.argv[2], {"d": json.load(open(sys.argv[1]))})
print(v if isinstance(v, str) else json.dumps(v))
PY
}

declare -A task_address task_pid
cluster_spec=

serve_event() {
  local line
  for _ in $(seq 1 300); do
    line=$(grep -m1 "\"event\": \"$2\"" "$1" 2>/dev/null) && { echo "$line"; return 0; }
    sleep 0.1
  done
  echo "FAIL: no $2 line from sluice serve in $1:" >&2
  cat "$1" >&2
  return 1
}

_address_of() {
  "$python" -c 'import json, sys; print(json.loads(sys.argv[1])["address"])' "$1"
}

start_cluster() {
  local dir=$1 jobs=$2 job n i key line addresses
  shift 2
  local file="$dir/cluster.spec" keys=() parts=()
  mkdir -p "$dir"
  rm -f "$file"
  IFS=';' read -ra parts <<< "$jobs"
  for part in "${parts[@]}"; do
    job=${part%=*}; n=${part#*=}
    for ((i = 0; i < n; i++)); do
      "$sluice" serve --port 0 --cluster-file "$file" --job "$job" --task "$i" --json "$@" \
        > "$dir/${job}_$i.log" 2>&1 &
      pids+=($!)
      task_pid[$job:$i]=$!
      keys+=("$job:$i")
    done
  done
  for key in "${keys[@]}"; do
    line=$(serve_event "$dir/${key/:/_}.log" listening) || return 1
    task_address[$key]=$(_address_of "$line")
  done
  cluster_spec=
  for part in "${parts[@]}"; do
    job=${part%=*}; n=${part#*=}; addresses=
    for ((i = 0; i < n; i++)); do addresses+="${addresses:+,}${task_address[$job:$i]}"; done
    cluster_spec+="${cluster_spec:+;}$job=$addresses"
  done
  echo "$cluster_spec" > "$file.tmp" && mv "$file.tmp" "$file"  # whole, never half-written
  for key in "${keys[@]}"; do
    serve_event "$dir/${key/:/_}.log" ready > /dev/null || return 1
  done
}

restart_task() {
  local dir=$1 job=$2 i=$3
  shift 3
  local address=${task_address[$job:$i]}
  "$sluice" serve --port "${address##*:}" --host "${address%:*}" --cluster-file "$dir/cluster.spec" \
    --job "$job" --task "$i" --json "$@" > "$dir/${job}_$i.log" 2>&1 &
  pids+=($!)
  task_pid[$job:$i]=$!
  serve_event "$dir/${job}_$i.log" ready > /dev/null
}

loop_graph() {
  sed -e "s|LOOP_DEVICE|$1|" -e "s|OUT_DEVICE|$2|" -e "s|TRIPS|$3|" <<'PBTXT'
node { name: "m" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 int64_val: TRIPS } } } }
node { name: "x0" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 0 } } } }
node { name: "loop" op: "Onnx>Loop" input: "m" input: "x0" device: "LOOP_DEVICE"
       attr { key: "Tm" value { list { type: DT_INT64 } } } attr { key: "Tc" value { list { } } }
       attr { key: "Tloop" value { list { type: DT_FLOAT } } } attr { key: "Tcap" value { list { } } }
       attr { key: "Tout" value { list { type: DT_FLOAT } } }
       attr { key: "body" value { func { name: "count" } } } }
node { name: "out" op: "Neg" input: "loop" device: "OUT_DEVICE" attr { key: "T" value { type: DT_FLOAT } } }
library { function {
  signature { name: "count" input_arg { name: "i" type: DT_INT64 } input_arg { name: "c" type: DT_BOOL }
              input_arg { name: "x" type: DT_FLOAT }
              output_arg { name: "rc" type: DT_BOOL } output_arg { name: "rx" type: DT_FLOAT } }
  node_def { name: "i" op: "_Arg" attr { key: "T" value { type: DT_INT64 } } attr { key: "index" value { i: 0 } } }
  node_def { name: "c" op: "_Arg" attr { key: "T" value { type: DT_BOOL } } attr { key: "index" value { i: 1 } } }
  node_def { name: "x" op: "_Arg" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index" value { i: 2 } } }
  node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
  node_def { name: "next" op: "Add" input: "x" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
  node_def { name: "rc" op: "_Retval" input: "c" attr { key: "T" value { type: DT_BOOL } } attr { key: "index" value { i: 0 } } }
  node_def { name: "rx" op: "_Retval" input: "next" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index" value { i: 1 } } }
} }
PBTXT
}

_kill_pids() {
  [ "${#pids[@]}" -gt 0 ] || return 0
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
}
trap _kill_pids EXIT
