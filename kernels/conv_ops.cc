// Conv, ConvTranspose and Col2Im (ONNX semantics, 1-D to 3-D and more) as matrix products:
// im2col + GEMM for Conv, GEMM + col2im for ConvTranspose, per image and group.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/blas.h"
#include "kernels/conv_util.h"
#include "kernels/dnnl_conv.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
class ConvOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx));
    SL_RETURN_IF_ERROR(ctx->GetAttr("group", &group_));
    // Set by the trainer on its graphs' convolutions: the weights change every step.
    bool weights_vary = false;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), kConvWeightsVaryAttr, false, &weights_vary));
    if (weights_vary) dnnl_.AssumeWeightsVary();
    std::string activation;
    std::vector<float> params;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "activation", std::string(), &activation));
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "activation_params", std::vector<float>{}, &params));
    if (!ParseConvPostOp(activation, &post_)) {
      return absl::InvalidArgumentError(absl::StrCat("Conv: unknown activation '", activation, "'"));
    }
    const size_t want_params = post_ == ConvPostOp::kClip || post_ == ConvPostOp::kHardSigmoid ? 2
                               : post_ == ConvPostOp::kLeakyRelu                                 ? 1
                                                                                                 : 0;
    if (params.size() != want_params) {
      return absl::InvalidArgumentError(absl::StrCat("Conv: activation ", activation, " takes ", want_params,
                                                     " activation_params, got ", params.size()));
    }
    if (want_params > 0) post_alpha_ = params[0];
    if (want_params > 1) post_beta_ = params[1];
    std::string in_layout, out_layout;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "input_layout", std::string("NCHW"), &in_layout));
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "output_layout", std::string("NCHW"), &out_layout));
    x_nhwc_ = in_layout == "NHWC";
    y_nhwc_ = out_layout == "NHWC";
    DataTypeVector tb, tr;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "Tb", DataTypeVector{}, &tb));
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "Tr", DataTypeVector{}, &tr));
    if (tb.size() > 1 || tr.size() > 1) return absl::InvalidArgumentError("Conv takes at most one bias and one residual");
    has_bias_ = !tb.empty();
    residual_index_ = tr.empty() ? -1 : 2 + static_cast<int>(tb.size());
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& w = ctx->input(1);
    const Tensor* bias = has_bias_ ? &ctx->input(2) : nullptr;
    const Tensor* residual = residual_index_ >= 0 ? &ctx->input(residual_index_) : nullptr;
    if (x.dims() < 3 || w.dims() != x.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Conv needs X of rank >= 3 and W of the same rank; got ",
                                                     x.shape().DebugString(), " and ", w.shape().DebugString()));
    }
    const int64_t n = x.dim_size(0), c = x.dim_size(1), m = w.dim_size(0);
    if (c != w.dim_size(1) * group_ || m % group_ != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Conv channels do not fit: X has ", c, " channels, W is ", w.shape().DebugString(), " with group ", group_));
    }
    if (bias != nullptr && bias->NumElements() != m) {
      return absl::InvalidArgumentError(absl::StrCat("Conv bias has ", bias->NumElements(), " values for ", m, " channels"));
    }
    std::vector<int64_t> in = SpatialDims(x.shape()), kernel = SpatialDims(w.shape());
    if (!window_.kernel_shape.empty() && window_.kernel_shape != kernel) {
      return absl::InvalidArgumentError("Conv kernel_shape does not match W");
    }
    SL_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindowGeometry(in, kernel, window_, false));
    const TensorShape y_shape(WindowOutputDims(n, m, g));
    Tensor* y;
    if (residual != nullptr) {
      // Y starts as the residual (its buffer, when no one else reads it) and the convolution
      // adds to it.
      if (residual->shape() != y_shape || residual->dtype() != x.dtype()) {
        return absl::InvalidArgumentError(absl::StrCat("Conv residual is ", residual->shape().DebugString(),
                                                       ", the output ", y_shape.DebugString()));
      }
      SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(residual_index_, 0, y_shape, &y));
      if (y->raw_data() != residual->raw_data() && y->NumElements() > 0) {
        std::copy_n(residual->data<T>(), residual->NumElements(), y->data<T>());
      }
    } else {
      SL_RETURN_IF_ERROR(ctx->allocate_output(0, y_shape, &y));
    }
    const int64_t cg = c / group_, mg = m / group_;
    const int64_t in_size = Product(in), out_size = Product(g.out), k_size = Product(kernel);
    if (y->NumElements() == 0) return absl::OkStatus();
    if ((x_nhwc_ || y_nhwc_) && x.dims() != 4) {
      return absl::InvalidArgumentError("NHWC layouts apply to 2-D convolutions only");
    }
    bool direct = k_size == 1;  // A 1x1 window with unit stride and no padding reads X as is.
    for (size_t i = 0; i < in.size(); ++i) {
      direct = direct && g.strides[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
    }
    // A plain 1x1 convolution of NCHW tensors is one matrix product per image on the tensors as
    // they are; oneDNN's would reorder X into its channel blocks and Y back, memory-bound passes
    // that cost as much as the product (ResNet-50's training step spent a quarter of its time in
    // them).
    const bool plain_product =
        direct && group_ == 1 && !x_nhwc_ && !y_nhwc_ && residual == nullptr && post_ == ConvPostOp::kNone;
    if constexpr (std::is_same_v<T, float>) {
      if (!plain_product) {
        const int threads = ctx->intra_op_threads();
        SL_ASSIGN_OR_RETURN(bool done, dnnl_.Run(x, w, bias, g, group_, post_, post_alpha_, post_beta_, threads, y,
                                                 x_nhwc_, y_nhwc_, ctx->cancellation(), residual != nullptr));
        if (done) return absl::OkStatus();
      }
    }
    // The GEMM path works in NCHW: convert NHWC operands on the way in and out. With a
    // residual, Y holds it (in Y's layout) until the end.
    Tensor x_nchw = x_nhwc_ ? ToNchw(x) : x;
    Tensor y_nchw = y_nhwc_ || residual != nullptr ? Tensor(y->dtype(), y->shape()) : *y;
    SL_ASSIGN_OR_RETURN(int64_t column_elements, ScratchElements({cg, k_size, out_size}, "Conv columns"));
    std::vector<T> columns(direct ? 0 : column_elements);
    const T* xd = x_nchw.data<T>();
    const T* wd = w.data<T>();
    T* yd = y_nchw.data<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        SL_RETURN_IF_ERROR(ctx->CheckCancelled());
        const T* image = xd + (b * c + gi * cg) * in_size;
        const T* cols = image;
        if (!direct) {
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            Im2Col(image, cg, in, g, columns.data());
          } else {
            std::vector<float> fi(image, image + cg * in_size), fc(columns.size());
            Im2Col(fi.data(), cg, in, g, fc.data());
            for (size_t i = 0; i < fc.size(); ++i) columns[i] = T(fc[i]);
          }
          cols = columns.data();
        }
        T* out = yd + (b * m + gi * mg) * out_size;
        if (!CancellableGemmRowMajor<T>(ctx->cancellation(), false, false, mg, out_size, cg * k_size, T(1),
                                        wd + gi * mg * cg * k_size, cg * k_size, cols, out_size, T(0), out,
                                        out_size, ctx->intra_op_threads())) {
          return ctx->CheckCancelled();
        }
      }
    }
    if (bias != nullptr) {
      const T* bd = bias->data<T>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t o = 0; o < m; ++o) {
          T* row = yd + (b * m + o) * out_size;
          for (int64_t i = 0; i < out_size; ++i) row[i] += bd[o];
        }
      }
    }
    if (residual != nullptr) {
      const Tensor held = y_nhwc_ ? ToNchw(*y) : *y;
      const T* rd = held.data<T>();
      for (int64_t i = 0; i < y_nchw.NumElements(); ++i) {
        if constexpr (std::is_same_v<T, double>) {
          yd[i] += rd[i];
        } else {
          yd[i] = T(static_cast<float>(yd[i]) + static_cast<float>(rd[i]));
        }
      }
    }
    if (post_ != ConvPostOp::kNone) {
      for (int64_t i = 0; i < y_nchw.NumElements(); ++i) {
        yd[i] = T(ApplyConvPostOp(post_, post_alpha_, post_beta_, static_cast<float>(yd[i])));
      }
    }
    if (y_nhwc_) {
      ToNhwc(y_nchw, y);
    } else if (residual != nullptr) {
      std::copy_n(yd, y_nchw.NumElements(), y->data<T>());
    }
    return absl::OkStatus();
  }

 private:
  // [N,C,H,W] <-> values in N,H,W,C order, for the GEMM fallback of NHWC-layout convolutions.
  static Tensor ToNchw(const Tensor& nhwc) {
    Tensor out(nhwc.dtype(), nhwc.shape());
    const int64_t n = nhwc.dim_size(0), c = nhwc.dim_size(1), hw = nhwc.dim_size(2) * nhwc.dim_size(3);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t p = 0; p < hw; ++p)
        for (int64_t ch = 0; ch < c; ++ch) out.data<T>()[(b * c + ch) * hw + p] = nhwc.data<T>()[(b * hw + p) * c + ch];
    return out;
  }
  static void ToNhwc(const Tensor& nchw, Tensor* out) {
    const int64_t n = nchw.dim_size(0), c = nchw.dim_size(1), hw = nchw.dim_size(2) * nchw.dim_size(3);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t p = 0; p < hw; ++p)
        for (int64_t ch = 0; ch < c; ++ch) out->data<T>()[(b * hw + p) * c + ch] = nchw.data<T>()[(b * c + ch) * hw + p];
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  bool x_nhwc_ = false, y_nhwc_ = false;
  bool has_bias_ = false;
  int residual_index_ = -1;  // The residual input's index, when there is one.
  ConvPostOp post_ = ConvPostOp::kNone;
  float post_alpha_ = 0, post_beta_ = 0;  // The activation's parameters (see ConvPostOp).
  DnnlConv dnnl_;
};

