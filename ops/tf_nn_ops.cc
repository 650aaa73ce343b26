// TensorFlow's neural-network ops, with TensorFlow's names, inputs, attrs and defaults
// (written for Sluice from TensorFlow's documented signatures in nn_ops.cc and image_ops.cc):
// convolutions (Conv2D, DepthwiseConv2dNative) and their backprops, BiasAdd, FusedBatchNormV3, MaxPool, AvgPool and the two
// resizes. Image tensors are 4-D in data_format order (NHWC by default); filters are HWIO.
// Kernels are in kernels/tf_nn_ops.cc; the ONNX forms of these ops are in onnx_nn_ops.cc.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// Where N, H, W and C sit in a 4-D tensor of `data_format` ("NHWC" or "NCHW").
struct Layout4 {
  int n = 0, h = 1, w = 2, c = 3;
};

absl::StatusOr<Layout4> LayoutOf(InferenceContext* c) {
  std::string format = "NHWC";
  SL_RETURN_IF_ERROR(GetNodeAttrOr(c->attrs(), "data_format", format, &format));
  if (format == "NHWC") return Layout4{0, 1, 2, 3};
  if (format == "NCHW") return Layout4{0, 2, 3, 1};
  return c->Error(absl::StrCat("data_format '", format, "' is not supported here"));
}

// TensorFlow's windowed output size for one spatial dim (-1 when the input size is unknown):
// VALID ceil((in - dk + 1) / s), SAME ceil(in / s), EXPLICIT as VALID over the padded input.
absl::StatusOr<int64_t> WindowedOutputSize(InferenceContext* c, int64_t in, int64_t k, int64_t dilation,
                                           int64_t stride, const std::string& padding, int64_t pad_before,
                                           int64_t pad_after) {
  if (k < 0 || in < 0) return int64_t{-1};
  int64_t dk, span;
  if (!CheckedMul(k - 1, dilation, &dk) || !CheckedAdd(dk, int64_t{1}, &dk) ||
      !CheckedAdd(in, pad_before, &span) || !CheckedAdd(span, pad_after, &span)) {
    return c->Error(absl::StrCat("window geometry overflows: input ", in, ", filter ", k, ", dilation ", dilation));
  }
  if (padding == "SAME") return in / stride + (in % stride != 0 ? 1 : 0);
  if (span < dk) {
    return c->Error(absl::StrCat("computed output size would be negative: input size ", in, ", effective filter size ",
                                 dk, ", stride ", stride));
  }
  return (span - dk) / stride + 1;
}

// strides, dilations (and ksize) are 4-vectors in data_format order; their N and C entries
// must be 1. Returns the H and W entries.
absl::StatusOr<std::vector<int64_t>> SpatialPair(InferenceContext* c, const Layout4& l, const char* attr,
                                                 std::optional<std::vector<int64_t>> fallback) {
  std::vector<int64_t> v;
  if (fallback.has_value()) {
    SL_RETURN_IF_ERROR(GetNodeAttrOr(c->attrs(), attr, *fallback, &v));
  } else {
    SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), attr, &v));
  }
  if (v.size() != 4) return c->Error(absl::StrCat(attr, " must have 4 values, got ", v.size()));
  if (v[l.n] != 1 || v[l.c] != 1) {
    return c->Error(absl::StrCat(attr, " in the batch and depth dimensions must be 1, got [",
                                 absl::StrJoin(v, ","), "]"));
  }
  if (v[l.h] <= 0 || v[l.w] <= 0) {
    return c->Error(absl::StrCat(attr, " must be positive, got [", absl::StrJoin(v, ","), "]"));
  }
  return std::vector<int64_t>{v[l.h], v[l.w]};
}

// The (before, after) padding of H and W from explicit_paddings (EXPLICIT padding only).
absl::StatusOr<std::vector<int64_t>> ExplicitPads(InferenceContext* c, const Layout4& l, const std::string& padding) {
  std::vector<int64_t> p;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(c->attrs(), "explicit_paddings", std::vector<int64_t>{}, &p));
  if (padding != "EXPLICIT") {
    if (!p.empty()) return c->Error("explicit_paddings must be empty unless padding is EXPLICIT");
    return std::vector<int64_t>{0, 0, 0, 0};
  }
  if (p.size() != 8) return c->Error(absl::StrCat("explicit_paddings must have 8 values, got ", p.size()));
  for (int64_t v : p) {
    if (v < 0) return c->Error("explicit_paddings must not be negative");
  }
  if (p[2 * l.n] != 0 || p[2 * l.n + 1] != 0 || p[2 * l.c] != 0 || p[2 * l.c + 1] != 0) {
    return c->Error("explicit_paddings in the batch and depth dimensions must be 0");
  }
  return std::vector<int64_t>{p[2 * l.h], p[2 * l.h + 1], p[2 * l.w], p[2 * l.w + 1]};
}

