// CPU kernels of TensorFlow's nn ops (ops/tf_nn_ops.cc): Conv2D, DepthwiseConv2dNative and the
// backprops of both, BiasAdd(Grad), FusedBatchNormV3 and FusedBatchNormGradV3, MaxPool,
// AvgPool, on 4-D tensors in data_format order (NHWC or NCHW) with HWIO filters (the resizes
// are in tf_resize_ops.cc).
//
// Convolutions reuse the ONNX Conv machinery: the window geometry of conv_util (TensorFlow's
// SAME is ONNX's SAME_UPPER, EXPLICIT is explicit pads), oneDNN for float (reading and writing
// NHWC in place), and im2col/col2im + GEMM for double, for the backprops and where oneDNN
// declines. half and bfloat16 compute in float. A depthwise convolution is a grouped one with
// a group per input channel; its backprops walk NHWC windows directly (one channel per group
// makes the GEMMs too small). Pooling walks NHWC windows directly.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "framework/checked_size.h"
#include "kernels/blas.h"
#include "kernels/conv_util.h"
#include "kernels/dnnl_conv.h"
#include "kernels/fast_math.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"
#include "kernels/parallel_for.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The type a kernel for T computes in: double for double, float for the rest.
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// `t` as a tensor of C (shared when it already is one).
template <typename T, typename C>
Tensor AsType(const Tensor& t) {
  if constexpr (std::is_same_v<T, C>) {
    return t;
  } else {
    Tensor out(DataTypeToEnum<C>::value, t.shape());
    const T* s = t.data<T>();
    C* d = out.data<C>();
    for (int64_t i = 0; i < t.NumElements(); ++i) d[i] = static_cast<C>(static_cast<float>(s[i]));
    return out;
  }
}

// Writes `src` (of C) into `out` (of T).
template <typename T, typename C>
void StoreAs(const Tensor& src, Tensor* out) {
  const C* s = src.data<C>();
  T* d = out->data<T>();
  if (s == reinterpret_cast<const C*>(d)) return;
  for (int64_t i = 0; i < src.NumElements(); ++i) d[i] = T(static_cast<ComputeType<T>>(s[i]));
}

// [N, P, C] <-> [N, C, P] (P: the spatial positions): NHWC <-> NCHW.
template <typename T>
void ChannelsLastToFirst(const T* src, int64_t n, int64_t p, int64_t c, T* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < p; ++i)
      for (int64_t ch = 0; ch < c; ++ch) dst[(b * c + ch) * p + i] = src[(b * p + i) * c + ch];
}
template <typename T>
void ChannelsFirstToLast(const T* src, int64_t n, int64_t p, int64_t c, T* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < p; ++i) dst[(b * p + i) * c + ch] = src[(b * c + ch) * p + i];
}

// The window attrs TensorFlow's conv and pool ops share, parsed once: data_format, padding,
// explicit_paddings, strides, dilations and (pools) ksize, each a 4-vector in data_format order.
struct TfWindow {
  bool nchw = false;
  std::string padding;
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, ksize[2] = {1, 1};
  int64_t pads[4] = {0, 0, 0, 0};  // top, bottom, left, right

  int h_dim() const { return nchw ? 2 : 1; }
  int w_dim() const { return nchw ? 3 : 2; }
  int c_dim() const { return nchw ? 1 : 3; }

  absl::Status Parse(OpKernelConstruction* ctx, bool has_dilations, bool has_ksize) {
    std::string format;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "data_format", std::string("NHWC"), &format));
    if (format != "NHWC" && format != "NCHW") {
      return absl::InvalidArgumentError(absl::StrCat("data_format '", format, "' is not supported (NHWC or NCHW)"));
    }
    nchw = format == "NCHW";
    SL_RETURN_IF_ERROR(ctx->GetAttr("padding", &padding));
    if (padding != "SAME" && padding != "VALID" && padding != "EXPLICIT") {
      return absl::InvalidArgumentError(absl::StrCat("padding '", padding, "' is not SAME, VALID or EXPLICIT"));
    }
    auto spatial = [&](const char* attr, std::vector<int64_t> fallback, int64_t* out) -> absl::Status {
      std::vector<int64_t> v;
      SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), attr, std::move(fallback), &v));
      if (v.size() != 4) return absl::InvalidArgumentError(absl::StrCat(attr, " must have 4 values, got ", v.size()));
      if (v[0] != 1 || v[c_dim()] != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            attr, " in the batch and depth dimensions must be 1, got [", absl::StrJoin(v, ","), "]"));
      }
      if (v[h_dim()] <= 0 || v[w_dim()] <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(attr, " must be positive, got [", absl::StrJoin(v, ","), "]"));
      }
      out[0] = v[h_dim()];
      out[1] = v[w_dim()];
      return absl::OkStatus();
    };
    SL_RETURN_IF_ERROR(spatial("strides", {}, stride));
    if (has_dilations) SL_RETURN_IF_ERROR(spatial("dilations", {1, 1, 1, 1}, dilation));
    if (has_ksize) SL_RETURN_IF_ERROR(spatial("ksize", {}, ksize));
    std::vector<int64_t> p;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "explicit_paddings", std::vector<int64_t>{}, &p));
    if (padding != "EXPLICIT") {
      if (!p.empty()) return absl::InvalidArgumentError("explicit_paddings must be empty unless padding is EXPLICIT");
      return absl::OkStatus();
    }
    if (p.size() != 8) {
      return absl::InvalidArgumentError(absl::StrCat("explicit_paddings must have 8 values, got ", p.size()));
    }
    for (int64_t v : p) {
      if (v < 0) return absl::InvalidArgumentError(absl::StrCat("explicit_paddings must not be negative, got [", absl::StrJoin(p, ","), "]"));
    }
    if (p[0] != 0 || p[1] != 0 || p[2 * c_dim()] != 0 || p[2 * c_dim() + 1] != 0) {
      return absl::InvalidArgumentError("explicit_paddings in the batch and depth dimensions must be 0");
    }
    pads[0] = p[2 * h_dim()];
    pads[1] = p[2 * h_dim() + 1];
    pads[2] = p[2 * w_dim()];
    pads[3] = p[2 * w_dim() + 1];
    return absl::OkStatus();
  }

  // The geometry for an input of h x w and a window of kh x kw.
  absl::StatusOr<WindowGeometry> Geometry(int64_t h, int64_t w, int64_t kh, int64_t kw) const {
    WindowAttrs a;
    a.auto_pad = padding == "SAME" ? "SAME_UPPER" : padding == "VALID" ? "VALID" : "NOTSET";
    a.strides = {stride[0], stride[1]};
    a.dilations = {dilation[0], dilation[1]};
    if (padding == "EXPLICIT") a.pads = {pads[0], pads[2], pads[1], pads[3]};
    return ComputeWindowGeometry({h, w}, {kh, kw}, a, /*ceil_mode=*/false);
  }

  // A 4-D shape in data_format order.
  TensorShape Image(int64_t n, int64_t h, int64_t w, int64_t c) const {
    return nchw ? TensorShape({n, c, h, w}) : TensorShape({n, h, w, c});
  }
};

