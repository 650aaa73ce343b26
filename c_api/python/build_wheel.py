#!/usr/bin/python3
"""Builds sluice-<version>-py3-none-<platform>.whl: the Python package (c_api/python/sluice)
with libsluice_c.so beside it, where the package looks for it first.

Usage: build_wheel.py --library LIBSLUICE_C.SO --package DIR --version-file VERSION --out DIR

scripts/build_wheel.sh builds the library and calls this; //c_api:wheel_test calls it too,
then installs the wheel into a fresh venv. setuptools and wheel (Debian's python3-setuptools
and python3-wheel) do the packaging, through pip, offline: `pip wheel --no-build-isolation`.
The wheel's Python code is version-independent (py3, no ABI); the library is built for this
machine's platform and links Debian's shared libraries (protobuf, gRPC, Abseil, oneDNN,
OpenBLAS, ONNX), which must be installed where the wheel is used (scripts/setup.sh).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SETUP_PY = r'''
import os

import setuptools
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel


class BuildPyWithPth(build_py):
    """Puts sluice-numpy.pth at the root of site-packages (see NUMPY_PTH in build_wheel.py)."""

    def run(self):
        super().run()
        self.copy_file("sluice-numpy.pth", os.path.join(self.build_lib, "sluice-numpy.pth"))


class NativeDistribution(setuptools.Distribution):
    """Holds a native library: the wheel is platform-specific, its files at the root."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Tagged py3-none-<platform>: any Python 3, one platform (the library is native)."""

    def get_tag(self):
        return "py3", "none", super().get_tag()[2]


setuptools.setup(
    name="sluice",
    version=%(version)r,
    description="Sluice: a TensorFlow-style dataflow runtime for ONNX models "
                "(TensorFlow-style Graph/Session and ONNX Runtime-style InferenceSession)",
    long_description=%(readme)r,
    long_description_content_type="text/markdown",
    python_requires=">=3.8",
    # numpy is needed but not required here: offline (no PyPI) pip could not satisfy it, and
    # sluice-numpy.pth falls back on Debian's python3-numpy. `pip install sluice[numpy]` asks
    # pip for it where PyPI is reachable.
    extras_require={"numpy": ["numpy"]},
    packages=["sluice", "sluice.capi"],
    package_data={"sluice": ["libsluice_c.so", "py.typed", "*.pyi"]},
    cmdclass={"bdist_wheel": PlatformWheel, "build_py": BuildPyWithPth},
    distclass=NativeDistribution,
    zip_safe=False,
)
'''

# Run by Python at start-up from site-packages (a .pth line that starts with "import"): where
# the environment has no numpy of its own (a plain venv on a machine that cannot reach PyPI),
# Debian's python3-numpy, built for this same interpreter, becomes importable, after every
# package of the environment. Nothing happens when numpy is installed in the environment.
NUMPY_PTH = (
    "import os, sys, importlib.util; "
    "d = '/usr/lib/python3/dist-packages'; "
    "d in sys.path or not os.path.isdir(os.path.join(d, 'numpy')) "
    "or importlib.util.find_spec('numpy') is not None or sys.path.append(d)\n")

README = """Sluice runs ONNX models (and TensorFlow-style graphs) in process or on a cluster.

    import numpy as np, sluice
    sess = sluice.InferenceSession("model.onnx", threads=2)
    outputs = sess.run(None, {sess.get_inputs()[0].name: np.ones((1, 3, 224, 224), np.float32)})

The wheel holds the Python package and libsluice_c.so, which links the system's protobuf,
gRPC, Abseil, oneDNN, OpenBLAS and ONNX libraries (Debian 12's packages).
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", required=True)
    ap.add_argument("--package", required=True, help="the sluice package folder")
    ap.add_argument("--version-file", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    with open(args.version_file) as f:
        version = f.read().strip()
    if not re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.dev\d+)?", version):
        sys.exit("build_wheel: version %r in %s is not a PEP 440 release" % (version,
                                                                           args.version_file))
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sluice-wheel-") as stage:
        pkg = os.path.join(stage, "sluice")
        shutil.copytree(args.package, pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
        lib = os.path.join(pkg, "libsluice_c.so")
        # Debug sections only: the exported symbols stay. A third of the size in a -g build.
        strip = shutil.which("strip")
        if strip:
            subprocess.run([strip, "--strip-debug", "-o", lib, args.library], check=True)
        else:
            shutil.copyfile(args.library, lib)
        os.chmod(lib, 0o755)
        with open(os.path.join(stage, "sluice-numpy.pth"), "w") as f:
            f.write(NUMPY_PTH)
        with open(os.path.join(stage, "setup.py"), "w") as f:
            f.write(SETUP_PY % {"version": version, "readme": README})
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--wheel-dir", os.path.abspath(args.out), stage],
                       check=True, env=env, cwd=stage)
    wheels = [w for w in os.listdir(args.out)
              if w.startswith("sluice-%s-py3-none-" % version) and w.endswith(".whl")]
    if not wheels:
        sys.exit("build_wheel: pip wrote no sluice-%s wheel into %s" % (version, args.out))
    print(os.path.join(args.out, sorted(wheels)[-1]))


if __name__ == "__main__":
    main()
