// CPU kernels of ops/tf_extra_nn_ops.cc: MaxPool3D, AvgPool3D, their gradients and the 2-D
// MaxPoolGrad and AvgPoolGrad, Conv3D and its two backprops, LRN(Grad), Dilation2D and its
// backprops, CropAndResize, NonMaxSuppressionV3/4/5 and Multinomial. Like TensorFlow's CPU
// kernels of these ops they take channels-last tensors only (NHWC, NDHWC).
//
// Pools and convolutions see every input as [N, D, H, W, C]: a 2-D op's input is one with
// D = 1 and a window of depth 1, so one loop nest serves both. Convolutions are direct loops
// (the 3-D convolutions TensorFlow.js runs are small); half and bfloat16 compute in float.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/nms_util.h"
#include "kernels/philox.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The type a kernel for T computes in: double for double, int64 for integers, float otherwise.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_integral_v<T>, int64_t, float>>;

template <typename T>
Acc<T> Load(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<Acc<T>>(v);
  }
}

template <typename T>
T Store(Acc<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));  // Wraps, as TensorFlow's do.
  } else {
    return T(v);
  }
}

absl::Status Invalid(const std::string& op, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": ", message));
}

// ---- Window attrs and geometry -------------------------------------------------------------

// A window over [D, H, W] (a 2-D op's D entries are 1).
struct Window {
  std::array<int64_t, 3> k = {1, 1, 1}, stride = {1, 1, 1}, rate = {1, 1, 1};
  std::array<int64_t, 6> explicit_pads = {0, 0, 0, 0, 0, 0};  // before, after per dim.
  std::string padding;
};

// The spatial entries of a window attr of `rank` values [N, spatial..., C] into the last
// rank - 2 entries of *out; the N and C entries must be 1, the others positive.
absl::Status SpatialAttr(OpKernelConstruction* ctx, const std::string& op, const char* attr, int rank,
                         bool optional, std::array<int64_t, 3>* out) {
  std::vector<int64_t> v(rank, 1);
  if (optional) {
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), attr, v, &v));
  } else {
    SL_RETURN_IF_ERROR(ctx->GetAttr(attr, &v));
  }
  if (static_cast<int>(v.size()) != rank) {
    return Invalid(op, absl::StrCat(attr, " must have ", rank, " values, got ", v.size()));
  }
  if (v.front() != 1 || v.back() != 1) {
    return Invalid(op, absl::StrCat(attr, " in the batch and depth dimensions must be 1, got [",
                                    absl::StrJoin(v, ","), "]"));
  }
  for (int i = 1; i + 1 < rank; ++i) {
    if (v[i] <= 0) return Invalid(op, absl::StrCat(attr, " must be positive, got [", absl::StrJoin(v, ","), "]"));
    (*out)[3 - (rank - 2) + (i - 1)] = v[i];
  }
  return absl::OkStatus();
}

// data_format must be channels-last: TensorFlow's CPU kernels of these ops take no other.
absl::Status ChannelsLast(OpKernelConstruction* ctx, const std::string& op, const char* want) {
  std::string format = want;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "data_format", format, &format));
  if (format != want) return Invalid(op, absl::StrCat("only data_format ", want, " is supported on the CPU, got ", format));
  return absl::OkStatus();
}

// Reads padding, strides and (by name, when given) the window size and rate attrs of an op
// over `spatial` (2 or 3) dims.
absl::StatusOr<Window> ParseWindow(OpKernelConstruction* ctx, const std::string& op, int spatial,
                                   const char* ksize_attr, const char* rate_attr) {
  Window w;
  const int rank = spatial + 2;
  SL_RETURN_IF_ERROR(ctx->GetAttr("padding", &w.padding));
  if (w.padding != "SAME" && w.padding != "VALID" && w.padding != "EXPLICIT") {
    return Invalid(op, absl::StrCat("padding '", w.padding, "' is not SAME or VALID"));
  }
  SL_RETURN_IF_ERROR(SpatialAttr(ctx, op, "strides", rank, false, &w.stride));
  if (ksize_attr != nullptr) SL_RETURN_IF_ERROR(SpatialAttr(ctx, op, ksize_attr, rank, false, &w.k));
  if (rate_attr != nullptr) SL_RETURN_IF_ERROR(SpatialAttr(ctx, op, rate_attr, rank, true, &w.rate));
  std::vector<int64_t> p;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "explicit_paddings", std::vector<int64_t>{}, &p));
  if (w.padding != "EXPLICIT") {
    if (!p.empty()) return Invalid(op, "explicit_paddings must be empty unless padding is EXPLICIT");
    return w;
  }
  if (static_cast<int>(p.size()) != 2 * rank) {
    return Invalid(op, absl::StrCat("explicit_paddings must have ", 2 * rank, " values, got ", p.size()));
  }
  for (int64_t v : p) {
    if (v < 0) return Invalid(op, "explicit_paddings must not be negative");
  }
  if (p[0] != 0 || p[1] != 0 || p[2 * rank - 2] != 0 || p[2 * rank - 1] != 0) {
    return Invalid(op, "explicit_paddings in the batch and depth dimensions must be 0");
  }
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    w.explicit_pads[2 * d] = p[2 * (i + 1)];
    w.explicit_pads[2 * d + 1] = p[2 * (i + 1) + 1];
  }
  return w;
}

// Where a window of `w` falls on an input of [D, H, W] = in: TensorFlow's SAME (the output
// ceil(in / stride), the padding split with the extra at the end), VALID or EXPLICIT.
struct Geometry {
  std::array<int64_t, 3> in, out, k, stride, rate, pad;
};

absl::StatusOr<Geometry> MakeGeometry(const std::string& op, const Window& w, const std::array<int64_t, 3>& in,
                                      const std::array<int64_t, 3>& k) {
  Geometry g;
  g.in = in;
  g.k = k;
  g.stride = w.stride;
  g.rate = w.rate;
  for (int i = 0; i < 3; ++i) {
    int64_t eff;
    if (!CheckedMul(k[i] - 1, w.rate[i], &eff) || !CheckedAdd(eff, int64_t{1}, &eff)) {
      return Invalid(op, absl::StrCat("window size overflows: filter ", k[i], ", rate ", w.rate[i]));
    }
    if (w.padding == "SAME") {
      g.out[i] = in[i] / w.stride[i] + (in[i] % w.stride[i] != 0 ? 1 : 0);
      int64_t span;
      if (g.out[i] > 0 && (!CheckedMul(g.out[i] - 1, w.stride[i], &span) || !CheckedAdd(span, eff, &span))) {
        return Invalid(op, "window geometry overflows");
      }
      g.pad[i] = g.out[i] > 0 ? std::max<int64_t>(span - in[i], 0) / 2 : 0;
      continue;
    }
    int64_t span = in[i];
    if (!CheckedAdd(span, w.explicit_pads[2 * i], &span) || !CheckedAdd(span, w.explicit_pads[2 * i + 1], &span)) {
      return Invalid(op, "padded input size overflows");
    }
    if (span < eff) {
      return Invalid(op, absl::StrCat("computed output size would be negative: input size ", in[i],
                                      ", effective window size ", eff, ", stride ", w.stride[i]));
    }
    g.out[i] = (span - eff) / w.stride[i] + 1;
    g.pad[i] = w.explicit_pads[2 * i];
  }
  return g;
}

