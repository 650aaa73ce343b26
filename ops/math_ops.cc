// Arithmetic and matrix ops.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

absl::Status MatMulShape(InferenceContext* c) {
  bool ta = false, tb = false;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "transpose_a", &ta));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "transpose_b", &tb));
  const PartialShape& a = c->input(0);
  const PartialShape& b = c->input(1);
  if ((!a.unknown_rank() && a.rank() != 2) || (!b.unknown_rank() && b.rank() != 2)) {
    return c->Error(absl::StrCat("MatMul needs matrices, got ", a.DebugString(), " and ",
                                 b.DebugString()));
  }
  int64_t m = a.unknown_rank() ? -1 : a.dim(ta ? 1 : 0);
  int64_t ka = a.unknown_rank() ? -1 : a.dim(ta ? 0 : 1);
  int64_t kb = b.unknown_rank() ? -1 : b.dim(tb ? 1 : 0);
  int64_t n = b.unknown_rank() ? -1 : b.dim(tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return c->Error(absl::StrCat("inner dimensions differ: ", a.DebugString(),
                                 ta ? " (transposed)" : "", " and ", b.DebugString(),
                                 tb ? " (transposed)" : ""));
  }
  int64_t dims[] = {m, n};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(absl::StrCat("T: ", kFloatOrWideSignedIntTypes))
    .SetShapeFn(MatMulShape);

#define SL_BINARY_OP(NAME)                                                           \
  REGISTER_OP(NAME)                                                                  \
      .Input("x: T")                                                                 \
      .Input("y: T")                                                                 \
      .Output("z: T")                                                                \
      .Attr("T: {half, bfloat16, float, double, uint8, int8, uint16, int16, uint32, "  \
            "int32, uint64, int64, complex64, complex128}")                          \
      .SetShapeFn(shape_fn::BroadcastBinary)

SL_BINARY_OP("Add");
SL_BINARY_OP("AddV2").SetIsCommutative();
SL_BINARY_OP("Sub");
SL_BINARY_OP("Mul").SetIsCommutative();
SL_BINARY_OP("Div");
#undef SL_BINARY_OP

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr(absl::StrCat("T: ", kFloatOrWideSignedIntTypes))
    .SetIsCommutative()
    .SetIsAggregate()
    .SetShapeFn(shape_fn::BroadcastAll);

}  // namespace sluice