// An HWIO filter [kh, kw, i, o] as OIHW [o, i, kh, kw].
template <typename C>
Tensor HwioToOihw(const Tensor& f) {
  const int64_t kh = f.dim_size(0), kw = f.dim_size(1), in = f.dim_size(2), out = f.dim_size(3);
  Tensor t(DataTypeToEnum<C>::value, TensorShape({out, in, kh, kw}));
  const C* s = f.data<C>();
  C* d = t.data<C>();
  for (int64_t p = 0; p < kh * kw; ++p)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o) d[(o * in + i) * kh * kw + p] = s[(p * in + i) * out + o];
  return t;
}

// A convolution's operands checked against each other: x [N,H,W,C] (data_format), filter
// HWIO [kh, kw, C / group, O] (depthwise: [kh, kw, C, M], O = C * M, group = C).
struct ConvDims {
  int64_t n, h, w, c, kh, kw, group, out_c;
  WindowGeometry g;
};

absl::StatusOr<ConvDims> CheckConv(const TfWindow& win, const TensorShape& x, const TensorShape& f, bool depthwise) {
  ConvDims d;
  d.n = x.dim_size(0);
  d.h = x.dim_size(win.h_dim());
  d.w = x.dim_size(win.w_dim());
  d.c = x.dim_size(win.c_dim());
  d.kh = f.dim_size(0);
  d.kw = f.dim_size(1);
  const int64_t f_in = f.dim_size(2), f_out = f.dim_size(3);
  if (depthwise) {
    if (f_in != d.c) {
      return absl::InvalidArgumentError(absl::StrCat("input depth ", d.c, " does not match the filter's ", f_in,
                                                     " (filter ", f.DebugString(), ")"));
    }
    if (!CheckedMul(d.c, f_out, &d.out_c)) return absl::InvalidArgumentError("output depth overflows");
    d.group = d.c;
  } else {
    if (f_in <= 0 || d.c % f_in != 0) {
      return absl::InvalidArgumentError(absl::StrCat("input depth ", d.c, " must be a multiple of the filter's input depth ",
                                                     f_in, " (filter ", f.DebugString(), ")"));
    }
    d.group = d.c / f_in;
    d.out_c = f_out;
    if (d.group > 0 && d.out_c % d.group != 0) {
      return absl::InvalidArgumentError(absl::StrCat("output depth ", d.out_c, " is not a multiple of the ", d.group, " groups"));
    }
  }
  if (d.kh <= 0 || d.kw <= 0) return absl::InvalidArgumentError(absl::StrCat("filter ", f.DebugString(), " is empty"));
  SL_ASSIGN_OR_RETURN(d.g, win.Geometry(d.h, d.w, d.kh, d.kw));
  return d;
}

// Per image and group, columns = im2col(x) and y = W * columns: the NCHW convolution of x
// ([n, c, in...]) with w ([o, c / group, k...]) into y ([n, o, out...]).
template <typename C>
absl::Status ConvNchw(const OpKernelContext* ctx, const Tensor& x, const Tensor& w, const WindowGeometry& g,
                      int64_t group, Tensor* y) {
  const int64_t n = x.dim_size(0), c = x.dim_size(1), m = w.dim_size(0), cg = c / group, mg = m / group;
  const std::vector<int64_t> in = SpatialDims(x.shape());
  const int64_t in_size = Product(in), out_size = Product(g.out), k_size = Product(g.kernel);
  SL_ASSIGN_OR_RETURN(int64_t cols, ScratchElements({cg, k_size, out_size}, "Conv2D columns"));
  std::vector<C> columns(cols);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
      Im2Col(x.data<C>() + (b * c + gi * cg) * in_size, cg, in, g, columns.data());
      if (!CancellableGemmRowMajor<C>(ctx->cancellation(), false, false, mg, out_size, cg * k_size, C(1),
                                      w.data<C>() + gi * mg * cg * k_size, cg * k_size, columns.data(), out_size,
                                      C(0), y->data<C>() + (b * m + gi * mg) * out_size, out_size,
                                      ctx->intra_op_threads())) {
        return ctx->CheckCancelled();
      }
    }
  }
  return absl::OkStatus();
}

// x in data_format as an NCHW tensor of C (a copy when it is NHWC or of another type).
template <typename T, typename C>
Tensor ToNchw(const Tensor& x, const TfWindow& win) {
  Tensor cx = AsType<T, C>(x);
  if (win.nchw) return cx;
  const int64_t n = x.dim_size(0), h = x.dim_size(1), w = x.dim_size(2), c = x.dim_size(3);
  Tensor out(DataTypeToEnum<C>::value, TensorShape({n, c, h, w}));
  ChannelsLastToFirst(cx.data<C>(), n, h * w, c, out.data<C>());
  return out;
}

// Writes an NCHW result of C into `out` (data_format, T).
template <typename T, typename C>
void FromNchw(const Tensor& nchw, const TfWindow& win, Tensor* out) {
  if (win.nchw) {
    StoreAs<T, C>(nchw, out);
    return;
  }
  const int64_t n = nchw.dim_size(0), c = nchw.dim_size(1), p = nchw.dim_size(2) * nchw.dim_size(3);
  if constexpr (std::is_same_v<T, C>) {
    ChannelsFirstToLast(nchw.data<C>(), n, p, c, out->data<T>());
  } else {
    Tensor tmp(DataTypeToEnum<C>::value, TensorShape({n, p, c}));
    ChannelsFirstToLast(nchw.data<C>(), n, p, c, tmp.data<C>());
    StoreAs<T, C>(tmp, out);
  }
}