// The [N, D, H, W, C] view of a channels-last tensor of rank `spatial` + 2.
std::array<int64_t, 5> View5(const TensorShape& s, int spatial) {
  if (spatial == 2) return {s.dim_size(0), 1, s.dim_size(1), s.dim_size(2), s.dim_size(3)};
  return {s.dim_size(0), s.dim_size(1), s.dim_size(2), s.dim_size(3), s.dim_size(4)};
}

// A channels-last shape of rank `spatial` + 2 from [N, D, H, W, C], its size checked.
absl::StatusOr<TensorShape> Shape5(const std::string& op, int spatial, int64_t n, const std::array<int64_t, 3>& sp,
                                   int64_t c) {
  std::vector<int64_t> dims = {n};
  for (int i = 3 - spatial; i < 3; ++i) dims.push_back(sp[i]);
  dims.push_back(c);
  auto count = ShapeElements(dims);
  if (!count.ok()) return Invalid(op, std::string(count.status().message()));
  return TensorShape::FromDims(dims);
}

absl::Status CheckRank(const std::string& op, const Tensor& t, int rank, const char* what) {
  if (t.dims() != rank) {
    return Invalid(op, absl::StrCat(what, " must be ", rank, "-D, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// The in-bounds range [begin, end) of output position o's window along dim i (rate 1).
inline void WindowRange(const Geometry& g, int i, int64_t o, int64_t* begin, int64_t* end) {
  const int64_t start = o * g.stride[i] - g.pad[i];
  *begin = std::max<int64_t>(start, 0);
  *end = std::min(start + g.k[i], g.in[i]);
}

template <typename T>
bool Greater(T a, T b) {
  return Load(a) > Load(b);
}

// Calls fn(n, od, oh, ow, d0, d1, h0, h1, w0, w1) for every output position with its
// in-bounds window ranges.
template <typename Fn>
void ForEachWindow(const OpKernelContext* ctx, int64_t batch, const Geometry& g, int64_t cost, Fn&& fn) {
  const int64_t rows = batch * g.out[0] * g.out[1];
  ForEachCancellableSlice(ctx, rows, std::max<int64_t>(1, cost * g.out[2]), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t oh = row % g.out[1], od = row / g.out[1] % g.out[0], n = row / g.out[1] / g.out[0];
      int64_t d0, d1, h0, h1;
      WindowRange(g, 0, od, &d0, &d1);
      WindowRange(g, 1, oh, &h0, &h1);
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        int64_t w0, w1;
        WindowRange(g, 2, ow, &w0, &w1);
        fn(n, od, oh, ow, d0, d1, h0, h1, w0, w1);
      }
    }
  });
}

// ---- Pools ---------------------------------------------------------------------------------

// MaxPool3D and AvgPool3D: the max, or the mean of the in-bounds values, of each window.
template <typename T, bool kMax>
class Pool3DOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_ = kMax ? "MaxPool3D" : "AvgPool3D";
    SL_RETURN_IF_ERROR(ChannelsLast(ctx, op_, "NDHWC"));
    SL_ASSIGN_OR_RETURN(win_, ParseWindow(ctx, op_, 3, "ksize", nullptr));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_RETURN_IF_ERROR(CheckRank(op_, x, 5, "input"));
    const auto v = View5(x.shape(), 3);
    SL_ASSIGN_OR_RETURN(Geometry g, MakeGeometry(op_, win_, {v[1], v[2], v[3]}, win_.k));
    SL_ASSIGN_OR_RETURN(TensorShape ys, Shape5(op_, 3, v[0], g.out, v[4]));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, ys, &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (x.NumElements() == 0) return Invalid(op_, absl::StrCat("input ", x.shape().DebugString(), " is empty"));
    const int64_t c = v[4];
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    std::vector<Acc<T>> acc(c);
    ForEachWindow(ctx, v[0], g, c * g.k[0] * g.k[1] * g.k[2],
                  [&](int64_t n, int64_t od, int64_t oh, int64_t ow, int64_t d0, int64_t d1, int64_t h0, int64_t h1,
                      int64_t w0, int64_t w1) {
                    T* out = yd + (((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * c;
                    bool first = true;
                    for (int64_t d = d0; d < d1; ++d)
                      for (int64_t h = h0; h < h1; ++h)
                        for (int64_t w = w0; w < w1; ++w) {
                          const T* in = xd + (((n * v[1] + d) * v[2] + h) * v[3] + w) * c;
                          for (int64_t ch = 0; ch < c; ++ch) {
                            if constexpr (kMax) {
                              if (first || Greater(in[ch], out[ch])) out[ch] = in[ch];
                            } else {
                              acc[ch] = (first ? Acc<T>(0) : acc[ch]) + Load(in[ch]);
                            }
                          }
                          first = false;
                        }
                    if constexpr (!kMax) {
                      const Acc<T> count = static_cast<Acc<T>>((d1 - d0) * (h1 - h0) * (w1 - w0));
                      for (int64_t ch = 0; ch < c; ++ch) out[ch] = Store<T>(acc[ch] / count);
                    }
                  });
    return ctx->CheckCancelled();
  }

 private:
  std::string op_;
  Window win_;
};

// The int32 orig_input_shape of AvgPoolGrad / AvgPool3DGrad: rank values, non-negative.
absl::StatusOr<TensorShape> ShapeInput(const std::string& op, const Tensor& t, int rank, const char* what) {
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(t, rank, absl::StrCat(op, ": ", what)));
  auto count = ShapeElements(dims);
  if (!count.ok()) return Invalid(op, absl::StrCat(what, ": ", count.status().message()));
  return TensorShape::FromDims(dims);
}

absl::Status CheckGradShape(const std::string& op, const Tensor& t, const TensorShape& want, const char* what) {
  if (t.shape() != want) {
    return Invalid(op, absl::StrCat(what, " has shape ", t.shape().DebugString(), ", the pool's output is ",
                                    want.DebugString()));
  }
  return absl::OkStatus();
}

// MaxPoolGrad (2-D) and MaxPool3DGrad. Each window's gradient goes, in 2-D, to the first of its
// inputs holding the window's max (scan order d, h, w), as TensorFlow's CPU MaxPoolGrad does
// with its argmax; in 3-D to every input within 1e-5 of orig_output, as TensorFlow's CPU
// MaxPool3DGrad does.
template <typename T, int kSpatial>
class MaxPoolGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_ = kSpatial == 2 ? "MaxPoolGrad" : "MaxPool3DGrad";
    SL_RETURN_IF_ERROR(ChannelsLast(ctx, op_, kSpatial == 2 ? "NHWC" : "NDHWC"));
    SL_ASSIGN_OR_RETURN(win_, ParseWindow(ctx, op_, kSpatial, "ksize", nullptr));
    for (int i = 0; i < 3; ++i) {
      if (win_.explicit_pads[2 * i] >= win_.k[i] || win_.explicit_pads[2 * i + 1] >= win_.k[i]) {
        return Invalid(op_, "explicit_paddings must be smaller than ksize");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    SL_RETURN_IF_ERROR(CheckRank(op_, x, kSpatial + 2, "orig_input"));
    const auto v = View5(x.shape(), kSpatial);
    SL_ASSIGN_OR_RETURN(Geometry g, MakeGeometry(op_, win_, {v[1], v[2], v[3]}, win_.k));
    SL_ASSIGN_OR_RETURN(TensorShape ys, Shape5(op_, kSpatial, v[0], g.out, v[4]));
    SL_RETURN_IF_ERROR(CheckGradShape(op_, y, ys, "orig_output"));
    SL_RETURN_IF_ERROR(CheckGradShape(op_, dy, ys, "grad"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &dx));
    const int64_t c = v[4];
    std::vector<Acc<T>> sums(x.NumElements(), Acc<T>(0));
    if (dy.NumElements() > 0) {
      const T* xd = x.data<T>();
      const T* yd = y.data<T>();
      const T* gd = dy.data<T>();
      ForEachWindow(ctx, v[0], g, c * g.k[0] * g.k[1] * g.k[2],
                    [&](int64_t n, int64_t od, int64_t oh, int64_t ow, int64_t d0, int64_t d1, int64_t h0,
                        int64_t h1, int64_t w0, int64_t w1) {
                      const int64_t o = (((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * c;
                      auto at = [&](int64_t d, int64_t h, int64_t w) { return (((n * v[1] + d) * v[2] + h) * v[3] + w) * c; };
                      for (int64_t ch = 0; ch < c; ++ch) {
                        if constexpr (kSpatial == 2) {
                          int64_t best = -1;
                          for (int64_t d = d0; d < d1; ++d)
                            for (int64_t h = h0; h < h1; ++h)
                              for (int64_t w = w0; w < w1; ++w) {
                                const int64_t i = at(d, h, w) + ch;
                                if (best < 0 || Greater(xd[i], xd[best])) best = i;
                              }
                          if (best >= 0) sums[best] += Load(gd[o + ch]);
                        } else {
                          const float max = static_cast<float>(Load(yd[o + ch]));
                          for (int64_t d = d0; d < d1; ++d)
                            for (int64_t h = h0; h < h1; ++h)
                              for (int64_t w = w0; w < w1; ++w) {
                                const int64_t i = at(d, h, w) + ch;
                                if (std::abs(static_cast<float>(Load(xd[i])) - max) < 1e-5f) sums[i] += Load(gd[o + ch]);
                              }
                        }
                      }
                    });
    }
    T* out = dx->data<T>();
    for (int64_t i = 0; i < dx->NumElements(); ++i) out[i] = Store<T>(sums[i]);
    return ctx->CheckCancelled();
  }

 private:
  std::string op_;
  Window win_;
};

// AvgPoolGrad and AvgPool3DGrad: each window's gradient shared equally among its in-bounds
// inputs (the count the forward pool divided by).
template <typename T, int kSpatial>
class AvgPoolGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_ = kSpatial == 2 ? "AvgPoolGrad" : "AvgPool3DGrad";
    SL_RETURN_IF_ERROR(ChannelsLast(ctx, op_, kSpatial == 2 ? "NHWC" : "NDHWC"));
    SL_ASSIGN_OR_RETURN(win_, ParseWindow(ctx, op_, kSpatial, "ksize", nullptr));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(TensorShape xs, ShapeInput(op_, ctx->input(0), kSpatial + 2, "orig_input_shape"));
    const Tensor& dy = ctx->input(1);
    const auto v = View5(xs, kSpatial);
    SL_ASSIGN_OR_RETURN(Geometry g, MakeGeometry(op_, win_, {v[1], v[2], v[3]}, win_.k));
    SL_ASSIGN_OR_RETURN(TensorShape ys, Shape5(op_, kSpatial, v[0], g.out, v[4]));
    SL_RETURN_IF_ERROR(CheckGradShape(op_, dy, ys, "grad"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, xs, &dx));
    const int64_t c = v[4];
    std::vector<Acc<T>> sums(dx->NumElements(), Acc<T>(0));
    if (dy.NumElements() > 0) {
      const T* gd = dy.data<T>();
      ForEachWindow(ctx, v[0], g, c * g.k[0] * g.k[1] * g.k[2],
                    [&](int64_t n, int64_t od, int64_t oh, int64_t ow, int64_t d0, int64_t d1, int64_t h0,
                        int64_t h1, int64_t w0, int64_t w1) {
                      const int64_t count = (d1 - d0) * (h1 - h0) * (w1 - w0);
                      if (count <= 0) return;
                      const T* grad = gd + (((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * c;
                      for (int64_t d = d0; d < d1; ++d)
                        for (int64_t h = h0; h < h1; ++h)
                          for (int64_t w = w0; w < w1; ++w) {
                            Acc<T>* s = sums.data() + (((n * v[1] + d) * v[2] + h) * v[3] + w) * c;
                            for (int64_t ch = 0; ch < c; ++ch) s[ch] += Load(grad[ch]) / static_cast<Acc<T>>(count);
                          }
                    });
    }
    T* out = dx->data<T>();
    for (int64_t i = 0; i < dx->NumElements(); ++i) out[i] = Store<T>(sums[i]);
    return ctx->CheckCancelled();
  }

 private:
  std::string op_;
  Window win_;
};

// ---- Conv3D and its backprops --------------------------------------------------------------

// A Conv3D's operands checked against each other: x [N,D,H,W,C], filter [kd,kh,kw,C/G,O].
struct Conv3DDims {
  std::array<int64_t, 5> x;
  int64_t ci, co, group, cg, og;  // Filter in/out depth, groups, channels per group in and out.
  Geometry g;
};

absl::StatusOr<Conv3DDims> CheckConv3D(const std::string& op, const Window& win, const TensorShape& x,
                                       const TensorShape& f) {
  if (x.dims() != 5) return Invalid(op, absl::StrCat("input must be 5-D, got shape ", x.DebugString()));
  if (f.dims() != 5) return Invalid(op, absl::StrCat("filter must be 5-D, got shape ", f.DebugString()));
  Conv3DDims d;
  d.x = View5(x, 3);
  d.ci = f.dim_size(3);
  d.co = f.dim_size(4);
  if (d.ci <= 0 || d.x[4] % d.ci != 0) {
    return Invalid(op, absl::StrCat("input depth ", d.x[4], " must be a multiple of the filter's input depth ", d.ci,
                                    " (filter ", f.DebugString(), ")"));
  }
  d.group = d.x[4] / d.ci;
  d.cg = d.ci;
  if (d.group <= 0 || d.co % d.group != 0) {
    return Invalid(op, absl::StrCat("output depth ", d.co, " is not a multiple of the ", d.group, " groups"));
  }
  d.og = d.co / d.group;
  for (int i = 0; i < 3; ++i) {
    if (f.dim_size(i) <= 0) return Invalid(op, absl::StrCat("filter ", f.DebugString(), " is empty"));
  }
  SL_ASSIGN_OR_RETURN(d.g, MakeGeometry(op, win, {d.x[1], d.x[2], d.x[3]}, {f.dim_size(0), f.dim_size(1), f.dim_size(2)}));
  return d;
}

// Calls fn(x_offset, f_offset) for each in-bounds tap of output (n, od, oh, ow): x_offset the
// tap's input pixel (times channels), f_offset its filter slice ([ci, co] start).
template <typename Fn>
void ForEachTap(const Conv3DDims& d, int64_t n, int64_t od, int64_t oh, int64_t ow, Fn&& fn) {
  const Geometry& g = d.g;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.rate[0];
    if (id < 0 || id >= g.in[0]) continue;
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.rate[1];
      if (ih < 0 || ih >= g.in[1]) continue;
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.rate[2];
        if (iw < 0 || iw >= g.in[2]) continue;
        fn((((n * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw) * d.x[4], ((kd * g.k[1] + kh) * g.k[2] + kw) * d.ci * d.co);
      }
    }
  }
}

// Calls fn(y, x, f) for every output position, in-bounds tap, group and input channel of a 3-D
// convolution: y is the offset of the group's first output channel at that position, x the
// offset of the input value, f the offset of its filter row over the group's output channels
// (d.og values, consecutive as y's are). The forward pass and both backprops are this loop.
template <typename Fn>
void ForEachConvPair(const OpKernelContext* ctx, const Conv3DDims& d, Fn&& fn) {
  ForEachWindow(ctx, d.x[0], d.g, d.co * d.ci * d.g.k[0] * d.g.k[1] * d.g.k[2],
                [&](int64_t n, int64_t od, int64_t oh, int64_t ow, int64_t, int64_t, int64_t, int64_t, int64_t,
                    int64_t) {
                  const int64_t y = (((n * d.g.out[0] + od) * d.g.out[1] + oh) * d.g.out[2] + ow) * d.co;
                  ForEachTap(d, n, od, oh, ow, [&](int64_t xo, int64_t fo) {
                    for (int64_t gi = 0; gi < d.group; ++gi) {
                      for (int64_t c = 0; c < d.cg; ++c) fn(y + gi * d.og, xo + gi * d.cg + c, fo + c * d.co + gi * d.og);
                    }
                  });
                });
}

absl::Status ParseConv3D(OpKernelConstruction* ctx, const std::string& op, Window* win) {
  SL_RETURN_IF_ERROR(ChannelsLast(ctx, op, "NDHWC"));
  SL_ASSIGN_OR_RETURN(*win, ParseWindow(ctx, op, 3, nullptr, "dilations"));
  if (win->padding == "EXPLICIT") return Invalid(op, "padding must be SAME or VALID");
  return absl::OkStatus();
}

// Converts a tensor of T to its compute type once, so the inner loops read plain floats.
template <typename T>
std::vector<Acc<T>> Loaded(const Tensor& t) {
  std::vector<Acc<T>> v(t.NumElements());
  const T* s = t.data<T>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = Load(s[i]);
  return v;
}

template <typename T>
class Conv3DOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ParseConv3D(ctx, "Conv3D", &win_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& f = ctx->input(1);
    SL_ASSIGN_OR_RETURN(Conv3DDims d, CheckConv3D("Conv3D", win_, x.shape(), f.shape()));
    SL_ASSIGN_OR_RETURN(TensorShape ys, Shape5("Conv3D", 3, d.x[0], d.g.out, d.co));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, ys, &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    const std::vector<Acc<T>> xv = Loaded<T>(x), fv = Loaded<T>(f);
    std::vector<Acc<T>> sums(y->NumElements(), Acc<T>(0));
    ForEachConvPair(ctx, d, [&](int64_t yo, int64_t xo, int64_t fo) {
      const Acc<T> xval = xv[xo];
      for (int64_t o = 0; o < d.og; ++o) sums[yo + o] += xval * fv[fo + o];
    });
    T* yd = y->data<T>();
    for (int64_t i = 0; i < y->NumElements(); ++i) yd[i] = Store<T>(sums[i]);
    return ctx->CheckCancelled();
  }

 private:
  Window win_;
};

absl::Status CheckConvOutBackprop(const std::string& op, const Tensor& dy, const Conv3DDims& d) {
  SL_ASSIGN_OR_RETURN(TensorShape want, Shape5(op, 3, d.x[0], d.g.out, d.co));
  if (dy.shape() != want) {
    return Invalid(op, absl::StrCat("out_backprop has shape ", dy.shape().DebugString(), ", the convolution's output is ",
                                    want.DebugString()));
  }
  return absl::OkStatus();
}

// Conv3DBackpropInputV2: each output's gradient spread back over the inputs of its taps.
template <typename T>
class Conv3DBackpropInputOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ParseConv3D(ctx, kOp, &win_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(TensorShape xs, ShapeInput(kOp, ctx->input(0), 5, "input_sizes"));
    const Tensor& f = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    SL_ASSIGN_OR_RETURN(Conv3DDims d, CheckConv3D(kOp, win_, xs, f.shape()));
    SL_RETURN_IF_ERROR(CheckConvOutBackprop(kOp, dy, d));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, xs, &dx));
    std::vector<Acc<T>> sums(dx->NumElements(), Acc<T>(0));
    if (dy.NumElements() > 0) {
      const std::vector<Acc<T>> gv = Loaded<T>(dy), fv = Loaded<T>(f);
      ForEachConvPair(ctx, d, [&](int64_t yo, int64_t xo, int64_t fo) {
        Acc<T> sum = 0;
        for (int64_t o = 0; o < d.og; ++o) sum += fv[fo + o] * gv[yo + o];
        sums[xo] += sum;
      });
    }
    T* out = dx->data<T>();
    for (int64_t i = 0; i < dx->NumElements(); ++i) out[i] = Store<T>(sums[i]);
    return ctx->CheckCancelled();
  }

 private:
  static constexpr char kOp[] = "Conv3DBackpropInputV2";
  Window win_;
};