int64_t DimOr(const PartialShape& s, int i) { return s.unknown_rank() ? -1 : s.dim(i); }

absl::Status CheckRank(InferenceContext* c, int input, int rank, const char* what) {
  const PartialShape& s = c->input(input);
  if (!s.unknown_rank() && s.rank() != rank) {
    return c->Error(absl::StrCat(what, " must be ", rank, "-D, got shape ", s.DebugString()));
  }
  return absl::OkStatus();
}

PartialShape Image(const Layout4& l, int64_t n, int64_t h, int64_t w, int64_t ch) {
  int64_t d[4];
  d[l.n] = n;
  d[l.h] = h;
  d[l.w] = w;
  d[l.c] = ch;
  return PartialShape(d);
}

// The output of a convolution of input 0 ([N,H,W,C] in data_format) with an HWIO filter
// (input 1); `depthwise`: the filter is [H,W,C,multiplier].
absl::Status ConvShape(InferenceContext* c, bool depthwise) {
  SL_ASSIGN_OR_RETURN(Layout4 l, LayoutOf(c));
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "input"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 4, "filter"));
  std::string padding;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "padding", &padding));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> strides, SpatialPair(c, l, "strides", std::nullopt));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, SpatialPair(c, l, "dilations", std::vector<int64_t>{1, 1, 1, 1}));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ExplicitPads(c, l, padding));
  const PartialShape& x = c->input(0);
  const PartialShape& f = c->input(1);
  const int64_t in_c = DimOr(x, l.c), f_in = DimOr(f, 2), f_out = DimOr(f, 3);
  int64_t out_c = f_out;
  if (depthwise) {
    if (in_c >= 0 && f_in >= 0 && in_c != f_in) {
      return c->Error(absl::StrCat("input depth ", in_c, " does not match the filter's ", f_in));
    }
    out_c = -1;
    if (f_in >= 0 && f_out >= 0 && !CheckedMul(f_in, f_out, &out_c)) return c->Error("output depth overflows");
  } else if (in_c >= 0 && f_in > 0 && in_c % f_in != 0) {
    return c->Error(absl::StrCat("input depth ", in_c, " is not a multiple of the filter's input depth ", f_in));
  } else if (in_c >= 0 && f_in == 0) {
    return c->Error("the filter's input depth is 0");
  } else if (in_c > 0 && f_in > 0 && f_out >= 0 && f_out % (in_c / f_in) != 0) {
    return c->Error(absl::StrCat("output depth ", f_out, " is not a multiple of the group count ", in_c / f_in));
  }
  SL_ASSIGN_OR_RETURN(int64_t oh, WindowedOutputSize(c, DimOr(x, l.h), DimOr(f, 0), dilations[0], strides[0],
                                                     padding, pads[0], pads[1]));
  SL_ASSIGN_OR_RETURN(int64_t ow, WindowedOutputSize(c, DimOr(x, l.w), DimOr(f, 1), dilations[1], strides[1],
                                                     padding, pads[2], pads[3]));
  c->set_output(0, Image(l, DimOr(x, l.n), oh, ow, out_c));
  return absl::OkStatus();
}

