// TensorFlow's complex-number ops, with TensorFlow's names, inputs and attrs: Complex, Real,
// Imag, ComplexAbs, Conj, and the 1-D FFT and its inverse over the innermost dimension.
#include "ops/op_registry.h"

namespace sluice {
namespace {

constexpr char kRealAttr[] = "T: {float, double} = DT_FLOAT";
constexpr char kComplexOutAttr[] = "Tout: {complex64, complex128} = DT_COMPLEX64";
constexpr char kComplexInAttr[] = "T: {complex64, complex128} = DT_COMPLEX64";
constexpr char kRealOutAttr[] = "Tout: {float, double} = DT_FLOAT";

}  // namespace

// real + i * imag, broadcasting.
REGISTER_OP("Complex")
    .Input("real: T")
    .Input("imag: T")
    .Output("out: Tout")
    .Attr(kRealAttr)
    .Attr(kComplexOutAttr)
    .SetShapeFn(shape_fn::BroadcastBinary);

REGISTER_OP("Real").Input("input: T").Output("output: Tout").Attr(kComplexInAttr).Attr(kRealOutAttr).SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("Imag").Input("input: T").Output("output: Tout").Attr(kComplexInAttr).Attr(kRealOutAttr).SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("ComplexAbs").Input("x: T").Output("y: Tout").Attr(kComplexInAttr).Attr(kRealOutAttr).SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("Conj")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {complex64, complex128, variant} = DT_COMPLEX64")
    .SetShapeFn(shape_fn::Unchanged);

// X[k] = sum_j x[j] exp(-2 pi i j k / n) over the innermost dimension; IFFT divides by n.
REGISTER_OP("FFT")
    .Input("input: Tcomplex")
    .Output("output: Tcomplex")
    .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")
    .SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("IFFT")
    .Input("input: Tcomplex")
    .Output("output: Tcomplex")
    .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