// Conv3DBackpropFilterV2: each tap's filter gradient, summed over every output it touched.
template <typename T>
class Conv3DBackpropFilterOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ParseConv3D(ctx, kOp, &win_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(TensorShape fs, ShapeInput(kOp, ctx->input(1), 5, "filter_sizes"));
    const Tensor& dy = ctx->input(2);
    SL_ASSIGN_OR_RETURN(Conv3DDims d, CheckConv3D(kOp, win_, x.shape(), fs));
    SL_RETURN_IF_ERROR(CheckConvOutBackprop(kOp, dy, d));
    Tensor* df;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, fs, &df));
    std::vector<Acc<T>> sums(df->NumElements(), Acc<T>(0));
    if (dy.NumElements() > 0) {
      const std::vector<Acc<T>> gv = Loaded<T>(dy), xv = Loaded<T>(x);
      ForEachConvPair(ctx, d, [&](int64_t yo, int64_t xo, int64_t fo) {
        const Acc<T> xval = xv[xo];
        for (int64_t o = 0; o < d.og; ++o) sums[fo + o] += xval * gv[yo + o];
      });
    }
    T* out = df->data<T>();
    for (int64_t i = 0; i < df->NumElements(); ++i) out[i] = Store<T>(sums[i]);
    return ctx->CheckCancelled();
  }

 private:
  static constexpr char kOp[] = "Conv3DBackpropFilterV2";
  Window win_;
};

