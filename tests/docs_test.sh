#!/bin/bash
# Every example of docs/*.md, run as a reader would (tests/docs_examples.py). First, that the
# runner itself fails a guide whose example fails, or which has none to run.
set -euo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
printf '# Broken\n\n```sh\nsluice --version\n```\n\n```python\nraise SystemExit(3)\n```\n' > "$tmp/broken.md"
printf '# Nothing to run\n\n```text\nsluice run model.onnx\n```\n' > "$tmp/empty.md"
for guide in broken empty; do
  if /usr/bin/python3 "$root/tests/docs_examples.py" "$root" "$tmp/$guide.md" > "$tmp/$guide.out"; then
    echo "FAIL: the runner passed $guide.md"; cat "$tmp/$guide.out"; exit 1
  fi
done
grep -q 'broken.md:7 (python): exit 3' "$tmp/broken.out" || { cat "$tmp/broken.out"; exit 1; }
exec /usr/bin/python3 "$root/tests/docs_examples.py" "$root"
