# Sourced from the repository root by bench/zoo.sh and bench/zoo_parity.sh, with `work` set and
# the model names as arguments: exports those models of bench/zoo_models.py (every one when
# none is named) into $work, once; sets `models` to them, `peers` to a folder whose
# node_modules holds npm's onnxruntime-node (installed on first use) and `sluice` to the binary
# to run (bazel-out/k8-opt/bin/tools/sluice, built here, unless SLUICE names one).
models=("$@")
[ ${#models[@]} -gt 0 ] || mapfile -t models < <(/usr/bin/python3 bench/zoo_models.py --list)
/usr/bin/python3 bench/zoo_models.py "$work" --only "$(IFS=,; echo "${models[*]}")" ||
  echo "(some models did not export; they are left out)" >&2

peers=bench/.peers
if [ ! -d "$peers/node_modules/onnxruntime-node" ]; then
  # --ignore-scripts: its install script fetches GPU parts, which fails offline.
  mkdir -p "$peers" && (cd "$peers" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
if [ -z "${SLUICE:-}" ]; then
  bazel build -c opt //tools:sluice >/dev/null 2>&1 || { echo "bazel build -c opt //tools:sluice failed" >&2; exit 1; }
fi
sluice=${SLUICE:-bazel-out/k8-opt/bin/tools/sluice}  # bazel-bin follows whichever build ran last