// ---- LRN -----------------------------------------------------------------------------------

struct LrnAttrs {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;

  absl::Status Parse(OpKernelConstruction* ctx, const char* op) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("depth_radius", &radius));
    SL_RETURN_IF_ERROR(ctx->GetAttr("bias", &bias));
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
    SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta));
    // TensorFlow bounds it by int32 too.
    if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
      return Invalid(op, absl::StrCat("depth_radius must be in [0, 2^31), got ", radius));
    }
    return absl::OkStatus();
  }
  // The channels [begin, end) within the radius of channel c of `depth`.
  void Range(int64_t c, int64_t depth, int64_t* begin, int64_t* end) const {
    *begin = std::max<int64_t>(0, c - radius);
    *end = c + 1 + std::min(radius, depth - 1 - c);
  }
};

// LRN: input / (bias + alpha * sqr_sum) ** beta per channel, over 4-D NHWC input.
template <typename T>
class LrnOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return attrs_.Parse(ctx, "LRN"); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_RETURN_IF_ERROR(CheckRank("LRN", x, 4, "input"));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const int64_t depth = x.dim_size(3);
    if (y->NumElements() == 0) return absl::OkStatus();
    const int64_t pixels = x.NumElements() / depth;
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    ForEachCancellableSlice(ctx, pixels, depth * 4, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* in = xd + p * depth;
        for (int64_t c = 0; c < depth; ++c) {
          int64_t b, e;
          attrs_.Range(c, depth, &b, &e);
          float sq = 0;
          for (int64_t k = b; k < e; ++k) sq += static_cast<float>(Load(in[k])) * static_cast<float>(Load(in[k]));
          const float v = static_cast<float>(Load(in[c]));
          yd[p * depth + c] = T(v * std::pow(attrs_.bias + attrs_.alpha * sq, -attrs_.beta));
        }
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  LrnAttrs attrs_;
};

