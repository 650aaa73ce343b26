// More of TensorFlow's nn and image ops, with TensorFlow's names, inputs, attrs and defaults
// (written for Sluice from TensorFlow's documented signatures in nn_ops.cc, image_ops.cc and
// random_ops.cc), the ones TensorFlow.js's Node backend calls beyond ops/tf_nn_ops.cc:
// FusedBatchNorm (V1), the 3-D pools and convolution with their gradients, MaxPoolGrad,
// AvgPoolGrad, LRN(Grad), Dilation2D and its backprops, CropAndResize, NonMaxSuppressionV3/4/5
// and Multinomial. Kernels: kernels/tf_extra_nn_ops.cc (FusedBatchNorm: kernels/tf_nn_ops.cc,
// beside the V3 kernel it shares).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/checked_size.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

int64_t DimOr(const PartialShape& s, int i) { return s.unknown_rank() || i >= s.rank() ? -1 : s.dim(i); }

absl::Status CheckRank(InferenceContext* c, int input, int rank, const char* what) {
  const PartialShape& s = c->input(input);
  if (!s.unknown_rank() && s.rank() != rank) {
    return c->Error(absl::StrCat(what, " must be ", rank, "-D, got shape ", s.DebugString()));
  }
  return absl::OkStatus();
}

// A window attr (`rank` values: batch, the spatial dims, channels; channels-last layout, the
// only one TensorFlow's CPU kernels of these ops take) checked as TensorFlow checks it; returns
// the spatial entries.
absl::StatusOr<std::vector<int64_t>> SpatialAttr(InferenceContext* c, const char* attr, int rank) {
  std::vector<int64_t> v;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), attr, &v));
  if (static_cast<int>(v.size()) != rank) {
    return c->Error(absl::StrCat(attr, " must have ", rank, " values, got ", v.size()));
  }
  if (v.front() != 1 || v.back() != 1) {
    return c->Error(absl::StrCat(attr, " in the batch and depth dimensions must be 1, got [", absl::StrJoin(v, ","), "]"));
  }
  for (int i = 1; i + 1 < rank; ++i) {
    if (v[i] <= 0) return c->Error(absl::StrCat(attr, " must be positive, got [", absl::StrJoin(v, ","), "]"));
  }
  return std::vector<int64_t>(v.begin() + 1, v.end() - 1);
}

// TensorFlow's windowed output size (SAME or VALID); -1 when the input size is unknown.
absl::StatusOr<int64_t> OutSize(InferenceContext* c, int64_t in, int64_t k, int64_t rate, int64_t stride,
                                const std::string& padding) {
  if (in < 0 || k < 0) return int64_t{-1};
  int64_t dk;
  if (!CheckedMul(k - 1, rate, &dk) || !CheckedAdd(dk, int64_t{1}, &dk)) {
    return c->Error(absl::StrCat("window size overflows: filter ", k, ", rate ", rate));
  }
  if (padding == "SAME") return in / stride + (in % stride != 0 ? 1 : 0);
  if (in < dk) {
    return c->Error(absl::StrCat("computed output size would be negative: input size ", in, ", window ", dk));
  }
  return (in - dk) / stride + 1;
}

// Pool over the spatial dims of a channels-last input 0 of `rank` dims.
absl::Status PoolNdShape(InferenceContext* c, int rank) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, rank, "input"));
  std::string padding;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "padding", &padding));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> k, SpatialAttr(c, "ksize", rank));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> s, SpatialAttr(c, "strides", rank));
  const PartialShape& x = c->input(0);
  std::vector<int64_t> out = {DimOr(x, 0)};
  for (int i = 0; i < rank - 2; ++i) {
    SL_ASSIGN_OR_RETURN(int64_t o, OutSize(c, DimOr(x, i + 1), k[i], 1, s[i], padding));
    out.push_back(o);
  }
  out.push_back(DimOr(x, rank - 1));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Conv3D: NDHWC input 0, DHWIO filter 1.
