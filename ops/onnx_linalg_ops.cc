// Linear algebra ops with ONNX semantics: Einsum and Det.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Onnx>Einsum")
    .Input("inputs: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: {uint8, uint16, uint32, uint64, int8, int16, int32, int64, half, float, double}")
    .Attr("equation: string")
    .Doc("Einstein summation, numpy's `einsum` equation syntax: terms of letters and at most one "
         "'...', an optional '->' output (implicit: the letters used once, in alphabetical "
         "order, after the ellipsis dims), repeated letters within a term for diagonals.");

REGISTER_OP("Onnx>Det")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kIeeeFloatTypes))
    .Doc("Determinants of the innermost square matrices of x: [*, M, M] -> [*].");

}  // namespace sluice
