// Gradient functions of TensorFlow's nn ops (ops/tf_nn_ops.cc), as TensorFlow defines them:
// Conv2D through Conv2DBackpropInput and Conv2DBackpropFilter, BiasAdd through BiasAddGrad, and
// MaxPool and AvgPool through the ONNX pooling backward ops (ops/nn_gradient_ops.cc), which
// work on NCHW: NHWC operands are transposed on the way in and out. DepthwiseConv2dNative goes
// through the Conv2D backprops with one group per channel; FusedBatchNormV3 and the resizes
// through backward ops of TensorFlow's names (FusedBatchNormGradV3, ResizeBilinearGrad,
// ResizeNearestNeighborGrad).
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::Const;
using gradient_util::FloatOnly;
using gradient_util::IsFloat;
using gradient_util::CopyAttrs;
using gradient_util::NodeAttr;

AttrMap Conv2DAttrs(const GradientNode& n) {
  return CopyAttrs(n, {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"});
}

// dx = Conv2DBackpropInput(Shape(x), filter, dy); dfilter = Conv2DBackpropFilter(x, Shape(filter), dy).
absl::Status Conv2DGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &f = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string x_shape, b->Unary("Shape", x));
  SL_ASSIGN_OR_RETURN(std::string f_shape, b->Unary("Shape", f));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Conv2DBackpropInput", {{x_shape}, {f}, {dys[0]}}, Conv2DAttrs(n)));
  SL_ASSIGN_OR_RETURN(auto df, b->Add("Conv2DBackpropFilter", {{x}, {f_shape}, {dys[0]}}, Conv2DAttrs(n)));
  (*dxs)[0] = dx[0];
  (*dxs)[1] = df[0];
  return absl::OkStatus();
}

absl::Status BiasAddGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(auto db, b->Add("BiasAddGrad", {{dys[0]}}, CopyAttrs(n, {"data_format"})));
  (*dxs)[0] = dys[0];
  (*dxs)[1] = db[0];
  return absl::OkStatus();
}

// The pooling window of a TensorFlow pool as ONNX pool attrs (NCHW spatial order).
absl::StatusOr<AttrMap> OnnxPoolAttrs(const GradientNode& n, bool* nhwc) {
  SL_ASSIGN_OR_RETURN(std::string format, NodeAttr<std::string>(n, "data_format", "NHWC"));
  SL_ASSIGN_OR_RETURN(std::string padding, NodeAttr<std::string>(n, "padding", ""));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, NodeAttr<std::vector<int64_t>>(n, "ksize", {}));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> strides, NodeAttr<std::vector<int64_t>>(n, "strides", {}));
  if ((format != "NHWC" && format != "NCHW") || ksize.size() != 4 || strides.size() != 4 ||
      (padding != "SAME" && padding != "VALID")) {
    return absl::UnimplementedError(absl::StrCat("no gradient for ", n.def->op(), " with data_format ", format,
                                                 " and padding ", padding));
  }
  *nhwc = format == "NHWC";
  const int h = *nhwc ? 1 : 2, w = *nhwc ? 2 : 3;
  AttrMap attrs;
  attrs["auto_pad"] = Attr(std::string(padding == "SAME" ? "SAME_UPPER" : "VALID"));
  attrs["kernel_shape"] = Attr(std::vector<int64_t>{ksize[h], ksize[w]});
  attrs["strides"] = Attr(std::vector<int64_t>{strides[h], strides[w]});
  return attrs;
}

absl::StatusOr<std::string> Transposed(GradientBuilder* b, const std::string& t, std::vector<int64_t> perm) {
  AttrMap attrs;
  attrs["perm"] = Attr(perm);
  return b->Unary("Onnx>Transpose", t, attrs);
}

absl::StatusOr<std::string> ToNchw(GradientBuilder* b, const std::string& t, bool nhwc) {
  return nhwc ? Transposed(b, t, {0, 3, 1, 2}) : absl::StatusOr<std::string>(t);
}

absl::StatusOr<std::string> FromNchw(GradientBuilder* b, const std::string& t, bool nhwc) {
  return nhwc ? Transposed(b, t, {0, 2, 3, 1}) : absl::StatusOr<std::string>(t);
}

absl::Status MaxPoolGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  bool nhwc = false;
  SL_ASSIGN_OR_RETURN(AttrMap attrs, OnnxPoolAttrs(n, &nhwc));
  SL_ASSIGN_OR_RETURN(std::string x, ToNchw(b, n.inputs[0], nhwc));
  SL_ASSIGN_OR_RETURN(std::string dy, ToNchw(b, dys[0], nhwc));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>MaxPoolGrad", {{x}, {dy}}, attrs));
  SL_ASSIGN_OR_RETURN((*dxs)[0], FromNchw(b, dx[0], nhwc));
  return absl::OkStatus();
}

// TensorFlow's AvgPool divides by the in-bounds count: ONNX's count_include_pad = 0.
absl::Status AvgPoolGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  bool nhwc = false;
  SL_ASSIGN_OR_RETURN(AttrMap attrs, OnnxPoolAttrs(n, &nhwc));
  attrs["count_include_pad"] = Attr(int64_t{0});
  SL_ASSIGN_OR_RETURN(std::string x, ToNchw(b, n.inputs[0], nhwc));
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(std::string dy, ToNchw(b, dys[0], nhwc));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>AveragePoolGrad", {{dy}, {shape}}, attrs));
  SL_ASSIGN_OR_RETURN((*dxs)[0], FromNchw(b, dx[0], nhwc));
  return absl::OkStatus();
}


