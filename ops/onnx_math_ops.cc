// Element-wise math, activations, comparisons and logic, Cast, reductions, the softmax family,
// CumSum and TopK, with ONNX's names, attrs and semantics (numpy broadcasting). Add, Sub, Mul,
// Div and Relu live in math_ops.cc and nn_ops.cc, shared with the TensorFlow-style frontend.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

// Reductions: the axes come from the optional second input when it is a known constant.
absl::Status ReduceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  bool keepdims = true, noop = false;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "keepdims", &keepdims));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "noop_with_empty_axes", &noop));
  if (in.unknown_rank()) return shape_fn::Unknown(c);
  std::vector<bool> reduced(in.rank(), true);
  if (c->num_inputs() > 1) {
    const Tensor* axes = c->input_tensor(1);
    if (axes == nullptr) {
      if (keepdims) {
        c->set_output(0, PartialShape(DimVector(in.rank(), -1)));
      } else {
        c->set_output(0, PartialShape());
      }
      return absl::OkStatus();
    }
    if (axes->NumElements() > 0) {
      reduced.assign(in.rank(), false);
      for (int64_t a : axes->flat<int64_t>()) {
        if (a < -in.rank() || a >= in.rank()) {
          return c->Error(absl::StrCat("axis ", a, " is out of range for rank ", in.rank()));
        }
        reduced[a < 0 ? a + in.rank() : a] = true;
      }
    } else if (noop) {
      c->set_output(0, in);
      return absl::OkStatus();
    }
  } else if (noop) {
    c->set_output(0, in);
    return absl::OkStatus();
  }
  DimVector out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[i]) {
      out.push_back(in.dim(i));
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status ArgReduceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t axis;
  bool keepdims;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "axis", &axis));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "keepdims", &keepdims));
  if (in.unknown_rank()) return shape_fn::Unknown(c);
  if (axis < -in.rank() || axis >= std::max(in.rank(), 1)) {
    return c->Error(absl::StrCat("axis ", axis, " is out of range for rank ", in.rank()));
  }
  if (axis < 0) axis += in.rank();
  DimVector out(in.dims().begin(), in.dims().end());
  if (in.rank() > 0) {
    if (keepdims) {
      out[axis] = 1;
    } else {
      out.erase(out.begin() + axis);
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status TopKShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t axis;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "axis", &axis));
  if (in.unknown_rank()) return shape_fn::Unknown(c);
  if (axis < -in.rank() || axis >= in.rank()) {
    return c->Error(absl::StrCat("axis ", axis, " is out of range for rank ", in.rank()));
  }
  if (axis < 0) axis += in.rank();
  DimVector out(in.dims().begin(), in.dims().end());
  const Tensor* k = c->input_tensor(1);
  out[axis] = k != nullptr && k->NumElements() == 1 ? k->flat<int64_t>()[0] : -1;
  c->set_output(0, PartialShape(out));
  c->set_output(1, PartialShape(out));
  return absl::OkStatus();
}

absl::Status BoolOfSameShape(InferenceContext* c) { return shape_fn::Unchanged(c); }

}  // namespace

// Unary math, x -> y of the same type. ONNX: Abs, Neg, Exp, ... (since 6 or 13).
#define SL_UNARY_OP(NAME, TYPES) \
  REGISTER_OP(NAME).Input("x: T").Output("y: T").Attr(absl::StrCat("T: ", TYPES)).SetShapeFn(shape_fn::Unchanged)