absl::Status Conv3DShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 5, "input"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 5, "filter"));
  std::string padding;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "padding", &padding));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> s, SpatialAttr(c, "strides", 5));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> d, SpatialAttr(c, "dilations", 5));
  const PartialShape& x = c->input(0);
  const PartialShape& f = c->input(1);
  std::vector<int64_t> out = {DimOr(x, 0)};
  for (int i = 0; i < 3; ++i) {
    SL_ASSIGN_OR_RETURN(int64_t o, OutSize(c, DimOr(x, i + 1), DimOr(f, i), d[i], s[i], padding));
    out.push_back(o);
  }
  out.push_back(DimOr(f, 4));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Output 0 is the shape held by the integer vector `input` when it is a known constant, else
// `rank` unknown dims.
absl::Status ShapeFromSizes(InferenceContext* c, int input, int rank) {
  const Tensor* t = c->input_tensor(input);
  std::vector<int64_t> dims(rank, -1);
  if (t != nullptr && (t->dtype() == DT_INT32 || t->dtype() == DT_INT64)) {
    if (t->dims() != 1 || t->NumElements() != rank) {
      return c->Error(absl::StrCat("the sizes input must hold ", rank, " values, got shape ", t->shape().DebugString()));
    }
    for (int i = 0; i < rank; ++i) {
      dims[i] = t->dtype() == DT_INT32 ? t->flat<int32_t>()[i] : t->flat<int64_t>()[i];
      if (dims[i] < 0) return c->Error(absl::StrCat("the sizes input has a negative size ", dims[i]));
    }
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status SameAsInput(InferenceContext* c, int input) {
  c->set_output(0, c->input(input));
  return absl::OkStatus();
}

absl::Status Dilation2DShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "input"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 3, "filter"));
  std::string padding;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "padding", &padding));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> s, SpatialAttr(c, "strides", 4));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> r, SpatialAttr(c, "rates", 4));
  const PartialShape& x = c->input(0);
  const PartialShape& f = c->input(1);
  SL_ASSIGN_OR_RETURN(int64_t oh, OutSize(c, DimOr(x, 1), DimOr(f, 0), r[0], s[0], padding));
  SL_ASSIGN_OR_RETURN(int64_t ow, OutSize(c, DimOr(x, 2), DimOr(f, 1), r[1], s[1], padding));
  int64_t depth = DimOr(x, 3);
  if (depth < 0) depth = DimOr(f, 2);
  c->set_output(0, PartialShape(std::vector<int64_t>{DimOr(x, 0), oh, ow, depth}));
  return absl::OkStatus();
}

absl::Status CropAndResizeShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "image"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 2, "boxes"));
  SL_RETURN_IF_ERROR(CheckRank(c, 2, 1, "box_ind"));
  SL_RETURN_IF_ERROR(CheckRank(c, 3, 1, "crop_size"));
  int64_t h = -1, w = -1;
  if (const Tensor* t = c->input_tensor(3); t != nullptr && t->dtype() == DT_INT32) {
    if (t->NumElements() != 2) return c->Error(absl::StrCat("crop_size must hold 2 values, got ", t->NumElements()));
    h = t->flat<int32_t>()[0];
    w = t->flat<int32_t>()[1];
    if (h <= 0 || w <= 0) return c->Error(absl::StrCat("crop dimensions must be positive, got [", h, ",", w, "]"));
  }
  int64_t boxes = DimOr(c->input(1), 0);
  if (boxes < 0) boxes = DimOr(c->input(2), 0);
  c->set_output(0, PartialShape(std::vector<int64_t>{boxes, h, w, DimOr(c->input(0), 3)}));
  return absl::OkStatus();
}

// NonMaxSuppressionV3/4/5: a vector of selected indices (max_output_size long when padded or
// when fewer boxes cannot be known), then (V5) their scores and (V4, V5) the valid count.
absl::Status NmsShape(InferenceContext* c, bool has_scores, bool has_valid) {
  SL_RETURN_IF_ERROR(CheckRank(c, 0, 2, "boxes"));
  SL_RETURN_IF_ERROR(CheckRank(c, 1, 1, "scores"));
  for (int i = 2; i < c->num_inputs(); ++i) SL_RETURN_IF_ERROR(CheckRank(c, i, 0, "max_output_size and the thresholds"));
  bool pad = false;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(c->attrs(), "pad_to_max_output_size", false, &pad));
  int64_t n = -1;
  if (const Tensor* t = c->input_tensor(2); pad && t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 1) {
    n = t->flat<int32_t>()[0];
  }
  const PartialShape v(std::vector<int64_t>{n});
  int out = 0;
  c->set_output(out++, v);
  if (has_scores) c->set_output(out++, v);
  if (has_valid) c->set_output(out++, PartialShape::Scalar());
  return absl::OkStatus();
}