template <typename T>
class ConvTransposeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx));
    SL_RETURN_IF_ERROR(ctx->GetAttr("group", &group_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("output_padding", &output_padding_));
    return ctx->GetAttr("output_shape", &output_shape_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& w = ctx->input(1);
    const Tensor* bias = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    if (x.dims() < 3 || w.dims() != x.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("ConvTranspose needs X of rank >= 3 and W of the same rank; got ",
                                                     x.shape().DebugString(), " and ", w.shape().DebugString()));
    }
    const int64_t n = x.dim_size(0), c = x.dim_size(1);
    if (w.dim_size(0) != c || c % group_ != 0) {
      return absl::InvalidArgumentError(absl::StrCat("ConvTranspose: W ", w.shape().DebugString(),
                                                     " does not fit ", c, " input channels with group ", group_));
    }
    const int64_t mg = w.dim_size(1), m = mg * group_, cg = c / group_;
    if (bias != nullptr && bias->NumElements() != m) {
      return absl::InvalidArgumentError(absl::StrCat("ConvTranspose bias has ", bias->NumElements(), " values for ", m, " channels"));
    }
    std::vector<int64_t> in = SpatialDims(x.shape()), kernel = SpatialDims(w.shape());
    const size_t nd = in.size();
    WindowGeometry g;
    g.kernel = kernel;
    g.strides = window_.strides.empty() ? std::vector<int64_t>(nd, 1) : window_.strides;
    g.dilations = window_.dilations.empty() ? std::vector<int64_t>(nd, 1) : window_.dilations;
    std::vector<int64_t> out_pad = output_padding_.empty() ? std::vector<int64_t>(nd, 0) : output_padding_;
    if (g.strides.size() != nd || g.dilations.size() != nd || out_pad.size() != nd ||
        (!window_.pads.empty() && window_.pads.size() != 2 * nd)) {
      return absl::InvalidArgumentError("ConvTranspose attrs do not match the spatial rank");
    }
    g.pad_begin.assign(nd, 0);
    g.pad_end.assign(nd, 0);
    g.out = in;  // Column positions: one per input position.
    std::vector<int64_t> out(nd);
    std::vector<int64_t> explicit_out;
    if (!output_shape_.empty()) {
      // output_shape may list all dims or only the spatial ones.
      explicit_out.assign(output_shape_.end() - nd, output_shape_.end());
    }
    for (size_t i = 0; i < nd; ++i) {
      // Checked: attributes near 2^62 must not wrap into a small output and a large scatter.
      const auto overflow = absl::InvalidArgumentError(absl::StrCat(
          "ConvTranspose geometry overflows in spatial dimension ", i));
      if (kernel[i] <= 0 || out_pad[i] < 0 || (!explicit_out.empty() && explicit_out[i] < 0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ConvTranspose: kernel must be positive and output_padding and output_shape not negative in spatial dimension ", i));
      }
      int64_t dk, full;  // (kernel - 1) * dilation + 1; stride * (in - 1) + output_padding + dk
      if (!CheckedMul(kernel[i] - 1, g.dilations[i], &dk) || !CheckedAdd(dk, int64_t{1}, &dk) ||
          !CheckedMul(g.strides[i], in[i] - 1, &full) || !CheckedAdd(full, out_pad[i], &full) ||
          !CheckedAdd(full, dk, &full)) {
        return overflow;
      }
      const bool same = window_.auto_pad == "SAME_UPPER" || window_.auto_pad == "SAME_LOWER";
      if (!explicit_out.empty() || same) {
        if (!explicit_out.empty()) {
          out[i] = explicit_out[i];
        } else if (!CheckedMul(in[i], g.strides[i], &out[i])) {
          return overflow;
        }
        int64_t total;  // full - out, out >= 0
        if (out[i] < 0 || !CheckedAdd(full, -out[i], &total)) return overflow;
        const int64_t half = total / 2;
        if (total < 0) {  // Asked for more than the kernel covers: zeros at the end.
          g.pad_begin[i] = 0;
          g.pad_end[i] = total;
        } else if (window_.auto_pad == "SAME_UPPER") {
          g.pad_begin[i] = half;
          g.pad_end[i] = total - half;
        } else {
          g.pad_begin[i] = total - half;
          g.pad_end[i] = half;
        }
      } else {
        if (!window_.pads.empty() && window_.auto_pad == "NOTSET") {
          g.pad_begin[i] = window_.pads[i];
          g.pad_end[i] = window_.pads[i + nd];
        }
        if (!CheckedAdd(full, -g.pad_begin[i], &out[i]) || !CheckedAdd(out[i], -g.pad_end[i], &out[i])) {
          return overflow;
        }
      }
      if (out[i] <= 0) return absl::InvalidArgumentError("ConvTranspose output would be empty");
    }
    DimVector out_dims = {n, m};
    for (int64_t o : out) out_dims.push_back(o);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(out_dims), &y));
    const int64_t in_size = Product(in), out_size = Product(out), k_size = Product(kernel);
    SL_ASSIGN_OR_RETURN(int64_t column_elements, ScratchElements({mg, k_size, in_size}, "ConvTranspose columns"));
    SL_ASSIGN_OR_RETURN(int64_t image_elements, ScratchElements({mg, out_size}, "ConvTranspose image"));
    std::vector<float> columns(column_elements), image(image_elements);
    std::vector<T> typed_columns(std::is_same_v<T, float> ? 0 : columns.size());
    const T* xd = x.data<T>();
    const T* wd = w.data<T>();
    T* yd = y->data<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        // columns[(mg*K) x in] = W_g^T [(mg*K) x cg] * X_g [cg x in]
        const T* wg = wd + gi * cg * mg * k_size;
        const T* xg = xd + (b * c + gi * cg) * in_size;
        if constexpr (std::is_same_v<T, float>) {
          GemmRowMajor<float>(true, false, mg * k_size, in_size, cg, 1.0f, wg, mg * k_size, xg, in_size,
                              0.0f, columns.data(), in_size, ctx->intra_op_threads());
        } else {
          GemmRowMajor<T>(true, false, mg * k_size, in_size, cg, T(1), wg, mg * k_size, xg, in_size, T(0),
                          typed_columns.data(), in_size, ctx->intra_op_threads());
          for (size_t i = 0; i < columns.size(); ++i) columns[i] = static_cast<float>(typed_columns[i]);
        }
        std::fill(image.begin(), image.end(), 0.0f);
        Col2Im(columns.data(), mg, out, g, image.data());
        T* yg = yd + (b * m + gi * mg) * out_size;
        for (int64_t i = 0; i < mg * out_size; ++i) yg[i] = T(image[i]);
      }
    }
    if (bias != nullptr) {
      const T* bd = bias->data<T>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t o = 0; o < m; ++o) {
          T* row = yd + (b * m + o) * out_size;
          for (int64_t i = 0; i < out_size; ++i) row[i] += bd[o];
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
  int64_t group_ = 1;
  std::vector<int64_t> output_padding_, output_shape_;
};