// LRNGrad(input_grads dy, input_image x, output_image y): with n_j = bias + alpha * sqr_sum_j,
//   dx_k = sum over j within the radius of k of
//          dy_j * ([j == k] n_j^-beta - 2 alpha beta x_k y_j / n_j),
// the derivative of y_j = x_j n_j^-beta, computed as TensorFlow's CPU kernel does.
template <typename T>
class LrnGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return attrs_.Parse(ctx, "LRNGrad"); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& y = ctx->input(2);
    SL_RETURN_IF_ERROR(CheckRank("LRNGrad", dy, 4, "input_grads"));
    if (x.shape() != dy.shape() || y.shape() != dy.shape()) {
      return Invalid("LRNGrad", absl::StrCat("input_grads ", dy.shape().DebugString(), ", input_image ",
                                             x.shape().DebugString(), " and output_image ", y.shape().DebugString(),
                                             " must have the same shape"));
    }
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &dx));
    if (dx->NumElements() == 0) return absl::OkStatus();
    const int64_t depth = x.dim_size(3), pixels = x.NumElements() / depth;
    const T *gd = dy.data<T>(), *xd = x.data<T>(), *yd = y.data<T>();
    T* out = dx->data<T>();
    std::vector<float> acc(depth);
    ForEachCancellableSlice(ctx, pixels, depth * 8, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t base = p * depth;
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < depth; ++j) {
          int64_t b, e;
          attrs_.Range(j, depth, &b, &e);
          float norm = 0;
          for (int64_t k = b; k < e; ++k) {
            const float v = static_cast<float>(Load(xd[base + k]));
            norm += v * v;
          }
          norm = attrs_.alpha * norm + attrs_.bias;
          const float g = static_cast<float>(Load(gd[base + j])), yj = static_cast<float>(Load(yd[base + j]));
          for (int64_t k = b; k < e; ++k) {
            float d = -2.0f * attrs_.alpha * attrs_.beta * static_cast<float>(Load(xd[base + k])) * yj / norm;
            if (k == j) d += std::pow(norm, -attrs_.beta);
            acc[k] += d * g;
          }
        }
        for (int64_t k = 0; k < depth; ++k) out[base + k] = T(acc[k]);
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  LrnAttrs attrs_;
};

// ---- Dilation2D ----------------------------------------------------------------------------

struct Dilation {
  std::array<int64_t, 5> x;  // [N, 1, H, W, C]
  int64_t fh, fw;
  Geometry g;
};

absl::StatusOr<Dilation> CheckDilation(const std::string& op, const Window& win, const Tensor& x, const Tensor& f) {
  SL_RETURN_IF_ERROR(CheckRank(op, x, 4, "input"));
  SL_RETURN_IF_ERROR(CheckRank(op, f, 3, "filter"));
  if (f.dim_size(2) != x.dim_size(3)) {
    return Invalid(op, absl::StrCat("input and filter must have the same depth: ", x.dim_size(3), " vs ", f.dim_size(2)));
  }
  if (f.dim_size(0) <= 0 || f.dim_size(1) <= 0) return Invalid(op, absl::StrCat("filter ", f.shape().DebugString(), " is empty"));
  Dilation d;
  d.x = View5(x.shape(), 2);
  d.fh = f.dim_size(0);
  d.fw = f.dim_size(1);
  SL_ASSIGN_OR_RETURN(d.g, MakeGeometry(op, win, {1, d.x[2], d.x[3]}, {1, d.fh, d.fw}));
  return d;
}

// For output (n, oh, ow) and channel c: the max of input + filter over the in-bounds taps and
// the winning tap (input offset, filter offset), the first in scan order on ties. A window
// with no in-bounds tap gives T's lowest value and the tap TensorFlow's backprops fall back on.
template <typename T>
struct DilationMax {
  Acc<T> value;
  int64_t x_at, f_at;
};

// T's lowest value, in its compute type.
template <typename T>
Acc<T> Lowest() {
  if constexpr (std::is_same_v<T, half>) {
    return -65504.0f;
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return -3.38953139e38f;  // -(2 - 2^-7) * 2^127.
  } else {
    return static_cast<Acc<T>>(std::numeric_limits<T>::lowest());
  }
}

template <typename T>
DilationMax<T> DilationAt(const Dilation& d, const T* xd, const T* fd, int64_t n, int64_t oh, int64_t ow, int64_t c) {
  const Geometry& g = d.g;
  const int64_t depth = d.x[4];
  const int64_t h_beg = oh * g.stride[1] - g.pad[1], w_beg = ow * g.stride[2] - g.pad[2];
  DilationMax<T> m{Lowest<T>(), 0, 0};
  int64_t best_h = std::max<int64_t>(h_beg, 0), best_w = std::max<int64_t>(w_beg, 0), best_fh = 0, best_fw = 0;
  for (int64_t i = 0; i < d.fh; ++i) {
    const int64_t h = h_beg + i * g.rate[1];
    if (h < 0 || h >= d.x[2]) continue;
    for (int64_t j = 0; j < d.fw; ++j) {
      const int64_t w = w_beg + j * g.rate[2];
      if (w < 0 || w >= d.x[3]) continue;
      const Acc<T> v = Load(xd[((n * d.x[2] + h) * d.x[3] + w) * depth + c]) + Load(fd[(i * d.fw + j) * depth + c]);
      if (v > m.value) {
        m.value = v;
        best_h = h;
        best_w = w;
        best_fh = i;
        best_fw = j;
      }
    }
  }
  best_h = std::min(best_h, d.x[2] - 1);
  best_w = std::min(best_w, d.x[3] - 1);
  m.x_at = ((n * d.x[2] + best_h) * d.x[3] + best_w) * depth + c;
  m.f_at = (best_fh * d.fw + best_fw) * depth + c;
  return m;
}

