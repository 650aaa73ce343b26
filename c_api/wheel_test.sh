#!/bin/bash
# The wheel as a user gets it: built by c_api/python/build_wheel.py (what scripts/build_wheel.sh
# runs) from the libsluice_c.so Bazel built, installed with pip into a fresh venv, and used
# from another folder with no environment variables: an ONNX model through InferenceSession
# and a TensorFlow-style graph through Session.
set -euo pipefail

root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(tr -d ' \n' < "$root/VERSION")
/usr/bin/python3 "$root/c_api/python/build_wheel.py" --library "$root/c_api/libsluice_c.so" \
  --package "$root/c_api/python/sluice" --version-file "$root/VERSION" --out "$tmp/dist" >"$tmp/built"
wheel=$(cat "$tmp/built")
case "$(basename "$wheel")" in
  "sluice-$version-py3-none-linux_"*.whl) ;;
  *) fail "wheel name $(basename "$wheel") is not sluice-$version-py3-none-<platform>.whl" ;;
esac
/usr/bin/python3 -m zipfile -l "$wheel" | grep -q ' *sluice/libsluice_c.so' || fail "no library in the wheel"
/usr/bin/python3 -m zipfile -l "$wheel" | grep -q 'sluice/__init__.pyi' || fail "no type stubs in the wheel"

# A plain venv, as `python3 -m venv v && v/bin/pip install sluice-*.whl` makes it: offline,
# numpy is Debian's python3-numpy, which the wheel's sluice-numpy.pth makes importable.
/usr/bin/python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --no-index --quiet --disable-pip-version-check "$wheel"

mkdir -p "$tmp/elsewhere"
cp "$root/tests/testdata/onnx/mlp.onnx" "$tmp/elsewhere/model.onnx"
cat >"$tmp/elsewhere/use_it.py" <<'PY'
import sys
import numpy as np  # before sluice: the wheel's .pth makes Debian's numpy importable
import sluice

assert "/venv" in sluice.library_path() and "site-packages" in sluice.library_path(), sluice.library_path()
print("sluice", sluice.__version__, "from", sluice.library_path())
expected_version = sys.argv[1]
assert sluice.__version__ == expected_version, (sluice.__version__, expected_version)

sess = sluice.InferenceSession("model.onnx", threads=1)
assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == [("x", ["N", 2], "tensor(float)")]
x = np.array([[1, 2], [3, 4]], np.float32)
(y,) = sess.run(None, {"x": x})
np.testing.assert_allclose(y, np.maximum(x @ np.array([[1, -1], [2, 1]], np.float32) + [0.5, -10], 0))

g = sluice.Graph()
a = g.placeholder("a", np.float32, shape=(None, 2))
w = g.constant([[1, 2], [3, 4]], name="w", dtype=np.float32)
out = g.op("Relu", [g.op("MatMul", [a, w])])
with sluice.Session(g) as s:
    got = s.run(out, {a: np.array([[1, -1], [0, 1]], np.float32)})
np.testing.assert_array_equal(got, [[0, 0], [3, 4]])
print("wheel works")
PY
(cd "$tmp/elsewhere" && env -i HOME="$tmp" PATH=/usr/bin:/bin "$tmp/venv/bin/python" use_it.py "$version") \
  || fail "the installed wheel does not work"
# And in a venv that sees the system's packages (numpy from there, the usual way).
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv2"
"$tmp/venv2/bin/pip" install --no-index --quiet --disable-pip-version-check "$wheel"
(cd "$tmp/elsewhere" && env -i HOME="$tmp" PATH=/usr/bin:/bin "$tmp/venv2/bin/python" use_it.py "$version") \
  || fail "the installed wheel does not work with --system-site-packages"
echo "PASS: $(basename "$wheel") installs into a venv and runs from $tmp/elsewhere"