// Output 0 is the shape held by the int32 vector `input` when it is a known constant, else a
// 4-D shape of unknown dims.
absl::Status ShapeFromSizesInput(InferenceContext* c, int input) {
  const Tensor* t = c->input_tensor(input);
  if (t == nullptr || t->dtype() != DT_INT32) {
    c->set_output(0, PartialShape(std::vector<int64_t>{-1, -1, -1, -1}));
    return absl::OkStatus();
  }
  if (t->dims() != 1 || t->NumElements() != 4) {
    return c->Error(absl::StrCat("the sizes input must hold 4 values, got shape ", t->shape().DebugString()));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < 4; ++i) {
    const int32_t d = t->flat<int32_t>()[i];
    if (d < 0) return c->Error(absl::StrCat("the sizes input has a negative size ", d));
    dims.push_back(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status PoolShape(InferenceContext* c) {
  SL_ASSIGN_OR_RETURN(Layout4 l, LayoutOf(c));
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "input"));
  std::string padding;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "padding", &padding));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, SpatialPair(c, l, "ksize", std::nullopt));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> strides, SpatialPair(c, l, "strides", std::nullopt));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ExplicitPads(c, l, padding));
  const PartialShape& x = c->input(0);
  SL_ASSIGN_OR_RETURN(int64_t oh, WindowedOutputSize(c, DimOr(x, l.h), ksize[0], 1, strides[0], padding, pads[0], pads[1]));
  SL_ASSIGN_OR_RETURN(int64_t ow, WindowedOutputSize(c, DimOr(x, l.w), ksize[1], 1, strides[1], padding, pads[2], pads[3]));
  c->set_output(0, Image(l, DimOr(x, l.n), oh, ow, DimOr(x, l.c)));
  return absl::OkStatus();
}

absl::Status BiasAddShape(InferenceContext* c) {
  SL_ASSIGN_OR_RETURN(Layout4 l, LayoutOf(c));
  (void)l;
  const PartialShape& x = c->input(0);
  if (!x.unknown_rank() && x.rank() < 2) return c->Error(absl::StrCat("value must be at least 2-D, got ", x.DebugString()));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 1, "bias"));
  c->set_output(0, x);
  return absl::OkStatus();
}

// The channel dim of a tensor of rank >= 2 in data_format (NCHW: dim 1; NHWC: the last).
int64_t ChannelDim(const PartialShape& x, bool nchw) {
  if (x.unknown_rank() || x.rank() < 2) return -1;
  return x.dim(nchw ? 1 : x.rank() - 1);
}

absl::Status BiasAddGradShape(InferenceContext* c) {
  std::string format;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "data_format", &format));
  const PartialShape& x = c->input(0);
  if (!x.unknown_rank() && x.rank() < 2) {
    return c->Error(absl::StrCat("out_backprop must be at least 2-D, got ", x.DebugString()));
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{ChannelDim(x, format == "NCHW")}));
  return absl::OkStatus();
}

absl::Status FusedBatchNormShape(InferenceContext* c) {
  std::string format;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "data_format", &format));
  const PartialShape& x = c->input(0);
  const bool five = format == "NDHWC" || format == "NCDHW";
  if (!x.unknown_rank() && x.rank() != (five ? 5 : 4)) {
    return c->Error(absl::StrCat("x must be ", five ? 5 : 4, "-D for data_format ", format, ", got ", x.DebugString()));
  }
  for (int i = 1; i < 5; ++i) SL_RETURN_IF_ERROR(CheckRank(c, i, 1, "scale, offset, mean and variance"));
  int64_t channels = ChannelDim(x, format == "NCHW" || format == "NCDHW");
  for (int i = 1; i < 3 && channels < 0; ++i) channels = DimOr(c->input(i), 0);
  c->set_output(0, x);
  for (int i = 1; i < 5; ++i) c->set_output(i, PartialShape(std::vector<int64_t>{channels}));
  c->set_output(5, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ResizeShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "images"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 1, "size"));
  const PartialShape& x = c->input(0);
  int64_t h = -1, w = -1;
  if (const Tensor* t = c->input_tensor(1); t != nullptr && t->dtype() == DT_INT32) {
    if (t->NumElements() != 2) return c->Error(absl::StrCat("size must hold 2 values, got ", t->NumElements()));
    h = t->flat<int32_t>()[0];
    w = t->flat<int32_t>()[1];
    if (h <= 0 || w <= 0) return c->Error(absl::StrCat("size must be positive, got [", h, ",", w, "]"));
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{DimOr(x, 0), h, w, DimOr(x, 3)}));
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradShape(InferenceContext* c) {
  const PartialShape& x = c->input(1);
  int64_t channels = DimOr(c->input(2), 0);
  std::string format;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "data_format", &format));
  if (channels < 0) channels = ChannelDim(x, format == "NCHW" || format == "NCDHW");
  c->set_output(0, x);
  c->set_output(1, PartialShape(std::vector<int64_t>{channels}));
  c->set_output(2, PartialShape(std::vector<int64_t>{channels}));
  c->set_output(3, PartialShape(std::vector<int64_t>{0}));
  c->set_output(4, PartialShape(std::vector<int64_t>{0}));
  return absl::OkStatus();
}