// Dilation2D (kMode 0), Dilation2DBackpropInput (1) and Dilation2DBackpropFilter (2).
template <typename T, int kMode>
class Dilation2DOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_ = kMode == 0 ? "Dilation2D" : kMode == 1 ? "Dilation2DBackpropInput" : "Dilation2DBackpropFilter";
    SL_ASSIGN_OR_RETURN(win_, ParseWindow(ctx, op_, 2, nullptr, "rates"));
    if (win_.padding == "EXPLICIT") return Invalid(op_, "padding must be SAME or VALID");
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& f = ctx->input(1);
    SL_ASSIGN_OR_RETURN(Dilation d, CheckDilation(op_, win_, x, f));
    SL_ASSIGN_OR_RETURN(TensorShape ys, Shape5(op_, 2, d.x[0], d.g.out, d.x[4]));
    const T* xd = x.data<T>();
    const T* fd = f.data<T>();
    const int64_t depth = d.x[4];
    if constexpr (kMode == 0) {
      Tensor* y;
      SL_RETURN_IF_ERROR(ctx->allocate_output(0, ys, &y));
      if (y->NumElements() == 0) return absl::OkStatus();
      T* yd = y->data<T>();
      ForEachWindow(ctx, d.x[0], d.g, depth * d.fh * d.fw,
                    [&](int64_t n, int64_t, int64_t oh, int64_t ow, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) {
                      for (int64_t c = 0; c < depth; ++c) {
                        yd[((n * d.g.out[1] + oh) * d.g.out[2] + ow) * depth + c] =
                            Store<T>(DilationAt(d, xd, fd, n, oh, ow, c).value);
                      }
                    });
    } else {
      const Tensor& dy = ctx->input(2);
      if (dy.shape() != ys) {
        return Invalid(op_, absl::StrCat("out_backprop has shape ", dy.shape().DebugString(), ", the dilation's output is ",
                                         ys.DebugString()));
      }
      const Tensor& like = kMode == 1 ? x : f;
      Tensor* out;
      SL_RETURN_IF_ERROR(ctx->allocate_output(0, like.shape(), &out));
      std::vector<Acc<T>> sums(like.NumElements(), Acc<T>(0));
      const T* gd = dy.data<T>();
      if (dy.NumElements() > 0) {
        ForEachWindow(ctx, d.x[0], d.g, depth * d.fh * d.fw,
                      [&](int64_t n, int64_t, int64_t oh, int64_t ow, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t) {
                        for (int64_t c = 0; c < depth; ++c) {
                          const DilationMax<T> m = DilationAt(d, xd, fd, n, oh, ow, c);
                          sums[kMode == 1 ? m.x_at : m.f_at] += Load(gd[((n * d.g.out[1] + oh) * d.g.out[2] + ow) * depth + c]);
                        }
                      });
      }
      T* od = out->data<T>();
      for (int64_t i = 0; i < out->NumElements(); ++i) od[i] = Store<T>(sums[i]);
    }
    return ctx->CheckCancelled();
  }

 private:
  std::string op_;
  Window win_;
};

// ---- CropAndResize -------------------------------------------------------------------------

