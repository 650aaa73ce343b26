#!/bin/bash
# Builds tf_layout_test.c as a user of TensorFlow's C API would: the system's cc, only
# `-I c_api/include` for headers and `-ltensorflow` for the library, then runs it. Also checks
# that the headers compile as C++ and under strict C11.
set -euo pipefail
# $1: the C program to build and run (default tf_layout_test).
name="${1:-tf_layout_test}"

root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
lib_dir="${root}/c_api"

# Only the headers' own folder: nothing else of the repository is on the include path.
cc -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror -pedantic \
  -I "${root}/c_api/include" \
  -o "${tmp}/${name}" "${root}/c_api/${name}.c" \
  -L "${lib_dir}" -ltensorflow -Wl,-rpath,"${lib_dir}"

# The headers from C++ too (bindings and custom ops include them there).
printf '#include "tensorflow/c/c_api.h"\nint main() { TF_TString s; TF_TString_Init(&s); return (int)TF_TString_GetSize(&s); }\n' \
  > "${tmp}/cxx_check.cc"
c++ -std=c++17 -Wall -Werror -I "${root}/c_api/include" -fsyntax-only "${tmp}/cxx_check.cc"

exec "${tmp}/${name}"
