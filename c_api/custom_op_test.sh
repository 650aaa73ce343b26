#!/bin/bash
# Builds the example custom-op libraries as a user would, with the system's compilers and
# Sluice's headers only (`-I c_api/include`, no Sluice library on the link line), plus a library
# whose registrations fail, then runs custom_op_test.c (linked with -ltensorflow) on them.
set -euo pipefail

root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
inc="${root}/c_api/include"
lib_dir="${root}/c_api"

c++ -std=c++17 -Wall -Wextra -Werror -shared -fPIC -I "${inc}" \
  -o "${tmp}/libscale_and_shift.so" "${root}/examples/custom_op/scale_and_shift.cc"
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -I "${inc}" \
  -o "${tmp}/libcount_above.so" "${root}/examples/custom_op/count_above.c"

# Registers a kernel for an op nobody registered and an op whose input spec does not parse.
cat > "${tmp}/bad_ops.cc" <<'CC'
#include "sluice/op_library.h"
using namespace sluice_op_library;
REGISTER_OP("BadSpec").Input("x: not a type").Output("y: float");
struct Nothing {
  explicit Nothing(TF_OpKernelConstruction*) {}
  void Compute(TF_OpKernelContext*) {}
};
REGISTER_KERNEL_BUILDER(Name("NoSuchOp").Device(DEVICE_CPU), Nothing);
CC
c++ -std=c++17 -Wall -Werror -shared -fPIC -I "${inc}" -o "${tmp}/libbad_ops.so" "${tmp}/bad_ops.cc"

cc -std=c11 -Wall -Wextra -Werror -I "${inc}" -o "${tmp}/custom_op_test" \
  "${root}/c_api/custom_op_test.c" -L "${lib_dir}" -ltensorflow -Wl,-rpath,"${lib_dir}" -lm

exec "${tmp}/custom_op_test" "${tmp}/libscale_and_shift.so" "${tmp}/libcount_above.so" \
  "${tmp}/libbad_ops.so"
