#!/usr/bin/python3
"""Fails when code of a lower layer includes or depends on a higher one.

Usage: check_layers.py ROOT

Layers, lowest first: proto; framework; ops; kernels; optimizer; worker; master; rpc. The
optimizer sits on the kernels (constant folding runs them) and only the master (and what is
above it) uses it. The ONNX frontend sits on ops (it makes GraphDefs and never runs them); training sits on the frontend and the
master's Session; c_api, tools, bench, examples, fuzz and tests may use everything. Test code (files
named *_test*, *test_util*, and testonly BUILD rules) may reach up to any layer: tests
are clients. Checked: every `#include "pkg/..."` of a project source, and every `//pkg`
label in the deps of a non-test BUILD rule.
"""
import os
import re
import sys

BASE = {"proto", "third_party", "build_defs"}
ALLOWED = {
    "proto": set(),
    "framework": {"proto"},
    "ops": {"proto", "framework"},
    "kernels": {"proto", "framework", "ops"},
    "optimizer": {"proto", "framework", "ops", "kernels"},
    "worker": {"proto", "framework", "ops", "kernels"},
    "master": {"proto", "framework", "ops", "kernels", "optimizer", "worker"},
    "rpc": {"proto", "framework", "ops", "kernels", "optimizer", "worker", "master"},
    "frontend": {"proto", "framework", "ops"},
    "training": {"proto", "framework", "ops", "frontend", "optimizer", "master"},
}
TOP = {"c_api", "tools", "bench", "examples", "tests", "fuzz"}  # May use any layer.
PACKAGES = set(ALLOWED) | TOP

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
LABEL = re.compile(r'"//([a-z_]+)[:/"]')


def is_test_file(name):
    return "_test" in name or "test_util" in name


def check_includes(root, pkg, test_files, errors):
    for dirpath, _, files in os.walk(os.path.join(root, pkg)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if not f.endswith((".h", ".cc", ".c")) or is_test_file(f) or path in test_files:
                continue
            with open(path, encoding="utf-8", errors="replace") as src:
                for lineno, line in enumerate(src, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in PACKAGES and m.group(1) != pkg \
                            and m.group(1) not in ALLOWED[pkg]:
                        rel = os.path.relpath(path, root)
                        errors.append(f"{rel}:{lineno}: {pkg} includes {m.group(1)}: "
                                      f"{line.strip()}")


def rules(build_text):
    """Top-level rule calls of a BUILD file, as (kind, text)."""
    out, depth, start, kind = [], 0, None, None
    for m in re.finditer(r"[()]|^([a-z_]+)\(", build_text, re.M):
        tok = m.group(0)
        if depth == 0 and m.group(1):
            kind, start, depth = m.group(1), m.start(), 1
        elif tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
            if depth == 0 and start is not None:
                out.append((kind, build_text[start:m.end()]))
                start = None
    return out


def check_build(root, pkg, test_files, errors):
    """Checks non-test rules' deps; adds the sources of test rules to `test_files`."""
    for dirpath, _, files in os.walk(os.path.join(root, pkg)):
        if "BUILD" not in files:
            continue
        path = os.path.join(dirpath, "BUILD")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for kind, rule in rules(text):
            if kind.endswith("_test") or "testonly = True" in rule:
                for src in re.findall(r'"([A-Za-z0-9_.]+\.(?:h|cc|c))"', rule):
                    test_files.add(os.path.join(dirpath, src))
                continue
            if kind in ("filegroup", "exports_files", "package", "load"):
                continue
            name = re.search(r'name = "([^"]+)"', rule)
            # Who may use a rule (visibility) is not what it uses.
            uses = re.sub(r"visibility = \[[^\]]*\]", "", rule)
            for dep in LABEL.findall(uses):
                if dep in PACKAGES and dep != pkg and dep not in ALLOWED[pkg]:
                    rel = os.path.relpath(path, root)
                    errors.append(f"{rel}: {kind} '{name.group(1) if name else '?'}' of {pkg} "
                                  f"depends on //{dep}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    for pkg in sorted(ALLOWED):
        if os.path.isdir(os.path.join(root, pkg)):
            test_files = set()
            check_build(root, pkg, test_files, errors)
            check_includes(root, pkg, test_files, errors)
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} dependencies from a lower layer to a higher one")
        return 1
    print("layering: every dependency points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