SL_UNARY_OP("Abs", kNumericTypes);
SL_UNARY_OP("Neg", kSignedTypes);
SL_UNARY_OP("Exp", kFloatTypes);
SL_UNARY_OP("Log", kFloatTypes);
SL_UNARY_OP("Sqrt", kFloatTypes);
SL_UNARY_OP("Reciprocal", kFloatTypes);
SL_UNARY_OP("Ceil", kFloatTypes);
SL_UNARY_OP("Floor", kFloatTypes);
SL_UNARY_OP("Round", kSignedTypes);  // TensorFlow's Round also takes integers.
SL_UNARY_OP("Sign", kNumericTypes);
SL_UNARY_OP("Sin", kFloatTypes);
SL_UNARY_OP("Cos", kFloatTypes);
SL_UNARY_OP("Tan", kFloatTypes);
SL_UNARY_OP("Asin", kFloatTypes);
SL_UNARY_OP("Acos", kFloatTypes);
SL_UNARY_OP("Atan", kFloatTypes);
SL_UNARY_OP("Sinh", kFloatTypes);
SL_UNARY_OP("Cosh", kFloatTypes);
SL_UNARY_OP("Asinh", kFloatTypes);
SL_UNARY_OP("Acosh", kFloatTypes);
SL_UNARY_OP("Atanh", kFloatTypes);
SL_UNARY_OP("Erf", kNumericTypes);
SL_UNARY_OP("Sigmoid", kFloatTypes);
SL_UNARY_OP("Tanh", kFloatTypes);
SL_UNARY_OP("Onnx>HardSwish", kFloatTypes);
SL_UNARY_OP("Softplus", kFloatTypes);
SL_UNARY_OP("Softsign", kFloatTypes);
SL_UNARY_OP("Onnx>LeakyRelu", kFloatTypes).Attr("alpha: float = 0.01");
SL_UNARY_OP("Onnx>Elu", kFloatTypes).Attr("alpha: float = 1.0");
SL_UNARY_OP("Onnx>Celu", kFloatTypes).Attr("alpha: float = 1.0");
SL_UNARY_OP("Onnx>ThresholdedRelu", kFloatTypes).Attr("alpha: float = 1.0");
SL_UNARY_OP("Onnx>Selu", kFloatTypes)
    .Attr("alpha: float = 1.67326319217681884765625")
    .Attr("gamma: float = 1.05070102214813232421875");
SL_UNARY_OP("Onnx>Gelu", kFloatTypes).Attr("approximate: {'none', 'tanh'} = 'none'");
SL_UNARY_OP("Onnx>HardSigmoid", kFloatTypes).Attr("alpha: float = 0.2").Attr("beta: float = 0.5");
SL_UNARY_OP("Onnx>Shrink", kNumericTypes).Attr("bias: float = 0.0").Attr("lambd: float = 0.5");
SL_UNARY_OP("Onnx>Not", "{bool}");
SL_UNARY_OP("Onnx>BitwiseNot", kIntTypes);
#undef SL_UNARY_OP

// IsNaN-20 and IsInf-20 added the 8-bit floats.
constexpr char kFloatOrFloat8Types[] =
    "{half, bfloat16, float, double, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz}";

REGISTER_OP("Onnx>IsNaN")
    .Input("x: T1")
    .Output("y: bool")
    .Attr(absl::StrCat("T1: ", kFloatOrFloat8Types))
    .SetShapeFn(BoolOfSameShape);

REGISTER_OP("Onnx>IsInf")
    .Input("x: T1")
    .Output("y: bool")
    .Attr(absl::StrCat("T1: ", kFloatOrFloat8Types))
    .Attr("detect_negative: bool = true")
    .Attr("detect_positive: bool = true")
    .SetShapeFn(BoolOfSameShape);

// Binary ops with numpy broadcasting (Add, Sub, Mul, Div are in math_ops.cc).
REGISTER_OP("Pow")
    .Input("x: T")
    .Input("y: T1")
    .Output("z: T")
    .Attr(absl::StrCat("T: ", kFloatOrWideSignedIntTypes))
    .Attr(absl::StrCat("T1: ", kNumericTypes))
    .SetShapeFn(shape_fn::BroadcastBinary);

REGISTER_OP("Onnx>Mod")
    .Input("a: T")
    .Input("b: T")
    .Output("c: T")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr("fmod: bool = false")
    .SetShapeFn(shape_fn::BroadcastBinary);