// ResizeNearestNeighborGrad: grads' batch and channels around the [height, width] in `size`.
absl::Status ResizeNearestNeighborGradShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "grads"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 1, "size"));
  const PartialShape& g = c->input(0);
  int64_t h = -1, w = -1;
  if (const Tensor* t = c->input_tensor(1); t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 2) {
    h = t->flat<int32_t>()[0];
    w = t->flat<int32_t>()[1];
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{DimOr(g, 0), h, w, DimOr(g, 3)}));
  return absl::OkStatus();
}

constexpr char kConvTypes[] = "T: {half, bfloat16, float, double, int32}";
constexpr char kConvPadding[] = "padding: {'SAME', 'VALID', 'EXPLICIT'}";
constexpr char kImageFormat[] = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
constexpr char kImageTypes[] = "T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}";

}  // namespace

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr(kConvTypes)
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ConvShape(c, false); })
    .Doc("2-D convolution of input [N,H,W,C] (data_format) with filter [H,W,C/groups,out]; "
         "groups = C / the filter's input depth.");

REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ConvShape(c, true); })
    .Doc("Each input channel convolved with its own `multiplier` filters [H,W,C,multiplier]; "
         "output channel c * multiplier + m.");

REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 0); })
    .Doc("The gradient of DepthwiseConv2dNative with respect to its input, of shape input_sizes.");

REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 1); })
    .Doc("The gradient of DepthwiseConv2dNative with respect to its filter, of shape filter_sizes "
         "([H, W, C, multiplier]).");

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr(kConvTypes)
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 0); })
    .Doc("The gradient of Conv2D with respect to its input, of shape input_sizes.");

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kImageFormat)
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 1); })
    .Doc("The gradient of Conv2D with respect to its filter, of shape filter_sizes (HWIO).");

REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: numbertype")
    .Attr(kImageFormat)
    .SetShapeFn(BiasAddShape)
    .Doc("value + bias along the channel dim: the last (NHWC) or dim 1 (NCHW).");

REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: numbertype")
    .Attr(kImageFormat)
    .SetShapeFn(BiasAddGradShape)
    .Doc("out_backprop summed over every dim but the channel dim.");

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {bfloat16, float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("Inference (is_training false): y from the given mean and variance, which batch_mean and "
         "batch_variance repeat. Training: the batch's statistics; batch_variance is the "
         "unbiased variance, averaged into the given one by exponential_avg_factor. "
         "reserve_space_1/2 hold the batch mean and biased variance (inference: the given ones); "
         "reserve_space_3 is a scalar 0.");

REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("The gradients of FusedBatchNormV3 for x, scale and offset; reserve_space_1 and _2 are "
         "the mean and variance y was normalized with (FusedBatchNormV3's reserve spaces when "
         "training, its mean and variance inputs otherwise). reserve_space_4 and _5 are empty.");

REGISTER_OP("ResizeBilinearGrad")
    .Input("grads: float")
    .Input("original_image: T")
    .Output("output: T")
    .Attr("T: {float, bfloat16, half, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    })
    .Doc("The gradient of ResizeBilinear: each of grads' values shared out over the four input "
         "pixels its output interpolated, with the same weights.");

REGISTER_OP("ResizeNearestNeighborGrad")
    .Input("grads: T")
    .Input("size: int32")
    .Output("output: T")
    .Attr("T: {uint8, int8, int32, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeNearestNeighborGradShape)
    .Doc("The gradient of ResizeNearestNeighbor: grads summed onto the pixels of the original "
         "[height, width] = size that each output copied.");

REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr(kConvPadding)
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(PoolShape)
    .Doc("Padding never wins the max.");

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr(kImageFormat)
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShape)
    .Doc("The mean of each window's values inside the input (SAME padding is not counted).");

REGISTER_OP("ResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr(kImageTypes)
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape);

REGISTER_OP("ResizeNearestNeighbor")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: T")
    .Attr(kImageTypes)
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape);

}  // namespace sluice
