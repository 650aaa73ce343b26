#!/usr/bin/env bash
# No code of a lower layer includes or depends on a higher one (tests/check_layers.py): the
# tree passes, and a tree with one wrong include fails, naming the file and line.
set -euo pipefail
checker=tests/check_layers.py

/usr/bin/python3 "$checker" .

bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
mkdir -p "$bad/framework" "$bad/master"
printf '#include "framework/tensor.h"\n' > "$bad/master/ok.cc"
printf '// fine\n#include "master/session.h"\n' > "$bad/framework/wrong.cc"
if out=$(/usr/bin/python3 "$checker" "$bad"); then
  echo "FAIL: a framework file including master/ passed the check"; exit 1
fi
grep -q 'framework/wrong.cc:2: framework includes master' <<<"$out" || { echo "FAIL: $out"; exit 1; }

# The same for a BUILD dependency of a non-test rule; a test rule may depend upwards.
rm "$bad/framework/wrong.cc"
cat > "$bad/framework/BUILD" <<'BUILD'
cc_library(
    name = "lib",
    deps = ["//rpc:grpc_util"],
)
cc_test(
    name = "lib_test",
    deps = ["//master:session"],
)
BUILD
if out=$(/usr/bin/python3 "$checker" "$bad"); then
  echo "FAIL: a framework library depending on //rpc passed the check"; exit 1
fi
grep -q "cc_library 'lib' of framework depends on //rpc" <<<"$out" || { echo "FAIL: $out"; exit 1; }
[ "$(grep -c depends <<<"$out")" -eq 1 ] || { echo "FAIL: the test rule was flagged: $out"; exit 1; }
echo "PASS"