REGISTER_OP("Onnx>BitShift")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(absl::StrCat("T: ", kUnsignedIntTypes))
    .Attr("direction: {'LEFT', 'RIGHT'}")
    .SetShapeFn(shape_fn::BroadcastBinary);

// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18) on the bits of integers.
#define SL_BITWISE_OP(NAME)                                \
  REGISTER_OP(NAME)                                        \
      .Input("a: T")                                       \
      .Input("b: T")                                       \
      .Output("c: T")                                      \
      .Attr(absl::StrCat("T: ", kIntTypes))                \
      .SetShapeFn(shape_fn::BroadcastBinary)
SL_BITWISE_OP("Onnx>BitwiseAnd");
SL_BITWISE_OP("Onnx>BitwiseOr");
SL_BITWISE_OP("Onnx>BitwiseXor");
#undef SL_BITWISE_OP

REGISTER_OP("Onnx>PRelu")
    .Input("x: T")
    .Input("slope: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatOrWideIntTypes))
    .SetShapeFn(shape_fn::BroadcastBinary);

#define SL_LOGIC_OP(NAME, TYPES)                           \
  REGISTER_OP(NAME)                                        \
      .Input("a: T")                                       \
      .Input("b: T")                                       \
      .Output("c: bool")                                   \
      .Attr(absl::StrCat("T: ", TYPES))                    \
      .SetShapeFn(shape_fn::BroadcastBinary)

SL_LOGIC_OP("Onnx>And", "{bool}");
SL_LOGIC_OP("Onnx>Or", "{bool}");
SL_LOGIC_OP("Onnx>Xor", "{bool}");
SL_LOGIC_OP("Onnx>Equal", kNumericBoolOrStringTypes);  // Equal-19 added string.
SL_LOGIC_OP("Onnx>Greater", kNumericTypes);
SL_LOGIC_OP("Onnx>Less", kNumericTypes);
SL_LOGIC_OP("Onnx>GreaterOrEqual", kNumericTypes);
SL_LOGIC_OP("Onnx>LessOrEqual", kNumericTypes);
#undef SL_LOGIC_OP

// Variadic, broadcasting all inputs together.
#define SL_VARIADIC_OP(NAME, OUT, TYPES)       \
  REGISTER_OP(NAME)                            \
      .Input("data_0: N * T")                  \
      .Output(OUT ": T")                       \
      .Attr("N: int >= 1")                     \
      .Attr(absl::StrCat("T: ", TYPES))        \
      .SetShapeFn(shape_fn::BroadcastAll)

SL_VARIADIC_OP("Onnx>Max", "max", kNumericTypes);
SL_VARIADIC_OP("Onnx>Min", "min", kNumericTypes);
SL_VARIADIC_OP("Onnx>Sum", "sum", kFloatTypes);
SL_VARIADIC_OP("Onnx>Mean", "mean", kFloatTypes);
#undef SL_VARIADIC_OP

REGISTER_OP("Onnx>Where")
    .Input("condition: bool")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kNumericBoolOrStringTypes))
    .SetShapeFn(shape_fn::BroadcastAll);

// min and max are optional inputs (zero or one tensor each) of type T.
REGISTER_OP("Onnx>Clip")
    .Input("input: T")
    .Input("min: Tmin")
    .Input("max: Tmax")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr(absl::StrCat("Tmin: list(", kNumericTypes, ") >= 0"))
    .Attr(absl::StrCat("Tmax: list(", kNumericTypes, ") >= 0"))
    .SetShapeFn(shape_fn::Unchanged);

