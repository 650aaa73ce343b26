#!/usr/bin/python3
"""Runs every example of the user guides (docs/*.md), so none goes stale.

Usage: docs_examples.py ROOT [GUIDE.md ...]   (ROOT: a tree with docs/, tests/testdata/,
examples/, c_api/ headers and the built bazel-bin/tools/sluice and bazel-bin/c_api/
libsluice_c.so, i.e. the repository after `bazel build //:sluice //:libsluice_c.so`, or the
test's runfiles)

Each guide runs in a fresh folder that looks like the repository root: tests/, examples/,
c_api/ and bazel-bin/ are links into ROOT. Its fenced blocks run in order:
  ```sh       bash -euo pipefail, with `sluice` on PATH and the folder as working directory
  ```python   Debian's python3, the sluice package importable (as after the wheel is installed)
  ```c        compiled with cc -I<root> against libsluice_c.so, then run
Blocks of any other language (text, console, pbtxt, json) are shown, not run. A block that
fails (non-zero exit, or more than 180 s) fails the guide, with its output. Processes a block
leaves running in the background are stopped when its guide ends.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"^```([a-z]*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
RUN = ("sh", "python", "c")
TIMEOUT_S = 180


def blocks(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        yield m.group(1), m.group(2), line


def built(root, rel):
    """A build output: under bazel-bin/ in a source tree, at its own path in runfiles."""
    in_tree = os.path.join(root, "bazel-bin", rel)
    return in_tree if os.path.exists(in_tree) else os.path.join(root, rel)


def environment(root, work):
    env = dict(os.environ)
    bin_dir = os.path.join(work, ".bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.symlink(built(root, "tools/sluice"), os.path.join(bin_dir, "sluice"))
    env["PATH"] = bin_dir + ":/usr/bin:/bin"
    env["PYTHONPATH"] = os.path.join(root, "c_api/python")
    env["SLUICE_C_LIBRARY"] = built(root, "c_api/libsluice_c.so")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.pop("TF_CONFIG", None)
    return env


def run_block(lang, code, n, work, root, env):
    if lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    elif lang == "python":
        cmd = ["/usr/bin/python3", "-c", code]
    else:
        src = os.path.join(work, ".example_%d.c" % n)
        exe = os.path.join(work, ".example_%d" % n)
        with open(src, "w") as f:
            f.write(code)
        lib_dir = os.path.dirname(built(root, "c_api/libsluice_c.so"))
        compile_cmd = ["cc", "-std=c11", "-Wall", "-Werror", "-I" + root, src,
                       os.path.join(lib_dir, "libsluice_c.so"), "-lm", "-o", exe]
        c = subprocess.run(compile_cmd, cwd=work, env=env, capture_output=True, text=True)
        if c.returncode != 0:
            return c.returncode, c.stdout + c.stderr
        cmd = [exe]
        env = dict(env, LD_LIBRARY_PATH=lib_dir)
    p = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT_S)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return -1, out + "\n(timed out after %d s)" % TIMEOUT_S
    finally:
        try:  # Whatever the block left running in its session (servers started with &).
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def run_guide(root, guide):
    work = tempfile.mkdtemp(prefix="sluice-docs-")
    try:
        for name in ("tests", "examples", "c_api", "docs", "scripts", "VERSION"):
            if os.path.exists(os.path.join(root, name)):
                os.symlink(os.path.join(root, name), os.path.join(work, name))
        for rel in ("tools/sluice", "c_api/libsluice_c.so"):
            os.makedirs(os.path.dirname(os.path.join(work, "bazel-bin", rel)), exist_ok=True)
            os.symlink(built(root, rel), os.path.join(work, "bazel-bin", rel))
        env = environment(root, work)
        ran = 0
        for n, (lang, code, line) in enumerate(blocks(guide)):
            if lang not in RUN:
                continue
            status, out = run_block(lang, code, n, work, root, env)
            ran += 1
            where = "%s:%d (%s)" % (os.path.relpath(guide, root), line, lang)
            if status != 0:
                print("FAIL %s: exit %s\n%s\n--- output ---\n%s" % (where, status, code, out))
                return False, ran
        return True, ran
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    guides = sys.argv[2:] or sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    if not guides:
        sys.exit("no guides under %s/docs" % root)
    failed = 0
    for g in guides:
        ok, ran = run_guide(root, g)
        if ran == 0:
            print("FAIL %s: no runnable example" % os.path.relpath(g, root))
            ok = False
        print("%s %s (%d examples)" % ("PASS" if ok else "FAIL", os.path.relpath(g, root), ran))
        failed += not ok
    print("%d guides passed, %d failed" % (len(guides) - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