// Conv2D and DepthwiseConv2dNative.
template <typename T, bool kDepthwise>
class TfConvOp : public OpKernel {
 public:
  using C = ComputeType<T>;

  absl::Status Init(OpKernelConstruction* ctx) override { return win_.Parse(ctx, true, false); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& f = ctx->input(1);
    SL_RETURN_IF_ERROR(CheckRank4(x, "input"));
    SL_RETURN_IF_ERROR(CheckRank4(f, "filter"));
    SL_ASSIGN_OR_RETURN(ConvDims d, CheckConv(win_, x.shape(), f.shape(), kDepthwise));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, win_.Image(d.n, d.g.out[0], d.g.out[1], d.out_c), &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (x.NumElements() == 0) {  // No input channels or spatial extent: sums of nothing.
      std::fill_n(y->data<T>(), y->NumElements(), T(0));
      return absl::OkStatus();
    }
    const Tensor w = OihwFilter(f, d);
    if constexpr (std::is_same_v<T, float>) {
      const TensorShape x_nchw({d.n, d.c, d.h, d.w}), y_nchw({d.n, d.out_c, d.g.out[0], d.g.out[1]});
      Tensor x_view(DT_FLOAT, x_nchw, x.buffer()), y_view(DT_FLOAT, y_nchw, y->buffer());
      SL_ASSIGN_OR_RETURN(bool done, dnnl_.Run(x_view, w, nullptr, d.g, d.group, ConvPostOp::kNone, 0, 0,
                                               ctx->intra_op_threads(), &y_view, !win_.nchw, !win_.nchw,
                                               ctx->cancellation()));
      if (done) return absl::OkStatus();
    }
    Tensor y_nchw(DataTypeToEnum<C>::value, TensorShape({d.n, d.out_c, d.g.out[0], d.g.out[1]}));
    SL_RETURN_IF_ERROR(ConvNchw<C>(ctx, ToNchw<T, C>(x, win_), w, d.g, d.group, &y_nchw));
    FromNchw<T, C>(y_nchw, win_, y);
    return absl::OkStatus();
  }

 private:
  // The filter as OIHW of C. The last conversion is kept while its source buffer is the
  // filter's, so a constant or variable filter is converted once (and oneDNN, which keys its
  // reordered weights on the buffer, reorders it once).
  Tensor OihwFilter(const Tensor& f, const ConvDims& d) const {
    absl::MutexLock lock(&mu_);
    if (cached_source_ != f.buffer() || cached_shape_ != f.shape()) {
      Tensor hwio = AsType<T, C>(f);
      if (kDepthwise) {  // [kh, kw, C, M] is [kh, kw, 1, C * M] of a C-group convolution.
        hwio = Tensor(hwio.dtype(), TensorShape({d.kh, d.kw, 1, d.out_c}), hwio.buffer());
      }
      cached_ = HwioToOihw<C>(hwio);
      cached_source_ = f.buffer();
      cached_shape_ = f.shape();
    }
    return cached_;
  }

  TfWindow win_;
  DnnlConv dnnl_;
  mutable absl::Mutex mu_;
  mutable std::shared_ptr<TensorBuffer> cached_source_ ABSL_GUARDED_BY(mu_);
  mutable TensorShape cached_shape_ ABSL_GUARDED_BY(mu_);
  mutable Tensor cached_ ABSL_GUARDED_BY(mu_);
};

// The int32 sizes input of a backprop: 4 non-negative values.
absl::StatusOr<TensorShape> SizesInput(const Tensor& t, const char* what) {
  if (t.dims() != 1 || t.NumElements() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a vector of 4 values, got shape ", t.shape().DebugString()));
  }
  std::vector<int64_t> dims;
  for (int32_t v : t.flat<int32_t>()) {
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat(what, " holds a negative size ", v));
    dims.push_back(v);
  }
  return TensorShape::FromDims(dims);
}

absl::Status CheckOutBackprop(const Tensor& dy, const TfWindow& win, const ConvDims& d) {
  const TensorShape want = win.Image(d.n, d.g.out[0], d.g.out[1], d.out_c);
  if (dy.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat("out_backprop has shape ", dy.shape().DebugString(),
                                                   ", the convolution's output is ", want.DebugString()));
  }
  return absl::OkStatus();
}

// Conv2DBackpropInput: per image and group, columns = W_g^T dY_g, then col2im into dX.
template <typename T>
class Conv2DBackpropInputOp : public OpKernel {
 public:
  using C = ComputeType<T>;
  absl::Status Init(OpKernelConstruction* ctx) override { return win_.Parse(ctx, true, false); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(TensorShape x_shape, SizesInput(ctx->input(0), "input_sizes"));
    const Tensor& f = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    SL_RETURN_IF_ERROR(CheckRank4(f, "filter"));
    SL_RETURN_IF_ERROR(CheckRank4(dy, "out_backprop"));
    SL_ASSIGN_OR_RETURN(ConvDims d, CheckConv(win_, x_shape, f.shape(), false));
    SL_RETURN_IF_ERROR(CheckOutBackprop(dy, win_, d));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x_shape, &dx));
    if (dx->NumElements() == 0) return absl::OkStatus();
    const Tensor w = HwioToOihw<C>(AsType<T, C>(f));
    const Tensor g_y = ToNchw<T, C>(dy, win_);
    const int64_t cg = d.c / d.group, mg = d.out_c / d.group;
    const std::vector<int64_t> in = {d.h, d.w};
    const int64_t in_size = d.h * d.w, out_size = Product(d.g.out), k_size = d.kh * d.kw;
    SL_ASSIGN_OR_RETURN(int64_t cols, ScratchElements({cg, k_size, out_size}, "Conv2DBackpropInput columns"));
    std::vector<C> columns(cols);
    Tensor dx_nchw(DataTypeToEnum<C>::value, TensorShape({d.n, d.c, d.h, d.w}));
    std::fill_n(dx_nchw.data<C>(), dx_nchw.NumElements(), C(0));
    for (int64_t b = 0; b < d.n; ++b) {
      for (int64_t gi = 0; gi < d.group; ++gi) {
        SL_RETURN_IF_ERROR(ctx->CheckCancelled());
        GemmRowMajor<C>(true, false, cg * k_size, out_size, mg, C(1), w.data<C>() + gi * mg * cg * k_size,
                        cg * k_size, g_y.data<C>() + (b * d.out_c + gi * mg) * out_size, out_size, C(0),
                        columns.data(), out_size, ctx->intra_op_threads());
        Col2Im(columns.data(), cg, in, d.g, dx_nchw.data<C>() + (b * d.c + gi * cg) * in_size);
      }
    }
    FromNchw<T, C>(dx_nchw, win_, dx);
    return absl::OkStatus();
  }

 private:
  TfWindow win_;
};