// saturate (ONNX 19) applies to 8-bit float outputs: out-of-range values clamp to the
// largest finite value instead of becoming inf or NaN.
REGISTER_OP("Onnx>Cast")
    .Input("input: T1")
    .Output("output: to")
    .Attr(absl::StrCat("T1: ", kCastTypes))
    .Attr(absl::StrCat("to: ", kCastTypes))
    .Attr("saturate: bool = true")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>CastLike")
    .Input("input: T1")
    .Input("target_type: T2")
    .Output("output: T2")
    .Attr(absl::StrCat("T1: ", kCastTypes))
    .Attr(absl::StrCat("T2: ", kCastTypes))
    .Attr("saturate: bool = true")
    .SetShapeFn(shape_fn::Unchanged);

// Reductions; `axes` is an optional int64 input (ONNX's attr before opset 13/18 is turned into
// a constant by the converter). No axes reduce everything unless noop_with_empty_axes.
#define SL_REDUCE_OP_TYPES(NAME, TYPES)                     \
  REGISTER_OP(NAME)                                         \
      .Input("data: T")                                     \
      .Input("axes: Taxes")                                 \
      .Output("reduced: T")                                 \
      .Attr(absl::StrCat("T: ", TYPES))                     \
      .Attr("Taxes: list({int64}) >= 0")                    \
      .Attr("keepdims: bool = true")                        \
      .Attr("noop_with_empty_axes: bool = false")           \
      .SetShapeFn(ReduceShape)

#define SL_REDUCE_OP(NAME) SL_REDUCE_OP_TYPES(NAME, kNumericTypes)

SL_REDUCE_OP("Onnx>ReduceSum");
SL_REDUCE_OP("Onnx>ReduceMean");
SL_REDUCE_OP_TYPES("Onnx>ReduceMax", kNumericOrBoolTypes);  // ReduceMax-20 added bool.
SL_REDUCE_OP_TYPES("Onnx>ReduceMin", kNumericOrBoolTypes);  // ReduceMin-20 added bool.
SL_REDUCE_OP("Onnx>ReduceProd");
SL_REDUCE_OP("Onnx>ReduceL1");
SL_REDUCE_OP("Onnx>ReduceL2");
SL_REDUCE_OP("Onnx>ReduceLogSum");
SL_REDUCE_OP("Onnx>ReduceLogSumExp");
SL_REDUCE_OP("Onnx>ReduceSumSquare");
#undef SL_REDUCE_OP
#undef SL_REDUCE_OP_TYPES

#define SL_ARG_REDUCE_OP(NAME)                              \
  REGISTER_OP(NAME)                                         \
      .Input("data: T")                                     \
      .Output("reduced: int64")                             \
      .Attr(absl::StrCat("T: ", kNumericTypes))             \
      .Attr("axis: int = 0")                                \
      .Attr("keepdims: bool = true")                        \
      .Attr("select_last_index: bool = false")              \
      .SetShapeFn(ArgReduceShape)

SL_ARG_REDUCE_OP("Onnx>ArgMax");
SL_ARG_REDUCE_OP("Onnx>ArgMin");
#undef SL_ARG_REDUCE_OP

// Opset-13 semantics: normalize along one axis (the converter rewrites older, 2-D-coercing
// versions).
#define SL_SOFTMAX_OP(NAME)                                 \
  REGISTER_OP(NAME)                                         \
      .Input("input: T")                                    \
      .Output("output: T")                                  \
      .Attr(absl::StrCat("T: ", kFloatTypes))               \
      .Attr("axis: int = -1")                               \
      .SetShapeFn(shape_fn::Unchanged)

SL_SOFTMAX_OP("Onnx>Softmax");
SL_SOFTMAX_OP("Onnx>LogSoftmax");
SL_SOFTMAX_OP("Onnx>Hardmax");
#undef SL_SOFTMAX_OP

REGISTER_OP("Onnx>CumSum")
    .Input("x: T")
    .Input("axis: T2")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr("T2: {int32, int64}")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>TopK")
    .Input("x: T")
    .Input("k: int64")
    .Output("values: T")
    .Output("indices: int64")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr("axis: int = -1")
    .Attr("largest: bool = true")
    .Attr("sorted: bool = true")
    .SetShapeFn(TopKShape);

}  // namespace sluice
