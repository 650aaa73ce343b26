// TensorFlow's math ops, with TensorFlow's names, inputs and attrs (tensorflow/core/ops/
// math_ops.cc and nn_ops.cc define them; these are written for Sluice from their documented
// signatures). Kernels are shared with the ONNX ops of the same meaning where one exists.
// Add, AddV2, Sub, Mul, Div, AddN, MatMul and the unary ops whose ONNX and TensorFlow forms
// agree (Abs, Exp, Sqrt, Tanh, ...) are in math_ops.cc and onnx_math_ops.cc.
#include "absl/strings/str_cat.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

constexpr absl::string_view kTfBinaryTypes =
    "{half, bfloat16, float, double, uint8, int8, uint16, int16, uint32, int32, uint64, int64}";

// TopKV2: the input with its last dim k.
absl::Status TopKV2Shape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) return shape_fn::Unknown(c);
  {
    if (in.rank() < 1) return c->Error("TopKV2: input must have rank >= 1");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    const Tensor* k = c->input_tensor(1);
    dims.back() = -1;
    if (k != nullptr && k->NumElements() == 1) {
      if (k->dtype() == DT_INT16) dims.back() = k->data<int16_t>()[0];
      if (k->dtype() == DT_INT32) dims.back() = k->data<int32_t>()[0];
      if (k->dtype() == DT_INT64) dims.back() = k->data<int64_t>()[0];
    }
    if (dims.back() < -1) return c->Error(absl::StrCat("TopKV2: k ", dims.back(), " is negative"));
    if (dims.back() >= 0 && in.dims().back() >= 0 && dims.back() > in.dims().back()) {
      return c->Error(absl::StrCat("TopKV2: k ", dims.back(), " is more than the last dim ", in.dims().back()));
    }
    c->set_output(0, PartialShape(dims));
    c->set_output(1, PartialShape(dims));
  }
  return absl::OkStatus();
}

}  // namespace

#define SL_TF_BINARY_OP(NAME, TYPES)   \
  REGISTER_OP(NAME)                   \
      .Input("x: T")                  \
      .Input("y: T")                  \
      .Output("z: T")                 \
      .Attr(absl::StrCat("T: ", TYPES)) \
      .SetShapeFn(shape_fn::BroadcastBinary)

SL_TF_BINARY_OP("RealDiv", kTfBinaryTypes);
SL_TF_BINARY_OP("FloorDiv", kTfBinaryTypes);
SL_TF_BINARY_OP("FloorMod", kTfBinaryTypes);
SL_TF_BINARY_OP("TruncateDiv", kTfBinaryTypes);
SL_TF_BINARY_OP("TruncateMod", kTfBinaryTypes);
SL_TF_BINARY_OP("Maximum", kTfBinaryTypes).SetIsCommutative();
SL_TF_BINARY_OP("Minimum", kTfBinaryTypes).SetIsCommutative();
SL_TF_BINARY_OP("SquaredDifference", kTfBinaryTypes).SetIsCommutative();
#undef SL_TF_BINARY_OP

#define SL_TF_COMPARE_OP(NAME, TYPES)   \
  REGISTER_OP(NAME)                    \
      .Input("x: T")                   \
      .Input("y: T")                   \
      .Output("z: bool")               \
      .Attr(absl::StrCat("T: ", TYPES)) \
      .SetShapeFn(shape_fn::BroadcastBinary)

SL_TF_COMPARE_OP("Equal", kNumericBoolOrStringTypes).Attr("incompatible_shape_error: bool = true");
SL_TF_COMPARE_OP("NotEqual", kNumericBoolOrStringTypes).Attr("incompatible_shape_error: bool = true");
SL_TF_COMPARE_OP("Less", kNumericTypes);
SL_TF_COMPARE_OP("LessEqual", kNumericTypes);
SL_TF_COMPARE_OP("Greater", kNumericTypes);
SL_TF_COMPARE_OP("GreaterEqual", kNumericTypes);
#undef SL_TF_COMPARE_OP

REGISTER_OP("LogicalAnd").Input("x: bool").Input("y: bool").Output("z: bool").SetIsCommutative()
    .SetShapeFn(shape_fn::BroadcastBinary);
REGISTER_OP("LogicalOr").Input("x: bool").Input("y: bool").Output("z: bool").SetIsCommutative()
    .SetShapeFn(shape_fn::BroadcastBinary);
REGISTER_OP("LogicalNot").Input("x: bool").Output("y: bool").SetShapeFn(shape_fn::Unchanged);