// Conv2DBackpropFilter: dW_g = sum over images of dY_g im2col(X_g)^T, then OIHW -> HWIO.
template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  using C = ComputeType<T>;
  absl::Status Init(OpKernelConstruction* ctx) override { return win_.Parse(ctx, true, false); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(TensorShape f_shape, SizesInput(ctx->input(1), "filter_sizes"));
    const Tensor& dy = ctx->input(2);
    SL_RETURN_IF_ERROR(CheckRank4(x, "input"));
    SL_RETURN_IF_ERROR(CheckRank4(dy, "out_backprop"));
    SL_ASSIGN_OR_RETURN(ConvDims d, CheckConv(win_, x.shape(), f_shape, false));
    SL_RETURN_IF_ERROR(CheckOutBackprop(dy, win_, d));
    Tensor* df;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, f_shape, &df));
    if (df->NumElements() == 0) return absl::OkStatus();
    const Tensor x_nchw = ToNchw<T, C>(x, win_);
    const Tensor g_y = ToNchw<T, C>(dy, win_);
    const int64_t cg = d.c / d.group, mg = d.out_c / d.group;
    const std::vector<int64_t> in = {d.h, d.w};
    const int64_t in_size = d.h * d.w, out_size = Product(d.g.out), k_size = d.kh * d.kw;
    SL_ASSIGN_OR_RETURN(int64_t cols, ScratchElements({cg, k_size, out_size}, "Conv2DBackpropFilter columns"));
    std::vector<C> columns(cols);
    Tensor dw(DataTypeToEnum<C>::value, TensorShape({d.out_c, cg, d.kh, d.kw}));
    std::fill_n(dw.data<C>(), dw.NumElements(), C(0));
    for (int64_t b = 0; b < d.n; ++b) {
      for (int64_t gi = 0; gi < d.group; ++gi) {
        SL_RETURN_IF_ERROR(ctx->CheckCancelled());
        Im2Col(x_nchw.data<C>() + (b * d.c + gi * cg) * in_size, cg, in, d.g, columns.data());
        GemmRowMajor<C>(false, true, mg, cg * k_size, out_size, C(1),
                        g_y.data<C>() + (b * d.out_c + gi * mg) * out_size, out_size, columns.data(), out_size,
                        C(1), dw.data<C>() + gi * mg * cg * k_size, cg * k_size, ctx->intra_op_threads());
      }
    }
    // OIHW [o, i, kh, kw] -> HWIO [kh, kw, i, o].
    Tensor hwio(DataTypeToEnum<C>::value, f_shape);
    const C* s = dw.data<C>();
    C* h = hwio.data<C>();
    for (int64_t o = 0; o < d.out_c; ++o)
      for (int64_t i = 0; i < cg; ++i)
        for (int64_t p = 0; p < k_size; ++p) h[(p * cg + i) * d.out_c + o] = s[(o * cg + i) * k_size + p];
    StoreAs<T, C>(hwio, df);
    return absl::OkStatus();
  }

 private:
  TfWindow win_;
};

// x in data_format as an NHWC tensor of C (shared when it already is one).
template <typename T, typename C>
Tensor ToNhwc(const Tensor& x, const TfWindow& win) {
  Tensor cx = AsType<T, C>(x);
  if (!win.nchw) return cx;
  const int64_t n = x.dim_size(0), c = x.dim_size(1), h = x.dim_size(2), w = x.dim_size(3);
  Tensor out(DataTypeToEnum<C>::value, TensorShape({n, h, w, c}));
  ChannelsFirstToLast(cx.data<C>(), n, h * w, c, out.data<C>());
  return out;
}

// Writes an NHWC result of C into `out` (data_format, T).
template <typename T, typename C>
void FromNhwc(const Tensor& nhwc, const TfWindow& win, Tensor* out) {
  if (!win.nchw) {
    StoreAs<T, C>(nhwc, out);
    return;
  }
  const int64_t n = nhwc.dim_size(0), p = nhwc.dim_size(1) * nhwc.dim_size(2), c = nhwc.dim_size(3);
  Tensor tmp(DataTypeToEnum<C>::value, TensorShape({n, c, p}));
  ChannelsLastToFirst(nhwc.data<C>(), n, p, c, tmp.data<C>());
  StoreAs<T, C>(tmp, out);
}

// The input position tap k of output position o reads along one spatial dim (may be outside).
inline int64_t TapInput(const WindowGeometry& g, int dim, int64_t o, int64_t k) {
  return o * g.strides[dim] - g.pad_begin[dim] + k * g.dilations[dim];
}

// The output position whose tap k reads input position i along one spatial dim, or -1.
inline int64_t TapOutput(const WindowGeometry& g, int dim, int64_t i, int64_t k) {
  const int64_t t = i + g.pad_begin[dim] - k * g.dilations[dim];
  if (t < 0 || t % g.strides[dim] != 0) return -1;
  const int64_t o = t / g.strides[dim];
  return o < g.out[dim] ? o : -1;
}

// DepthwiseConv2dNative's operands checked against each other, for its backprops: the image,
// the [kh, kw, C, M] filter and out_backprop (C * M channels).
absl::StatusOr<ConvDims> CheckDepthwiseBackprop(const TfWindow& win, const TensorShape& x, const TensorShape& f,
                                                const Tensor& dy) {
  if (x.dims() != 4 || f.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat("input ", x.DebugString(), " and filter ", f.DebugString(),
                                                   " must be 4-D"));
  }
  SL_RETURN_IF_ERROR(CheckRank4(dy, "out_backprop"));
  SL_ASSIGN_OR_RETURN(ConvDims d, CheckConv(win, x, f, /*depthwise=*/true));
  SL_RETURN_IF_ERROR(CheckOutBackprop(dy, win, d));
  return d;
}