// DepthwiseConv2dNative is a grouped Conv2D with one group per input channel: its filter
// [kh, kw, C, M] read as [kh, kw, 1, C * M] (the same memory). So both gradients are the Conv2D
// backprops on that view, and the filter's is read back as [kh, kw, C, M].
absl::Status DepthwiseConv2dNativeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &f = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string x_shape, b->Unary("Shape", x));
  SL_ASSIGN_OR_RETURN(std::string f_shape, b->Unary("Shape", f));
  auto int32s = [&](std::vector<int32_t> v) {
    return Const(b, Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())})));
  };
  SL_ASSIGN_OR_RETURN(std::string zero, int32s({0}));
  SL_ASSIGN_OR_RETURN(std::string two, int32s({2}));
  SL_ASSIGN_OR_RETURN(std::string one, int32s({1}));
  SL_ASSIGN_OR_RETURN(auto window, b->Add("Slice", {{f_shape}, {zero}, {two}}));
  SL_ASSIGN_OR_RETURN(auto channels, b->Add("Slice", {{f_shape}, {two}, {two}}));
  AttrMap keep;
  keep["keep_dims"] = Attr(true);
  SL_ASSIGN_OR_RETURN(std::string outputs, b->Binary("Prod", channels[0], zero, keep));
  SL_ASSIGN_OR_RETURN(std::string axis, Const(b, Tensor::FromVector<int32_t>({0}, TensorShape({}))));
  SL_ASSIGN_OR_RETURN(auto grouped_shape, b->Add("ConcatV2", {{window[0], one, outputs}, {axis}}));
  SL_ASSIGN_OR_RETURN(std::string grouped, b->Binary("Reshape", f, grouped_shape[0]));
  AttrMap attrs = CopyAttrs(n, {"strides", "padding", "explicit_paddings", "data_format", "dilations"});
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Conv2DBackpropInput", {{x_shape}, {grouped}, {dys[0]}}, attrs));
  SL_ASSIGN_OR_RETURN(auto df, b->Add("Conv2DBackpropFilter", {{x}, {grouped_shape[0]}, {dys[0]}}, attrs));
  (*dxs)[0] = dx[0];
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->Binary("Reshape", df[0], f_shape));
  return absl::OkStatus();
}

// FusedBatchNormV3 through FusedBatchNormGradV3, as TensorFlow's _FusedBatchNormV3Grad: training
// normalizes with the batch's statistics (the reserve spaces), inference with the mean and
// variance inputs. Only y's gradient is used; mean and variance get none.
absl::Status FusedBatchNormV3Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(bool training, NodeAttr<bool>(n, "is_training", true));
  std::string dy = dys[0];
  if (dy.empty()) {
    SL_ASSIGN_OR_RETURN(dy, b->Fill(n.outputs[0], 0.0));
  }
  const std::string& mean = training ? n.outputs[3] : n.inputs[3];
  const std::string& variance = training ? n.outputs[4] : n.inputs[4];
  AttrMap attrs = CopyAttrs(n, {"epsilon", "data_format", "is_training"});
  SL_ASSIGN_OR_RETURN(auto grads, b->Add("FusedBatchNormGradV3",
                                         {{dy}, {n.inputs[0]}, {n.inputs[1]}, {mean}, {variance}, {n.outputs[5]}},
                                         attrs));
  for (int i = 0; i < 3; ++i) (*dxs)[i] = grads[i];
  return absl::OkStatus();
}

absl::Status ResizeBilinearGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (!IsFloat(b->Dtype(n.inputs[0]))) return absl::OkStatus();  // TensorFlow: integer images get none.
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ResizeBilinearGrad", {{dys[0]}, {n.inputs[0]}},
                                      CopyAttrs(n, {"align_corners", "half_pixel_centers"})));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// The original [height, width] is x's dims 1 and 2 (images are NHWC).
absl::Status ResizeNearestNeighborGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Shape", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string begin, Const(b, Tensor::FromVector<int32_t>({1}, TensorShape({1}))));
  SL_ASSIGN_OR_RETURN(std::string size, Const(b, Tensor::FromVector<int32_t>({2}, TensorShape({1}))));
  SL_ASSIGN_OR_RETURN(auto hw, b->Add("Slice", {{shape}, {begin}, {size}}));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ResizeNearestNeighborGrad", {{dys[0]}, {hw[0]}},
                                      CopyAttrs(n, {"align_corners", "half_pixel_centers"})));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

}  // namespace

REGISTER_GRADIENT("Conv2D", Conv2DGrad);
REGISTER_GRADIENT("BiasAdd", BiasAddGradFn);
REGISTER_GRADIENT("MaxPool", MaxPoolGradFn);
REGISTER_GRADIENT("AvgPool", AvgPoolGradFn);
REGISTER_GRADIENT("DepthwiseConv2dNative", DepthwiseConv2dNativeGrad);
REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormV3Grad);
REGISTER_GRADIENT("ResizeBilinear", ResizeBilinearGradFn);
REGISTER_GRADIENT("ResizeNearestNeighbor", FloatOnly<ResizeNearestNeighborGradFn>);

}  // namespace sluice