// ONNX Col2Im: the adjoint of Im2Col over an image of image_shape with a block_shape kernel.
template <typename T>
class Col2ImOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("dilations", &dilations_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("pads", &pads_));
    return ctx->GetAttr("strides", &strides_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& image_shape = ctx->input(1);
    const Tensor& block_shape = ctx->input(2);
    if (x.dims() != 3 || image_shape.dims() != 1 || block_shape.shape() != image_shape.shape() ||
        image_shape.NumElements() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Col2Im needs a 3-D input and equal-length 1-D image_shape and block_shape; got ", x.shape().DebugString(),
          ", ", image_shape.shape().DebugString(), " and ", block_shape.shape().DebugString()));
    }
    const size_t nd = static_cast<size_t>(image_shape.NumElements());
    std::vector<int64_t> in(image_shape.flat<int64_t>().begin(), image_shape.flat<int64_t>().end());
    WindowGeometry g;
    g.kernel.assign(block_shape.flat<int64_t>().begin(), block_shape.flat<int64_t>().end());
    g.strides = strides_.empty() ? std::vector<int64_t>(nd, 1) : strides_;
    g.dilations = dilations_.empty() ? std::vector<int64_t>(nd, 1) : dilations_;
    std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * nd, 0) : pads_;
    if (g.strides.size() != nd || g.dilations.size() != nd || pads.size() != 2 * nd) {
      return absl::InvalidArgumentError("Col2Im: strides, dilations and pads do not match image_shape's length");
    }
    g.pad_begin.assign(pads.begin(), pads.begin() + nd);
    g.pad_end.assign(pads.begin() + nd, pads.end());
    g.out.resize(nd);
    int64_t blocks = 1, block_size = 1;
    for (size_t i = 0; i < nd; ++i) {
      if (in[i] <= 0 || g.kernel[i] <= 0 || g.strides[i] <= 0 || g.dilations[i] <= 0 || g.pad_begin[i] < 0 ||
          g.pad_end[i] < 0) {
        return absl::InvalidArgumentError(
            "Col2Im: image_shape, block_shape, strides and dilations must be positive and pads not negative");
      }
      int64_t dk, span;
      if (!CheckedMul(g.kernel[i] - 1, g.dilations[i], &dk) || !CheckedAdd(dk, int64_t{1}, &dk) ||
          !CheckedAdd(in[i], g.pad_begin[i], &span) || !CheckedAdd(span, g.pad_end[i], &span) || span < dk) {
        return absl::InvalidArgumentError(absl::StrCat("Col2Im: block ", g.kernel[i], " (dilation ", g.dilations[i],
                                                       ") does not fit the padded image dim ", i));
      }
      g.out[i] = (span - dk) / g.strides[i] + 1;
      if (!CheckedMul(blocks, g.out[i], &blocks) || !CheckedMul(block_size, g.kernel[i], &block_size)) {
        return absl::InvalidArgumentError("Col2Im: sizes overflow int64");
      }
    }
    if (x.dim_size(1) % block_size != 0 || x.dim_size(2) != blocks) {
      return absl::InvalidArgumentError(absl::StrCat("Col2Im: input ", x.shape().DebugString(), " is not N x (C * ",
                                                     block_size, ") x ", blocks, " for these shapes"));
    }
    const int64_t n = x.dim_size(0), c = x.dim_size(1) / block_size;
    DimVector dims = {n, c};
    for (int64_t d : in) dims.push_back(d);
    SL_ASSIGN_OR_RETURN(int64_t image_size, ShapeElements(in));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(dims), &y));
    T* yd = y->data<T>();
    std::fill(yd, yd + y->NumElements(), T(0));
    const T* xd = x.data<T>();
    for (int64_t b = 0; b < n; ++b) {
      Col2Im(xd + b * c * block_size * blocks, c, in, g, yd + b * c * image_size);
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> dilations_, pads_, strides_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Col2Im").Device(DEVICE_CPU).TypeConstraint<float>("T"), Col2ImOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Col2Im").Device(DEVICE_CPU).TypeConstraint<double>("T"), Col2ImOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Conv").Device(DEVICE_CPU).TypeConstraint<float>("T"), ConvOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Conv").Device(DEVICE_CPU).TypeConstraint<double>("T"), ConvOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>ConvTranspose").Device(DEVICE_CPU).TypeConstraint<float>("T"), ConvTransposeOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>ConvTranspose").Device(DEVICE_CPU).TypeConstraint<double>("T"), ConvTransposeOp<double>);

}  // namespace
}  // namespace sluice