// DepthwiseConv2dNativeBackpropInput: each input pixel gathers, over the taps that read it,
// filter[tap, c, m] * dy[output pixel, c * M + m] summed over m. Computed on NHWC (NCHW is
// transposed in and out) so that the innermost loop runs along contiguous channels; images
// rows are split over the threads, each writing only its own rows.
template <typename T>
class DepthwiseConv2dNativeBackpropInputOp : public OpKernel {
 public:
  using C = ComputeType<T>;
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(win_.Parse(ctx, true, false), "DepthwiseConv2dNativeBackpropInput");
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(TensorShape x_shape, SizesInput(ctx->input(0), "input_sizes"), kName);
    const Tensor& f = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    SL_ASSIGN_OR_RETURN(ConvDims d, CheckDepthwiseBackprop(win_, x_shape, f.shape(), dy), kName);
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x_shape, &dx));
    if (dx->NumElements() == 0) return absl::OkStatus();
    const Tensor g_y = ToNhwc<T, C>(dy, win_);
    const Tensor fc = AsType<T, C>(f);
    // Written in place when the output is NHWC of C (FromNhwc then has nothing to do).
    Tensor dx_nhwc = !win_.nchw && std::is_same_v<T, C>
                         ? *dx
                         : Tensor(DataTypeToEnum<C>::value, TensorShape({d.n, d.h, d.w, d.c}));
    const int64_t c = d.c, m = d.out_c / d.c, cm = d.out_c, oh = d.g.out[0], ow = d.g.out[1];
    const C* pf = fc.data<C>();
    const C* py = g_y.data<C>();
    C* px = dx_nhwc.data<C>();
    const WindowGeometry& g = d.g;
    ParallelForElements(ctx, d.n * d.h, d.w * d.kh * d.kw * cm, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / d.h, iy = row % d.h;
        for (int64_t ix = 0; ix < d.w; ++ix) {
          C* acc = px + (row * d.w + ix) * c;
          std::fill_n(acc, c, C(0));
          for (int64_t ky = 0; ky < d.kh; ++ky) {
            const int64_t oy = TapOutput(g, 0, iy, ky);
            if (oy < 0) continue;
            for (int64_t kx = 0; kx < d.kw; ++kx) {
              const int64_t ox = TapOutput(g, 1, ix, kx);
              if (ox < 0) continue;
              const C* fr = pf + (ky * d.kw + kx) * cm;
              const C* gr = py + ((b * oh + oy) * ow + ox) * cm;
              if (m == 1) {
                for (int64_t ch = 0; ch < c; ++ch) acc[ch] += fr[ch] * gr[ch];
              } else {
                for (int64_t ch = 0; ch < c; ++ch) {
                  C s = 0;
                  for (int64_t j = 0; j < m; ++j) s += fr[ch * m + j] * gr[ch * m + j];
                  acc[ch] += s;
                }
              }
            }
          }
        }
      }
    });
    SL_RETURN_IF_ERROR(ctx->CheckCancelled());
    FromNhwc<T, C>(dx_nhwc, win_, dx);
    return absl::OkStatus();
  }

 private:
  static constexpr const char* kName = "DepthwiseConv2dNativeBackpropInput";
  TfWindow win_;
};

// DepthwiseConv2dNativeBackpropFilter: filter[tap, c, m] is the sum over images and output
// pixels of x[the pixel the tap reads, c] * dy[output pixel, c * M + m]. On NHWC like the
// input's backprop; the taps are split over the threads, each summing into its own slice.
template <typename T>
class DepthwiseConv2dNativeBackpropFilterOp : public OpKernel {
 public:
  using C = ComputeType<T>;
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(win_.Parse(ctx, true, false), "DepthwiseConv2dNativeBackpropFilter");
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(TensorShape f_shape, SizesInput(ctx->input(1), "filter_sizes"), kName);
    const Tensor& dy = ctx->input(2);
    SL_ASSIGN_OR_RETURN(ConvDims d, CheckDepthwiseBackprop(win_, x.shape(), f_shape, dy), kName);
    Tensor* df;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, f_shape, &df));
    if (df->NumElements() == 0) return absl::OkStatus();
    const Tensor x_nhwc = ToNhwc<T, C>(x, win_);
    const Tensor g_y = ToNhwc<T, C>(dy, win_);
    Tensor dw = std::is_same_v<T, C> ? *df : Tensor(DataTypeToEnum<C>::value, f_shape);
    const int64_t c = d.c, m = d.out_c / d.c, cm = d.out_c, oh = d.g.out[0], ow = d.g.out[1];
    const C* px = x_nhwc.data<C>();
    const C* py = g_y.data<C>();
    C* pw = dw.data<C>();
    const WindowGeometry& g = d.g;
    ParallelForElements(ctx, d.kh * d.kw, d.n * oh * ow * cm, [&](int64_t begin, int64_t end) {
      for (int64_t tap = begin; tap < end; ++tap) {
        const int64_t ky = tap / d.kw, kx = tap % d.kw;
        C* acc = pw + tap * cm;
        std::fill_n(acc, cm, C(0));
        for (int64_t b = 0; b < d.n; ++b) {
          for (int64_t oy = 0; oy < oh; ++oy) {
            const int64_t iy = TapInput(g, 0, oy, ky);
            if (iy < 0 || iy >= d.h) continue;
            for (int64_t ox = 0; ox < ow; ++ox) {
              const int64_t ix = TapInput(g, 1, ox, kx);
              if (ix < 0 || ix >= d.w) continue;
              const C* xr = px + ((b * d.h + iy) * d.w + ix) * c;
              const C* gr = py + ((b * oh + oy) * ow + ox) * cm;
              if (m == 1) {
                for (int64_t ch = 0; ch < c; ++ch) acc[ch] += xr[ch] * gr[ch];
              } else {
                for (int64_t ch = 0; ch < c; ++ch) {
                  for (int64_t j = 0; j < m; ++j) acc[ch * m + j] += xr[ch] * gr[ch * m + j];
                }
              }
            }
          }
        }
      }
    });
    SL_RETURN_IF_ERROR(ctx->CheckCancelled());
    StoreAs<T, C>(dw, df);
    return absl::OkStatus();
  }

 private:
  static constexpr const char* kName = "DepthwiseConv2dNativeBackpropFilter";
  TfWindow win_;
};