// Crops of image[box_ind[b]] at the normalized box [y1, x1, y2, x2], sampled at crop_height x
// crop_width points spread evenly from y1 to y2 and x1 to x2 (a single point: the middle);
// points outside the image are extrapolation_value. As TensorFlow computes it, in float.
template <typename T>
class CropAndResizeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("method", &method_));
    if (method_ != "bilinear" && method_ != "nearest") {
      return Invalid(kOp, absl::StrCat("method must be 'bilinear' or 'nearest', got '", method_, "'"));
    }
    return ctx->GetAttr("extrapolation_value", &extrapolation_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& image = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    const Tensor& box_ind = ctx->input(2);
    SL_RETURN_IF_ERROR(CheckRank(kOp, image, 4, "image"));
    const int64_t batch = image.dim_size(0), ih = image.dim_size(1), iw = image.dim_size(2), depth = image.dim_size(3);
    if (ih <= 0 || iw <= 0) return Invalid(kOp, absl::StrCat("image dimensions must be positive, got ", image.shape().DebugString()));
    if (boxes.dims() != 2 || boxes.dim_size(1) != 4) {
      return Invalid(kOp, absl::StrCat("boxes must be [num_boxes, 4], got shape ", boxes.shape().DebugString()));
    }
    const int64_t num_boxes = boxes.dim_size(0);
    if (box_ind.dims() != 1 || box_ind.dim_size(0) != num_boxes) {
      return Invalid(kOp, absl::StrCat("box_ind must be a vector of ", num_boxes, " values, got shape ",
                                       box_ind.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> crop, IntVector(ctx->input(3), 2, "CropAndResize: crop_size"));
    if (crop[0] <= 0 || crop[1] <= 0) {
      return Invalid(kOp, absl::StrCat("crop dimensions must be positive, got [", crop[0], ",", crop[1], "]"));
    }
    const int32_t* ind = box_ind.data<int32_t>();
    for (int64_t b = 0; b < num_boxes; ++b) {
      if (ind[b] < 0 || ind[b] >= batch) {
        return Invalid(kOp, absl::StrCat("box_ind[", b, "] = ", ind[b], " is not in [0, ", batch, ")"));
      }
    }
    auto count = ShapeElements({num_boxes, crop[0], crop[1], depth});
    if (!count.ok()) return Invalid(kOp, std::string(count.status().message()));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({num_boxes, crop[0], crop[1], depth}), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const float* bd = boxes.data<float>();
    const T* img = image.data<T>();
    float* od = out->data<float>();
    const int64_t ch = crop[0], cw = crop[1];
    auto pixel = [&](int64_t b, int64_t y, int64_t x, int64_t c) {
      return static_cast<float>(Load(img[((b * ih + y) * iw + x) * depth + c]));
    };
    ForEachCancellableSlice(ctx, num_boxes * ch, cw * depth * 4, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / ch, y = row % ch;
        const float y1 = bd[b * 4], x1 = bd[b * 4 + 1], y2 = bd[b * 4 + 2], x2 = bd[b * 4 + 3];
        const int64_t src = ind[b];
        float* dst = od + row * cw * depth;
        const float hs = ch > 1 ? (y2 - y1) * static_cast<float>(ih - 1) / static_cast<float>(ch - 1) : 0.0f;
        const float ws = cw > 1 ? (x2 - x1) * static_cast<float>(iw - 1) / static_cast<float>(cw - 1) : 0.0f;
        const float in_y = ch > 1 ? y1 * static_cast<float>(ih - 1) + static_cast<float>(y) * hs
                                  : static_cast<float>(0.5 * (y1 + y2) * static_cast<double>(ih - 1));
        // The negated test also sends a NaN coordinate to the extrapolation value.
        if (!(in_y >= 0 && in_y <= static_cast<float>(ih - 1))) {
          std::fill_n(dst, cw * depth, extrapolation_);
          continue;
        }
        for (int64_t x = 0; x < cw; ++x) {
          float* px = dst + x * depth;
          const float in_x = cw > 1 ? x1 * static_cast<float>(iw - 1) + static_cast<float>(x) * ws
                                    : static_cast<float>(0.5 * (x1 + x2) * static_cast<double>(iw - 1));
          if (!(in_x >= 0 && in_x <= static_cast<float>(iw - 1))) {
            std::fill_n(px, depth, extrapolation_);
            continue;
          }
          if (method_ == "nearest") {
            const int64_t ny = static_cast<int64_t>(std::round(in_y)), nx = static_cast<int64_t>(std::round(in_x));
            for (int64_t c = 0; c < depth; ++c) px[c] = pixel(src, ny, nx, c);
            continue;
          }
          const int64_t top = static_cast<int64_t>(std::floor(in_y)), bottom = static_cast<int64_t>(std::ceil(in_y));
          const int64_t left = static_cast<int64_t>(std::floor(in_x)), right = static_cast<int64_t>(std::ceil(in_x));
          const float y_lerp = in_y - static_cast<float>(top), x_lerp = in_x - static_cast<float>(left);
          for (int64_t c = 0; c < depth; ++c) {
            const float tl = pixel(src, top, left, c), tr = pixel(src, top, right, c);
            const float bl = pixel(src, bottom, left, c), br = pixel(src, bottom, right, c);
            const float t = tl + (tr - tl) * x_lerp, bo = bl + (br - bl) * x_lerp;
            px[c] = t + (bo - t) * y_lerp;
          }
        }
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  static constexpr char kOp[] = "CropAndResize";
  std::string method_;
  float extrapolation_ = 0;
};

// ---- NonMaxSuppressionV3/4/5 ---------------------------------------------------------------

// kVersion 3, 4 or 5: greedy NMS over boxes [num_boxes, 4] (either diagonal) by scores, the
// selection of kernels/nms_util.h with TensorFlow's rules (an IoU equal to iou_threshold
// suppresses; only scores above score_threshold). V4 and V5 can pad to max_output_size and
// count the valid outputs; V5 adds Soft-NMS and the selected scores.
template <typename T, typename TThreshold, int kVersion>
class NonMaxSuppressionOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_ = absl::StrCat("NonMaxSuppressionV", kVersion);
    if (kVersion >= 4) SL_RETURN_IF_ERROR(ctx->GetAttr("pad_to_max_output_size", &pad_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    if (boxes.dims() != 2 || boxes.dim_size(1) != 4) {
      return Invalid(op_, absl::StrCat("boxes must be [num_boxes, 4], got shape ", boxes.shape().DebugString()));
    }
    const int64_t n = boxes.dim_size(0);
    if (scores.dims() != 1 || scores.dim_size(0) != n) {
      return Invalid(op_, absl::StrCat("scores must be a vector of ", n, " values (one per box), got shape ",
                                       scores.shape().DebugString()));
    }
    for (int i = 2; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).dims() != 0) {
        return Invalid(op_, absl::StrCat("input ", i, " must be a scalar, got shape ", ctx->input(i).shape().DebugString()));
      }
    }
    const int32_t max_output = ctx->input(2).data<int32_t>()[0];
    if (max_output < 0) return Invalid(op_, absl::StrCat("max_output_size must be non-negative, got ", max_output));
    NmsOptions o;
    o.max_output = max_output;
    o.iou_threshold = static_cast<float>(ctx->input(3).data<TThreshold>()[0]);
    if (!(o.iou_threshold >= 0.0f && o.iou_threshold <= 1.0f)) {
      return Invalid(op_, absl::StrCat("iou_threshold must be in [0, 1], got ", o.iou_threshold));
    }
    o.score_threshold = static_cast<float>(ctx->input(4).data<TThreshold>()[0]);
    if (kVersion == 5) {
      o.soft_nms_sigma = static_cast<float>(ctx->input(5).data<TThreshold>()[0]);
      if (!(o.soft_nms_sigma >= 0.0f)) {
        return Invalid(op_, absl::StrCat("soft_nms_sigma must be non-negative, got ", o.soft_nms_sigma));
      }
    }
    o.suppress_at_threshold = true;
    std::vector<NmsCorners> corners(n);
    std::vector<float> s(n);
    const T* bd = boxes.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const float b[4] = {static_cast<float>(bd[i * 4]), static_cast<float>(bd[i * 4 + 1]),
                          static_cast<float>(bd[i * 4 + 2]), static_cast<float>(bd[i * 4 + 3])};
      corners[i] = NmsToCorners(b, false);
      s[i] = static_cast<float>(scores.data<T>()[i]);
    }
    const NmsResult r = GreedyNms(corners, s.data(), o);
    const int64_t valid = static_cast<int64_t>(r.indices.size());
    const int64_t len = pad_ ? max_output : valid;
    Tensor* idx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({len}), &idx));
    int out = 1;
    Tensor* sel_scores = nullptr;
    if (kVersion == 5) SL_RETURN_IF_ERROR(ctx->allocate_output(out++, TensorShape({len}), &sel_scores));
    for (int64_t i = 0; i < len; ++i) {
      idx->data<int32_t>()[i] = i < valid ? static_cast<int32_t>(r.indices[i]) : 0;
      if (sel_scores != nullptr) sel_scores->data<T>()[i] = T(i < valid ? r.scores[i] : 0.0f);
    }
    if (kVersion >= 4) {
      Tensor* v;
      SL_RETURN_IF_ERROR(ctx->allocate_output(out, TensorShape({}), &v));
      v->data<int32_t>()[0] = static_cast<int32_t>(valid);
    }
    return absl::OkStatus();
  }

 private:
  std::string op_;
  bool pad_ = false;
};

// ---- Multinomial ---------------------------------------------------------------------------

// Multinomial: num_samples draws per row of logits from softmax(logits), as TensorFlow's CPU
// kernel draws them: a Philox stream seeded by (seed, seed2) (both 0: at random) that each run
// reserves batch * ceil4(num_samples) * 256 blocks of, and per sample a double in [0, 1)
// scaled by the row's sum of exp(logit - max) over the finite logits, found in the running
// sums. (TensorFlow splits big batches across threads, each skipping ahead in the stream;
// rows here are drawn in one stream, which is TensorFlow's draw whenever it does not split.)
template <typename T, typename Out>
class MultinomialOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t seed, seed2;
    SL_RETURN_IF_ERROR(ctx->GetAttr("seed", &seed));
    SL_RETURN_IF_ERROR(ctx->GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = static_cast<int64_t>((uint64_t{rd()} << 32) | rd());
      seed2 = static_cast<int64_t>((uint64_t{rd()} << 32) | rd());
    }
    gen_ = std::make_unique<Philox4x32>(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& logits = ctx->input(0);
    if (logits.dims() != 2) return Invalid(kOp, absl::StrCat("logits must be a matrix, got shape ", logits.shape().DebugString()));
    if (ctx->input(1).dims() != 0) {
      return Invalid(kOp, absl::StrCat("num_samples must be a scalar, got shape ", ctx->input(1).shape().DebugString()));
    }
    const int64_t num_samples = ctx->input(1).data<int32_t>()[0];
    if (num_samples < 0) return Invalid(kOp, absl::StrCat("num_samples must be non-negative, got ", num_samples));
    const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
    if (classes <= 0) return Invalid(kOp, absl::StrCat("num_classes must be positive, got ", classes));
    if (batch > std::numeric_limits<int32_t>::max() || classes > std::numeric_limits<int32_t>::max()) {
      return Invalid(kOp, absl::StrCat("logits ", logits.shape().DebugString(), " has a dimension beyond int32"));
    }
    auto count = ShapeElements({batch, num_samples});
    if (!count.ok()) return Invalid(kOp, std::string(count.status().message()));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({batch, num_samples}), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    // batch * ceil4(num_samples) * 256 < 2^31 * 2^31 * 2^8: no overflow in uint64.
    const uint64_t reserve = static_cast<uint64_t>(batch) * static_cast<uint64_t>((num_samples + 3) / 4 * 4) * 256;
    Philox4x32 local = [&] {
      absl::MutexLock lock(&mu_);
      Philox4x32 g = *gen_;
      gen_->Skip(reserve);
      return g;
    }();
    PhiloxWords words(local);
    const T* ld = logits.data<T>();
    Out* od = out->data<Out>();
    std::vector<double> cdf(classes);
    for (int64_t b = 0; b < batch; ++b) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
      const T* row = ld + b * classes;
      double max = std::numeric_limits<double>::lowest();
      for (int64_t j = 0; j < classes; ++j) {
        const double v = static_cast<double>(Load(row[j]));
        if (std::isfinite(v)) max = std::max(max, v);
      }
      double total = 0;
      for (int64_t j = 0; j < classes; ++j) {
        const double v = static_cast<double>(Load(row[j]));
        if (std::isfinite(v)) total += std::exp(v - max);
        cdf[j] = total;
      }
      for (int64_t s = 0; s < num_samples; ++s) {
        const double target = words.NextDouble() * total;
        od[b * num_samples + s] = static_cast<Out>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
      }
    }
    return absl::OkStatus();
  }

 private:
  static constexpr char kOp[] = "Multinomial";
  mutable absl::Mutex mu_;
  std::unique_ptr<Philox4x32> gen_ ABSL_PT_GUARDED_BY(mu_);
};