#define SL_TF_UNARY_OP(NAME, TYPES) \
  REGISTER_OP(NAME).Input("x: T").Output("y: T").Attr(absl::StrCat("T: ", TYPES)).SetShapeFn(shape_fn::Unchanged)

SL_TF_UNARY_OP("Square", kNumericTypes);
SL_TF_UNARY_OP("Rsqrt", kFloatTypes);
SL_TF_UNARY_OP("Log1p", kFloatTypes);  // log(1 + x), exact near 0.
SL_TF_UNARY_OP("Expm1", kFloatTypes);  // exp(x) - 1, exact near 0.
#undef SL_TF_UNARY_OP

// atan(y / x) in the quadrant of (x, y); broadcasting.
REGISTER_OP("Atan2")
    .Input("y: T")
    .Input("x: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double}")
    .SetShapeFn(shape_fn::BroadcastBinary);

REGISTER_OP("IsNan").Input("x: T").Output("y: bool").Attr(absl::StrCat("T: ", kFloatTypes))
    .SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("IsFinite").Input("x: T").Output("y: bool").Attr(absl::StrCat("T: ", kFloatTypes))
    .SetShapeFn(shape_fn::Unchanged);

// Activations: input `features`, output `activations`, as TensorFlow names them.
#define SL_TF_ACTIVATION_OP(NAME, TYPES) \
  REGISTER_OP(NAME).Input("features: T").Output("activations: T").Attr(absl::StrCat("T: ", TYPES)) \
      .SetShapeFn(shape_fn::Unchanged)

SL_TF_ACTIVATION_OP("Relu6", kSignedTypes);
SL_TF_ACTIVATION_OP("Elu", kFloatTypes);
SL_TF_ACTIVATION_OP("Selu", kFloatTypes);
SL_TF_ACTIVATION_OP("LeakyRelu", kFloatTypes).Attr("alpha: float = 0.2");
#undef SL_TF_ACTIVATION_OP

REGISTER_OP("Softmax").Input("logits: T").Output("softmax: T").Attr(absl::StrCat("T: ", kFloatTypes))
    .SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("LogSoftmax").Input("logits: T").Output("logsoftmax: T").Attr(absl::StrCat("T: ", kFloatTypes))
    .SetShapeFn(shape_fn::Unchanged);

// Reductions over the axes in `reduction_indices` (a scalar or a vector; none: no reduction).
#define SL_TF_REDUCE_OP(NAME, TYPES)                 \
  REGISTER_OP(NAME)                                  \
      .Input("input: T")                             \
      .Input("reduction_indices: Tidx")              \
      .Output("output: T")                           \
      .Attr("keep_dims: bool = false")               \
      .Attr(absl::StrCat("T: ", TYPES))              \
      .Attr("Tidx: {int32, int64} = DT_INT32")

SL_TF_REDUCE_OP("Sum", kNumericTypes);
SL_TF_REDUCE_OP("Mean", kNumericTypes);
SL_TF_REDUCE_OP("Max", kNumericTypes);
SL_TF_REDUCE_OP("Min", kNumericTypes);
SL_TF_REDUCE_OP("Prod", kNumericTypes);
SL_TF_REDUCE_OP("All", "{bool}");
SL_TF_REDUCE_OP("Any", "{bool}");
#undef SL_TF_REDUCE_OP

#define SL_TF_ARG_REDUCE_OP(NAME)                       \
  REGISTER_OP(NAME)                                     \
      .Input("input: T")                                \
      .Input("dimension: Tidx")                         \
      .Output("output: output_type")                    \
      .Attr(absl::StrCat("T: ", kNumericOrBoolTypes))   \
      .Attr("Tidx: {int32, int64} = DT_INT32")          \
      .Attr("output_type: {int32, int64} = DT_INT64")

SL_TF_ARG_REDUCE_OP("ArgMax");
SL_TF_ARG_REDUCE_OP("ArgMin");
#undef SL_TF_ARG_REDUCE_OP

REGISTER_OP("Bucketize")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: {int32, int64, float, double}")
    .Attr("boundaries: list(float)")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("The index of the bucket each value falls in: boundaries[i-1] <= x < boundaries[i].");

REGISTER_OP("TopKV2")
    .Input("input: T")
    .Input("k: Tk")
    .Output("values: T")
    .Output("indices: index_type")
    .Attr("sorted: bool = true")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr("Tk: {int16, int32, int64} = DT_INT32")
    .Attr("index_type: {int16, int32, int64} = DT_INT32")
    .SetShapeFn(TopKV2Shape)
    .Doc("The k largest values along the last dim and their indices; equal values keep index order.");

REGISTER_OP("Cumsum")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