// Where a tensor of rank >= 2 keeps its channels: the last dim (NHWC) or dim 1 (NCHW); as
// [outer, channels, inner].
struct ChannelView {
  int64_t outer = 1, channels = 1, inner = 1;
};

absl::StatusOr<ChannelView> ViewChannels(const TensorShape& s, bool nchw, const char* what) {
  if (s.dims() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be at least 2-D, got shape ", s.DebugString()));
  }
  ChannelView v;
  const int c = nchw ? 1 : s.dims() - 1;
  v.channels = s.dim_size(c);
  for (int i = 0; i < c; ++i) v.outer *= s.dim_size(i);
  for (int i = c + 1; i < s.dims(); ++i) v.inner *= s.dim_size(i);
  return v;
}

absl::Status ParseFormat(OpKernelConstruction* ctx, bool* nchw) {
  std::string format;
  SL_RETURN_IF_ERROR(ctx->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("data_format '", format, "' is not NHWC or NCHW"));
  }
  *nchw = format == "NCHW";
  return absl::OkStatus();
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ParseFormat(ctx, &nchw_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    SL_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(x.shape(), nchw_, "value"));
    if (bias.dims() != 1 || bias.dim_size(0) != v.channels) {
      return absl::InvalidArgumentError(absl::StrCat("bias must be a vector of ", v.channels, " values (the channel dim of ",
                                                     x.shape().DebugString(), "), got shape ", bias.shape().DebugString()));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    const T* xd = x.data<T>();
    const T* b = bias.data<T>();
    T* yd = y->data<T>();
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t c = 0; c < v.channels; ++c) {
        const int64_t base = (o * v.channels + c) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) yd[base + i] = T(xd[base + i] + b[c]);
      }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return true; }

 private:
  bool nchw_ = false;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ParseFormat(ctx, &nchw_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    SL_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(dy.shape(), nchw_, "out_backprop"));
    Tensor* db;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({v.channels}), &db));
    // Integers sum in their own type (wrapping as TensorFlow's do); floating types in double.
    constexpr bool kFloating = !std::is_integral_v<T>;
    using Acc = std::conditional_t<kFloating, double, T>;
    std::vector<Acc> sums(v.channels, Acc(0));
    const T* d = dy.data<T>();
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t c = 0; c < v.channels; ++c) {
        const int64_t base = (o * v.channels + c) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) {
          if constexpr (kFloating) {
            sums[c] += static_cast<double>(static_cast<ComputeType<T>>(d[base + i]));
          } else {
            sums[c] = static_cast<T>(sums[c] + d[base + i]);
          }
        }
      }
    for (int64_t c = 0; c < v.channels; ++c) {
      if constexpr (kFloating) {
        db->data<T>()[c] = T(static_cast<ComputeType<T>>(sums[c]));
      } else {
        db->data<T>()[c] = sums[c];
      }
    }
    return absl::OkStatus();
  }

 private:
  bool nchw_ = false;
};

// Whether the batch norms' data_format (NHWC, NCHW, NDHWC or NCDHW) puts channels first.
absl::StatusOr<bool> BatchNormChannelsFirst(OpKernelConstruction* ctx) {
  std::string format;
  SL_RETURN_IF_ERROR(ctx->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW" && format != "NDHWC" && format != "NCDHW") {
    return absl::InvalidArgumentError(absl::StrCat("data_format '", format, "' is not NHWC, NCHW, NDHWC or NCDHW"));
  }
  return format == "NCHW" || format == "NCDHW";
}