constexpr char kPadding[] = "padding: {'SAME', 'VALID'}";
constexpr char kFormat3d[] = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'";
constexpr char kFormat2d[] = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
constexpr char kLrnAttrs[] = "T: {half, bfloat16, float} = DT_FLOAT";

}  // namespace

REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr(kFormat2d)
    .Attr("is_training: bool = true")
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "x"));
      for (int i = 1; i < 5; ++i) SL_RETURN_IF_ERROR(CheckRank(c, i, 1, "scale, offset, mean and variance"));
      std::string format;
      SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "data_format", &format));
      int64_t channels = DimOr(c->input(0), format == "NCHW" ? 1 : 3);
      for (int i = 1; i < 3 && channels < 0; ++i) channels = DimOr(c->input(i), 0);
      c->set_output(0, c->input(0));
      for (int i = 1; i < 5; ++i) c->set_output(i, PartialShape(std::vector<int64_t>{channels}));
      return absl::OkStatus();
    })
    .Doc("FusedBatchNormV3 with every operand float and no reserve_space_3.");

REGISTER_OP("MaxPool3D")
    .Input("input: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("T: {half, bfloat16, float}")
    .SetShapeFn([](InferenceContext* c) { return PoolNdShape(c, 5); })
    .Doc("The max of each [d, h, w] window of an NDHWC input; padding never wins.");

REGISTER_OP("AvgPool3D")
    .Input("input: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn([](InferenceContext* c) { return PoolNdShape(c, 5); })
    .Doc("The mean of each window's in-bounds values (SAME padding is not counted).");

REGISTER_OP("MaxPool3DGrad")
    .Input("orig_input: TInput")
    .Input("orig_output: TInput")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .Attr("TInput: {half, bfloat16, float} = DT_FLOAT")
    .SetShapeFn([](InferenceContext* c) { return SameAsInput(c, 0); })
    .Doc("Each window's grad goes to every input of the window within 1e-5 of its max "
         "(orig_output), as TensorFlow's CPU kernel does.");

REGISTER_OP("AvgPool3DGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0, 5); })
    .Doc("Each window's grad shared equally among its in-bounds inputs.");

REGISTER_OP("Conv3D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
    .SetShapeFn(Conv3DShape)
    .Doc("3-D convolution of input [N,D,H,W,C] with filter [D,H,W,C/groups,out].");

REGISTER_OP("Conv3DBackpropInputV2")
    .Input("input_sizes: Tshape")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0, 5); })
    .Doc("The gradient of Conv3D with respect to its input, of shape input_sizes.");

REGISTER_OP("Conv3DBackpropFilterV2")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int) >= 5")
    .Attr(kPadding)
    .Attr(kFormat3d)
    .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 1, 5); })
    .Doc("The gradient of Conv3D with respect to its filter, of shape filter_sizes (DHWIO).");

REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr(kFormat2d)
    .Attr("T: realnumbertype = DT_FLOAT")
    .SetShapeFn([](InferenceContext* c) { return SameAsInput(c, 0); })
    .Doc("Each window's grad goes to the first of its inputs holding the window's max.");

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr(kPadding)
    .Attr(kFormat2d)
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0, 4); })
    .Doc("Each window's grad shared equally among its in-bounds inputs.");

REGISTER_OP("LRN")
    .Input("input: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr(kLrnAttrs)
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(CheckRank(c, 0, 4, "input"));
      return SameAsInput(c, 0);
    })
    .Doc("input / (bias + alpha * sqr_sum) ** beta, sqr_sum the sum of squares over the "
         "channels within depth_radius of each channel.");