// ---- Registration --------------------------------------------------------------------------

template <typename T>
using MaxPool3DOp = Pool3DOp<T, true>;
template <typename T>
using AvgPool3DOp = Pool3DOp<T, false>;
template <typename T>
using MaxPoolGrad2DOp = MaxPoolGradOp<T, 2>;
template <typename T>
using AvgPoolGrad2DOp = AvgPoolGradOp<T, 2>;
template <typename T>
using AvgPoolGrad3DOp = AvgPoolGradOp<T, 3>;
template <typename T>
using Dilation2DForwardOp = Dilation2DOp<T, 0>;
template <typename T>
using Dilation2DBackpropInputOp = Dilation2DOp<T, 1>;
template <typename T>
using Dilation2DBackpropFilterOp = Dilation2DOp<T, 2>;

using HalfFloat = TypeList<half, bfloat16, float>;
using RealTypes = TypeList<half, bfloat16, float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t>;
using ImageTypes = TypeList<uint8_t, uint16_t, int8_t, int16_t, int32_t, int64_t, half, bfloat16, float, double>;

template <typename T>
void RegisterMaxPool3DGrad() {
  KernelRegistry::Global()->Register(
      Name("MaxPool3DGrad").Device(DEVICE_CPU).template TypeConstraint<T>("T").template TypeConstraint<T>("TInput").Build(),
      absl::StrCat("MaxPool3DGrad<", DataTypeString(DataTypeToEnum<T>::value), ">"),
      []() -> std::unique_ptr<OpKernel> { return std::make_unique<MaxPoolGradOp<T, 3>>(); });
}

template <typename T, typename TThreshold, int kVersion>
void RegisterNms(const char* op, bool with_threshold_type) {
  auto b = Name(op).Device(DEVICE_CPU).TypeConstraint<T>("T");
  if (with_threshold_type) b = b.template TypeConstraint<TThreshold>("T_threshold");
  KernelRegistry::Global()->Register(
      b.Build(), absl::StrCat(op, "<", DataTypeString(DataTypeToEnum<T>::value), ",",
                                 DataTypeString(DataTypeToEnum<TThreshold>::value), ">"),
      []() -> std::unique_ptr<OpKernel> { return std::make_unique<NonMaxSuppressionOp<T, TThreshold, kVersion>>(); });
}

template <typename Out>
void RegisterMultinomial() {
  auto one = [](auto t) {
    using T = typename decltype(t)::type;
    KernelRegistry::Global()->Register(
        Name("Multinomial").Device(DEVICE_CPU).template TypeConstraint<T>("T").template TypeConstraint<Out>("output_dtype").Build(),
        absl::StrCat("Multinomial<", DataTypeString(DataTypeToEnum<T>::value), ",",
                     DataTypeString(DataTypeToEnum<Out>::value), ">"),
        []() -> std::unique_ptr<OpKernel> { return std::make_unique<MultinomialOp<T, Out>>(); });
  };
  one(TypeTag<half>{});
  one(TypeTag<bfloat16>{});
  one(TypeTag<float>{});
  one(TypeTag<double>{});
}

const bool registered = [] {
  RegisterCpuKernelTemplate<MaxPool3DOp>("MaxPool3D", HalfFloat{});
  RegisterCpuKernelTemplate<AvgPool3DOp>("AvgPool3D", FloatTypes{});
  RegisterCpuKernelTemplate<MaxPoolGrad2DOp>("MaxPoolGrad", RealTypes{});
  RegisterCpuKernelTemplate<AvgPoolGrad2DOp>("AvgPoolGrad", FloatTypes{});
  RegisterCpuKernelTemplate<AvgPoolGrad3DOp>("AvgPool3DGrad", FloatTypes{});
  RegisterMaxPool3DGrad<float>();
  RegisterMaxPool3DGrad<half>();
  RegisterMaxPool3DGrad<bfloat16>();
  RegisterCpuKernelTemplate<Conv3DOp>("Conv3D", FloatTypes{});
  RegisterCpuKernelTemplate<Conv3DBackpropInputOp>("Conv3DBackpropInputV2", FloatTypes{});
  RegisterCpuKernelTemplate<Conv3DBackpropFilterOp>("Conv3DBackpropFilterV2", FloatTypes{});
  RegisterCpuKernelTemplate<LrnOp>("LRN", HalfFloat{});
  RegisterCpuKernelTemplate<LrnGradOp>("LRNGrad", HalfFloat{});
  RegisterCpuKernelTemplate<Dilation2DForwardOp>("Dilation2D", RealTypes{});
  RegisterCpuKernelTemplate<Dilation2DBackpropInputOp>("Dilation2DBackpropInput", RealTypes{});
  RegisterCpuKernelTemplate<Dilation2DBackpropFilterOp>("Dilation2DBackpropFilter", RealTypes{});
  RegisterCpuKernelTemplate<CropAndResizeOp>("CropAndResize", ImageTypes{});
  RegisterNms<float, float, 3>("NonMaxSuppressionV3", true);
  RegisterNms<float, half, 3>("NonMaxSuppressionV3", true);
  RegisterNms<half, float, 3>("NonMaxSuppressionV3", true);
  RegisterNms<half, half, 3>("NonMaxSuppressionV3", true);
  RegisterNms<float, float, 4>("NonMaxSuppressionV4", true);
  RegisterNms<float, half, 4>("NonMaxSuppressionV4", true);
  RegisterNms<half, float, 4>("NonMaxSuppressionV4", true);
  RegisterNms<half, half, 4>("NonMaxSuppressionV4", true);
  RegisterNms<float, float, 5>("NonMaxSuppressionV5", false);
  RegisterNms<half, half, 5>("NonMaxSuppressionV5", false);
  RegisterMultinomial<int32_t>();
  RegisterMultinomial<int64_t>();
  return true;
}();

}  // namespace
}  // namespace sluice