// FusedBatchNormV3 for x of T and statistics of U (float), in double internally.
template <typename T, typename U>
class FusedBatchNormV3Op : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("exponential_avg_factor", &factor_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("is_training", &is_training_));
    SL_ASSIGN_OR_RETURN(channels_first_, BatchNormChannelsFirst(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4 && x.dims() != 5) {
      return absl::InvalidArgumentError(absl::StrCat("x must be 4-D or 5-D, got shape ", x.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(x.shape(), channels_first_, "x"));
    const char* names[] = {"x", "scale", "offset", "mean", "variance"};
    for (int i = 1; i < 5; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(names[i], " must be 1-D, got shape ", t.shape().DebugString()));
      }
      const bool needed = i < 3 || !is_training_ || factor_ != 1.0f;
      if (needed && t.NumElements() != v.channels) {
        return absl::InvalidArgumentError(absl::StrCat(
            names[i], " must have as many values as x has channels (", v.channels, "), got ", t.NumElements(),
            i >= 3 ? (is_training_ ? " (needed when exponential_avg_factor != 1)" : " (needed when is_training is false)") : ""));
      }
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    Tensor* out[5];
    for (int i = 1; i < 5; ++i) SL_RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape({v.channels}), &out[i]));
    // FusedBatchNorm (V1), registered on this kernel, has no reserve_space_3.
    if (ctx->num_outputs() > 5) {
      SL_RETURN_IF_ERROR(ctx->allocate_output(5, TensorShape({}), &out[0]));
      out[0]->data<U>()[0] = U(0.0f);
    }
    auto u = [&](int input, int64_t c) { return static_cast<double>(static_cast<float>(ctx->input(input).data<U>()[c])); };
    auto set = [&](int output, int64_t c, double value) { out[output]->data<U>()[c] = U(static_cast<float>(value)); };
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    const int64_t C = v.channels, rest = v.outer * v.inner;
    // Batch statistics in double, two passes (the mean, then squared deviations), each walking
    // x in memory order: channels innermost for NHWC, pixel runs per channel for NCHW.
    std::vector<double> mean(C), var(C);
    if (is_training_) {
      auto accumulate = [&](auto&& term, std::vector<double>* acc) {
        for (int64_t o = 0; o < v.outer; ++o) {
          const T* row = xd + o * C * v.inner;
          if (v.inner == 1) {
            for (int64_t ch = 0; ch < C; ++ch) (*acc)[ch] += term(ch, static_cast<float>(row[ch]));
          } else {
            for (int64_t ch = 0; ch < C; ++ch) {
              double s = 0;
              for (int64_t i = 0; i < v.inner; ++i) s += term(ch, static_cast<float>(row[ch * v.inner + i]));
              (*acc)[ch] += s;
            }
          }
        }
      };
      std::vector<double> sum(C, 0.0), sq(C, 0.0);
      accumulate([](int64_t, float value) { return static_cast<double>(value); }, &sum);
      for (int64_t ch = 0; ch < C; ++ch) mean[ch] = rest > 0 ? sum[ch] / rest : std::numeric_limits<double>::quiet_NaN();
      accumulate(
          [&](int64_t ch, float value) {
            const double e = value - mean[ch];
            return e * e;
          },
          &sq);
      for (int64_t ch = 0; ch < C; ++ch) {
        var[ch] = rest > 0 ? sq[ch] / rest : std::numeric_limits<double>::quiet_NaN();
        const double unbiased = var[ch] * rest / std::max<int64_t>(rest - 1, 1);
        if (factor_ == 1.0f) {
          set(1, ch, mean[ch]);
          set(2, ch, unbiased);
        } else {
          set(1, ch, (1.0 - factor_) * u(3, ch) + factor_ * mean[ch]);
          set(2, ch, (1.0 - factor_) * u(4, ch) + factor_ * unbiased);
        }
      }
    } else {
      for (int64_t ch = 0; ch < C; ++ch) {
        mean[ch] = u(3, ch);
        var[ch] = u(4, ch);
        set(1, ch, mean[ch]);
        set(2, ch, var[ch]);
      }
    }
    // y = x * a + b per channel, a and b folded once in double and applied in float over the
    // intra-op team, in memory order.
    std::vector<float> a(C), b(C);
    for (int64_t ch = 0; ch < C; ++ch) {
      set(3, ch, mean[ch]);
      set(4, ch, var[ch]);
      const double scale = u(1, ch) / std::sqrt(var[ch] + static_cast<double>(epsilon_));
      a[ch] = static_cast<float>(scale);
      b[ch] = static_cast<float>(u(2, ch) - mean[ch] * scale);
    }
    ParallelForElements(ctx, v.outer, C * v.inner, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* xr = xd + o * C * v.inner;
        T* yr = yd + o * C * v.inner;
        if (v.inner == 1) {
          for (int64_t ch = 0; ch < C; ++ch) yr[ch] = T(static_cast<float>(xr[ch]) * a[ch] + b[ch]);
        } else {
          for (int64_t ch = 0; ch < C; ++ch) {
            const float ac = a[ch], bc = b[ch];
            const T* xs = xr + ch * v.inner;
            T* ys = yr + ch * v.inner;
            for (int64_t i = 0; i < v.inner; ++i) ys[i] = T(static_cast<float>(xs[i]) * ac + bc);
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  float epsilon_ = 1e-4f, factor_ = 1.0f;
  bool is_training_ = true, channels_first_ = false;
};

// FusedBatchNormGradV3(y_backprop, x, scale, reserve_space_1, reserve_space_2, reserve_space_3):
// the gradients of FusedBatchNormV3 with respect to x, scale and offset. reserve_space_1 and _2
// are the mean and variance y was normalized with (training: the batch's mean and biased
// variance, as the forward saved them; inference: the given ones). With x_hat = (x - mean) r,
// r = 1 / sqrt(variance + epsilon), per channel over its m values:
//   doffset = sum(dy), dscale = sum(dy x_hat),
//   dx = scale r dy                                               (inference)
//   dx = scale r (dy - doffset / m - x_hat dscale / m)            (training: mean and variance
//                                                                  depend on x too).
// reserve_space_4 and _5 are empty, as TensorFlow's CPU kernel leaves them.
template <typename T, typename U>
class FusedBatchNormGradV3Op : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("is_training", &is_training_));
    SL_ASSIGN_OR_RETURN(channels_first_, BatchNormChannelsFirst(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (x.dims() != 4 && x.dims() != 5) {
      return absl::InvalidArgumentError(absl::StrCat("x must be 4-D or 5-D, got shape ", x.shape().DebugString()));
    }
    if (dy.shape() != x.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("y_backprop has shape ", dy.shape().DebugString(),
                                                     ", x has shape ", x.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(x.shape(), channels_first_, "x"));
    const char* names[] = {"y_backprop", "x", "scale", "reserve_space_1", "reserve_space_2"};
    for (int i = 2; i < 5; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 1 || t.NumElements() != v.channels) {
        return absl::InvalidArgumentError(absl::StrCat(names[i], " must be a vector of ", v.channels,
                                                       " values (x's channels), got shape ", t.shape().DebugString()));
      }
    }
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &dx));
    Tensor *dscale, *doffset, *unused;
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape({v.channels}), &dscale));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, TensorShape({v.channels}), &doffset));
    for (int i = 3; i < 5; ++i) SL_RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape({0}), &unused));
    auto u = [&](int input, int64_t c) { return static_cast<double>(static_cast<float>(ctx->input(input).data<U>()[c])); };
    const T* xd = x.data<T>();
    const T* gd = dy.data<T>();
    T* out = dx->data<T>();
    const int64_t m = v.outer * v.inner;
    for (int64_t c = 0; c < v.channels; ++c) {
      const double mean = u(3, c), r = 1.0 / std::sqrt(u(4, c) + static_cast<double>(epsilon_)), scale = u(2, c);
      auto at = [&](int64_t o, int64_t i) { return (o * v.channels + c) * v.inner + i; };
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const double g = static_cast<float>(gd[at(o, i)]);
          sum_dy += g;
          sum_dy_xhat += g * (static_cast<float>(xd[at(o, i)]) - mean) * r;
        }
      doffset->data<U>()[c] = U(static_cast<float>(sum_dy));
      dscale->data<U>()[c] = U(static_cast<float>(sum_dy_xhat));
      const double mean_dy = is_training_ && m > 0 ? sum_dy / m : 0;
      const double mean_dy_xhat = is_training_ && m > 0 ? sum_dy_xhat / m : 0;
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t k = at(o, i);
          const double xhat = (static_cast<float>(xd[k]) - mean) * r;
          const double g = static_cast<float>(gd[k]);
          out[k] = T(static_cast<float>(scale * r * (g - mean_dy - xhat * mean_dy_xhat)));
        }
    }
    return absl::OkStatus();
  }

 private:
  float epsilon_ = 1e-4f;
  bool is_training_ = true, channels_first_ = false;
};

template <typename T>
bool Greater(T a, T b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(a) > static_cast<float>(b);
  } else {
    return a > b;
  }
}