REGISTER_OP("LRNGrad")
    .Input("input_grads: T")
    .Input("input_image: T")
    .Input("output_image: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr(kLrnAttrs)
    .SetShapeFn([](InferenceContext* c) {
      for (int i = 0; i < 3; ++i) SL_RETURN_IF_ERROR(CheckRank(c, i, 4, "input_grads, input_image and output_image"));
      return SameAsInput(c, 1);
    })
    .Doc("The gradient of LRN with respect to its input.");

REGISTER_OP("Dilation2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: realnumbertype")
    .Attr("strides: list(int) >= 4")
    .Attr("rates: list(int) >= 4")
    .Attr(kPadding)
    .SetShapeFn(Dilation2DShape)
    .Doc("Grayscale dilation: the max over each window of input + filter (per channel); "
         "out-of-bounds positions take no part.");

REGISTER_OP("Dilation2DBackpropInput")
    .Input("input: T")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("in_backprop: T")
    .Attr("T: realnumbertype")
    .Attr("strides: list(int) >= 4")
    .Attr("rates: list(int) >= 4")
    .Attr(kPadding)
    .SetShapeFn([](InferenceContext* c) { return SameAsInput(c, 0); })
    .Doc("Each output's gradient goes to the input position that won its max.");

REGISTER_OP("Dilation2DBackpropFilter")
    .Input("input: T")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("filter_backprop: T")
    .Attr("T: realnumbertype")
    .Attr("strides: list(int) >= 4")
    .Attr("rates: list(int) >= 4")
    .Attr(kPadding)
    .SetShapeFn([](InferenceContext* c) { return SameAsInput(c, 1); })
    .Doc("Each output's gradient goes to the filter position that won its max.");

REGISTER_OP("CropAndResize")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("crop_size: int32")
    .Output("crops: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, bfloat16, float, double}")
    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("extrapolation_value: float = 0")
    .SetShapeFn(CropAndResizeShape)
    .Doc("Crops of image[box_ind[i]] at the normalized [y1, x1, y2, x2] of boxes[i], resampled "
         "to crop_size; samples outside the image are extrapolation_value.");

REGISTER_OP("NonMaxSuppressionV3")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .SetShapeFn([](InferenceContext* c) { return NmsShape(c, false, false); })
    .Doc("Greedy non-max suppression: boxes by descending score (above score_threshold), each "
         "kept unless its IoU with a kept box exceeds iou_threshold.");

REGISTER_OP("NonMaxSuppressionV4")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .SetShapeFn([](InferenceContext* c) { return NmsShape(c, false, true); })
    .Doc("NonMaxSuppressionV3, optionally padded with zeros to max_output_size; valid_outputs "
         "counts the selected boxes.");

REGISTER_OP("NonMaxSuppressionV5")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T")
    .Input("score_threshold: T")
    .Input("soft_nms_sigma: T")
    .Output("selected_indices: int32")
    .Output("selected_scores: T")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .SetShapeFn([](InferenceContext* c) { return NmsShape(c, true, true); })
    .Doc("NonMaxSuppressionV4 with Soft-NMS (soft_nms_sigma > 0: overlapping boxes' scores decay "
         "by exp(-iou^2 / (2 sigma)) instead of being dropped) and the selected scores.");

REGISTER_OP("Multinomial")
    .SetIsStateful()
    .Input("logits: T")
    .Input("num_samples: int32")
    .Output("output: output_dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: realnumbertype")
    .Attr("output_dtype: {int32, int64} = DT_INT64")
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(CheckRank(c, 0, 2, "logits"));
      SL_RETURN_IF_ERROR(CheckRank(c, 1, 0, "num_samples"));
      int64_t n = -1;
      if (const Tensor* t = c->input_tensor(1); t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 1) {
        n = t->flat<int32_t>()[0];
      }
      c->set_output(0, PartialShape(std::vector<int64_t>{DimOr(c->input(0), 0), n}));
      return absl::OkStatus();
    })
    .Doc("num_samples class indices per row of logits, drawn from softmax(logits) with TensorFlow's "
         "Philox stream for (seed, seed2); both 0 seeds it at random.");

}  // namespace sluice