// MaxPool and AvgPool: each output is the max or mean of its window's in-bounds values.
template <typename T, bool kMax>
class TfPoolOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(win_.Parse(ctx, false, true));
    if (win_.pads[0] >= win_.ksize[0] || win_.pads[1] >= win_.ksize[0] || win_.pads[2] >= win_.ksize[1] ||
        win_.pads[3] >= win_.ksize[1]) {
      return absl::InvalidArgumentError("explicit_paddings must be smaller than ksize");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_RETURN_IF_ERROR(CheckRank4(x, "input"));
    const int64_t n = x.dim_size(0), h = x.dim_size(win_.h_dim()), w = x.dim_size(win_.w_dim()),
                  c = x.dim_size(win_.c_dim());
    SL_ASSIGN_OR_RETURN(WindowGeometry g, win_.Geometry(h, w, win_.ksize[0], win_.ksize[1]));
    const int64_t oh = g.out[0], ow = g.out[1];
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, win_.Image(n, oh, ow, c), &y));
    if (y->NumElements() > 0 && (h == 0 || w == 0)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", x.shape().DebugString(), " has no rows or columns to pool"));
    }
    // Element strides of N, H, W and C in data_format.
    const int64_t sc = win_.nchw ? h * w : 1, sw = win_.nchw ? 1 : c, sh = w * sw, sn = h * w * c;
    const int64_t tc = win_.nchw ? oh * ow : 1, tw = win_.nchw ? 1 : c, th = ow * tw, tn = oh * ow * c;
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    using Acc = ComputeType<T>;
    ForEachCancellableSlice(ctx, n * oh, ow * c * win_.ksize[0] * win_.ksize[1], [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, r = row % oh;
        const int64_t h0 = r * g.strides[0] - g.pad_begin[0];
        const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + g.kernel[0], h);
        for (int64_t q = 0; q < ow; ++q) {
          const int64_t w0 = q * g.strides[1] - g.pad_begin[1];
          const int64_t ws = std::max<int64_t>(w0, 0), we = std::min(w0 + g.kernel[1], w);
          if constexpr (std::is_same_v<T, float>) {
            if (!win_.nchw) {
              // NHWC floats: the window's channels together, in vectors (the NHWC pool kernel
              // the optimizer gives ONNX graphs; this loop one channel at a time took 9x as long).
              PoolPixelNhwc(kMax, xd + b * sn + hs * sh + ws * sw, he - hs, we - ws, sh, sw, c,
                            1.0f / static_cast<float>((he - hs) * (we - ws)), yd + b * tn + r * th + q * tw);
              continue;
            }
          }
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* base = xd + b * sn + ch * sc;
            T* dst = yd + b * tn + r * th + q * tw + ch * tc;
            if constexpr (kMax) {
              T best = base[hs * sh + ws * sw];
              for (int64_t i = hs; i < he; ++i)
                for (int64_t j = ws; j < we; ++j)
                  if (Greater(base[i * sh + j * sw], best)) best = base[i * sh + j * sw];
              *dst = best;
            } else {
              Acc sum = 0;
              for (int64_t i = hs; i < he; ++i)
                for (int64_t j = ws; j < we; ++j) sum += static_cast<Acc>(base[i * sh + j * sw]);
              *dst = T(sum / static_cast<Acc>((he - hs) * (we - ws)));
            }
          }
        }
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  TfWindow win_;
};

template <typename T>
using Conv2DOp = TfConvOp<T, false>;
template <typename T>
using DepthwiseConv2dNativeOp = TfConvOp<T, true>;
template <typename T>
using MaxPoolOp = TfPoolOp<T, true>;
template <typename T>
using AvgPoolOp = TfPoolOp<T, false>;

using MaxPoolTypes = TypeList<half, bfloat16, float, double, int32_t, int64_t, uint8_t, int16_t, int8_t, uint16_t>;

const bool registered = [] {
  RegisterCpuKernelTemplate<Conv2DOp>("Conv2D", FloatTypes{});
  RegisterCpuKernelTemplate<DepthwiseConv2dNativeOp>("DepthwiseConv2dNative", FloatTypes{});
  RegisterCpuKernelTemplate<Conv2DBackpropInputOp>("Conv2DBackpropInput", FloatTypes{});
  RegisterCpuKernelTemplate<Conv2DBackpropFilterOp>("Conv2DBackpropFilter", FloatTypes{});
  RegisterCpuKernelTemplate<DepthwiseConv2dNativeBackpropInputOp>("DepthwiseConv2dNativeBackpropInput", FloatTypes{});
  RegisterCpuKernelTemplate<DepthwiseConv2dNativeBackpropFilterOp>("DepthwiseConv2dNativeBackpropFilter",
                                                                    FloatTypes{});
  RegisterCpuKernelTemplate<BiasAddOp>("BiasAdd", NumericTypes{});
  RegisterCpuKernelTemplate<BiasAddGradOp>("BiasAddGrad", NumericTypes{});
  RegisterCpuKernelTemplate<MaxPoolOp>("MaxPool", MaxPoolTypes{});
  RegisterCpuKernelTemplate<AvgPoolOp>("AvgPool", FloatTypes{});
  return true;
}();

REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                        FusedBatchNormV3Op<float, float>);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3").Device(DEVICE_CPU).TypeConstraint<half>("T").TypeConstraint<float>("U"),
                        FusedBatchNormV3Op<half, float>);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormV3").Device(DEVICE_CPU).TypeConstraint<bfloat16>("T").TypeConstraint<float>("U"),
                        FusedBatchNormV3Op<bfloat16, float>);
// FusedBatchNorm (ops/tf_extra_nn_ops.cc) is V3 with every operand float and five outputs.
REGISTER_KERNEL_BUILDER(Name("FusedBatchNorm").Device(DEVICE_CPU).TypeConstraint<float>("T"), FusedBatchNormV3Op<float, float>);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                        FusedBatchNormGradV3Op<float, float>);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3").Device(DEVICE_CPU).TypeConstraint<half>("T").TypeConstraint<float>("U"),
                        FusedBatchNormGradV3Op<half, float>);
REGISTER_KERNEL_BUILDER(Name("FusedBatchNormGradV3").Device(DEVICE_CPU).TypeConstraint<bfloat16>("T").TypeConstraint<float>("U"),
                        FusedBatchNormGradV3Op<bfloat16, float>);

}  // namespace
}  // namespace sluice
