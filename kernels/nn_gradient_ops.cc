// Kernels of the backward ops of convolution, pooling and BatchNormalization
// (ops/nn_gradient_ops.cc). Window geometry is the forward kernels' (conv_util.h), so each
// gradient sees exactly the windows its forward op saw.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/array_kernel_util.h"
#include "kernels/blas.h"
#include "kernels/conv_util.h"
#include "kernels/dnnl_conv_backward.h"
#include "kernels/kernel_registry.h"
#include "kernels/parallel_for.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The checks both convolution gradients share: ranks, channels per group, and dY's shape
// against the geometry the forward Conv computed.
struct ConvProblem {
  int64_t n, c, m, cg, mg, in_size, out_size, k_size;
  std::vector<int64_t> in;
  WindowGeometry g;
};

absl::StatusOr<ConvProblem> MakeConvProblem(const TensorShape& x, const TensorShape& w, const TensorShape& dy,
                                            const WindowAttrs& window, int64_t group, absl::string_view op) {
  if (x.dims() < 3 || w.dims() != x.dims() || dy.dims() != x.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(op, " needs X, W and dY of one rank >= 3; got ", x.DebugString(),
                                                   ", ", w.DebugString(), " and ", dy.DebugString()));
  }
  ConvProblem p;
  p.n = x.dim_size(0);
  p.c = x.dim_size(1);
  p.m = w.dim_size(0);
  if (p.c != w.dim_size(1) * group || p.m % group != 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": X has ", p.c, " channels, W is ", w.DebugString(),
                                                   " with group ", group));
  }
  p.in = SpatialDims(x);
  std::vector<int64_t> kernel = SpatialDims(w);
  if (!window.kernel_shape.empty() && window.kernel_shape != kernel) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": kernel_shape does not match W ", w.DebugString()));
  }
  SL_ASSIGN_OR_RETURN(p.g, ComputeWindowGeometry(p.in, kernel, window, false));
  const TensorShape want(WindowOutputDims(p.n, p.m, p.g));
  if (want != dy) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": dY is ", dy.DebugString(), " but Conv of X ",
                                                   x.DebugString(), " and W ", w.DebugString(), " gives ",
                                                   want.DebugString()));
  }
  p.cg = p.c / group;
  p.mg = p.m / group;
  p.in_size = Product(p.in);
  p.out_size = Product(p.g.out);
  p.k_size = Product(kernel);
  return p;
}

// A 1x1 window with unit strides and no padding: each image's gradients are matrix products
// of the tensors as they are (no im2col, and no reorders into oneDNN's channel blocks, which
// cost as much as the products for ResNet-50's 1x1 layers).
bool IsPlainProduct(const ConvProblem& p) {
  if (p.k_size != 1) return false;
  for (size_t i = 0; i < p.in.size(); ++i) {
    if (p.g.strides[i] != 1 || p.g.pad_begin[i] != 0 || p.g.pad_end[i] != 0) return false;
  }
  return true;
}

// The attrs both convolution gradients take, as the forward Conv has them.
class ConvBackpropOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx));
    return ctx->GetAttr("group", &group_);
  }

 protected:
  WindowAttrs window_;
  int64_t group_ = 1;
};

template <typename T>
class ConvBackpropInputOp : public ConvBackpropOp {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& w = ctx->input(1);
    SL_ASSIGN_OR_RETURN(TensorShape x_shape, ShapeInput(ctx->input(2), "ConvBackpropInput: x_shape"));
    SL_ASSIGN_OR_RETURN(ConvProblem p, MakeConvProblem(x_shape, w.shape(), dy.shape(), window_, group_,
                                                       "ConvBackpropInput"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x_shape, &dx));
    T* dxd = dx->data<T>();
    if (IsPlainProduct(p) && dy.NumElements() > 0) {
      // dX_g [cg x HW] = W_g^T [cg x mg] * dY_g [mg x HW], image by image.
      for (int64_t b = 0; b < p.n; ++b) {
        for (int64_t gi = 0; gi < group_; ++gi) {
          SL_RETURN_IF_ERROR(ctx->CheckCancelled());
          GemmRowMajor<T>(true, false, p.cg, p.out_size, p.mg, T(1), w.data<T>() + gi * p.mg * p.cg, p.cg,
                          dy.data<T>() + (b * p.m + gi * p.mg) * p.out_size, p.out_size, T(0),
                          dxd + (b * p.c + gi * p.cg) * p.in_size, p.in_size, ctx->intra_op_threads());
        }
      }
      return absl::OkStatus();
    }
    if (dy.NumElements() > 0 && dx->NumElements() > 0) {
      if constexpr (std::is_same_v<T, float>) {
        SL_ASSIGN_OR_RETURN(bool done, dnnl_.Data(dy, w, p.g, group_, ctx->intra_op_threads(), dx));
        if (done) return absl::OkStatus();
      }
    }
    std::fill(dxd, dxd + dx->NumElements(), T(0));
    if (dy.NumElements() == 0) return absl::OkStatus();
    std::vector<T> columns(p.cg * p.k_size * p.out_size);
    for (int64_t b = 0; b < p.n; ++b) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        // columns [cg*K x out] = W_g^T [cg*K x mg] * dY_g [mg x out], then back to image positions.
        const T* wg = w.data<T>() + gi * p.mg * p.cg * p.k_size;
        const T* dyg = dy.data<T>() + (b * p.m + gi * p.mg) * p.out_size;
        GemmRowMajor<T>(true, false, p.cg * p.k_size, p.out_size, p.mg, T(1), wg, p.cg * p.k_size, dyg,
                        p.out_size, T(0), columns.data(), p.out_size, ctx->intra_op_threads());
        Col2Im(columns.data(), p.cg, p.in, p.g, dxd + (b * p.c + gi * p.cg) * p.in_size);
      }
    }
    return absl::OkStatus();
  }

 private:
  DnnlConvBackward dnnl_{DnnlConvBackward::kData};
};

// dW of a 2-D depthwise convolution (one input and one output channel per group), channel by
// channel: for each tap, the dot product of dY's rows with the rows of X that tap reads, over
// the images. oneDNN 2.6 has no direct kernel for some of these (EfficientNet's 5x5 taps on
// 14x14 maps ran its GEMM-based one at 1.4 GMAC/s, 19 ms each) and im2col + GEMM per channel is
// a product of one row.
template <typename T>
void DepthwiseFilterGrad(const T* x, const T* dy, const ConvProblem& p, OpKernelContext* ctx, T* dw) {
  const int64_t h = p.in[0], w = p.in[1], oh = p.g.out[0], ow = p.g.out[1];
  const int64_t kh = p.g.kernel[0], kw = p.g.kernel[1], sh = p.g.strides[0], sw = p.g.strides[1];
  const int64_t dh = p.g.dilations[0], dwl = p.g.dilations[1], ph = p.g.pad_begin[0], pw = p.g.pad_begin[1];
  ParallelForIfLarge(ctx, p.c, p.n * p.out_size * p.k_size, [&](int64_t begin, int64_t end) {
    // Per output column, partial sums over rows and images: the inner loop is then element-wise
    // (it vectorizes; a running scalar sum would not, without reassociating float additions).
    std::vector<T> partial(ow);
    for (int64_t c = begin; c < end; ++c) {
      T* dwc = dw + c * kh * kw;
      for (int64_t i = 0; i < kh; ++i) {
        for (int64_t j = 0; j < kw; ++j) {
          // Output columns whose tap (i, j) reads a column inside X: iw = o*sw - pw + j*dwl.
          const int64_t off = j * dwl - pw;
          const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          const int64_t hi = std::min(ow, w - off <= 0 ? 0 : (w - off - 1) / sw + 1);
          std::fill(partial.begin(), partial.end(), T(0));
          T* acc = partial.data();
          for (int64_t b = 0; b < p.n; ++b) {
            const T* xp = x + (b * p.c + c) * h * w;
            const T* dyp = dy + (b * p.c + c) * oh * ow;
            for (int64_t r = 0; r < oh; ++r) {
              const int64_t ih = r * sh - ph + i * dh;
              if (ih < 0 || ih >= h) continue;
              const T* xrow = xp + ih * w + off;
              const T* dyrow = dyp + r * ow;
              if (sw == 1) {
                for (int64_t o = lo; o < hi; ++o) acc[o] += dyrow[o] * xrow[o];
              } else {
                for (int64_t o = lo; o < hi; ++o) acc[o] += dyrow[o] * xrow[o * sw];
              }
            }
          }
          T sum = T(0);
          for (int64_t o = lo; o < hi; ++o) sum += acc[o];
          dwc[i * kw + j] = sum;
        }
      }
    }
  });
}

template <typename T>
class ConvBackpropFilterOp : public ConvBackpropOp {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    SL_ASSIGN_OR_RETURN(TensorShape w_shape, ShapeInput(ctx->input(2), "ConvBackpropFilter: w_shape"));
    SL_ASSIGN_OR_RETURN(ConvProblem p, MakeConvProblem(x.shape(), w_shape, dy.shape(), window_, group_,
                                                       "ConvBackpropFilter"));
    Tensor* dw;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, w_shape, &dw));
    T* dwd = dw->data<T>();
    if (IsPlainProduct(p) && dy.NumElements() > 0) {
      // dW_g [mg x cg] = sum over images of dY_g [mg x HW] * X_g^T [HW x cg].
      std::fill(dwd, dwd + dw->NumElements(), T(0));
      for (int64_t b = 0; b < p.n; ++b) {
        for (int64_t gi = 0; gi < group_; ++gi) {
          SL_RETURN_IF_ERROR(ctx->CheckCancelled());
          GemmRowMajor<T>(false, true, p.mg, p.cg, p.out_size, T(1), dy.data<T>() + (b * p.m + gi * p.mg) * p.out_size,
                          p.out_size, x.data<T>() + (b * p.c + gi * p.cg) * p.in_size, p.in_size, T(1),
                          dwd + gi * p.mg * p.cg, p.cg, ctx->intra_op_threads());
        }
      }
      return absl::OkStatus();
    }
    if (dy.NumElements() > 0 && dw->NumElements() > 0) {
      if constexpr (std::is_same_v<T, float>) {
        SL_ASSIGN_OR_RETURN(bool done, dnnl_.Weights(x, dy, p.g, group_, ctx->intra_op_threads(), dw));
        if (done) return absl::OkStatus();
      }
    }
    std::fill(dwd, dwd + dw->NumElements(), T(0));
    if (dy.NumElements() == 0) return absl::OkStatus();
    if (p.cg == 1 && p.mg == 1 && p.in.size() == 2 && group_ > 1) {
      DepthwiseFilterGrad<T>(x.data<T>(), dy.data<T>(), p, ctx, dwd);
      return absl::OkStatus();
    }
    std::vector<T> columns(p.cg * p.k_size * p.out_size);
    for (int64_t b = 0; b < p.n; ++b) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        // dW_g [mg x cg*K] += dY_g [mg x out] * im2col(X_g)^T [out x cg*K].
        Im2Col(x.data<T>() + (b * p.c + gi * p.cg) * p.in_size, p.cg, p.in, p.g, columns.data());
        const T* dyg = dy.data<T>() + (b * p.m + gi * p.mg) * p.out_size;
        GemmRowMajor<T>(false, true, p.mg, p.cg * p.k_size, p.out_size, T(1), dyg, p.out_size, columns.data(),
                        p.out_size, T(1), dwd + gi * p.mg * p.cg * p.k_size, p.cg * p.k_size,
                        ctx->intra_op_threads());
      }
    }
    return absl::OkStatus();
  }

 private:
  DnnlConvBackward dnnl_{DnnlConvBackward::kWeights};
};

// The pooled geometry of X's shape, checked against dY's shape.
absl::StatusOr<WindowGeometry> PoolGeometry(const TensorShape& x, const TensorShape& dy, const WindowAttrs& window,
                                            bool ceil_mode, absl::string_view op) {
  if (x.dims() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(op, " needs N x C x spatial input, got ", x.DebugString()));
  }
  SL_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindowGeometry(SpatialDims(x), window.kernel_shape, window, ceil_mode));
  const TensorShape want(WindowOutputDims(x.dim_size(0), x.dim_size(1), g));
  if (want != dy) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": dY is ", dy.DebugString(), " but pooling X ",
                                                   x.DebugString(), " gives ", want.DebugString()));
  }
  return g;
}

absl::Status ParsePoolAttrs(OpKernelConstruction* ctx, bool has_dilations, WindowAttrs* window, int64_t* ceil_mode) {
  SL_RETURN_IF_ERROR(window->Parse(ctx, has_dilations));
  if (window->kernel_shape.empty()) return absl::InvalidArgumentError("kernel_shape is required");
  for (int64_t k : window->kernel_shape) {
    if (k <= 0) return absl::InvalidArgumentError("kernel_shape must be positive");
  }
  return ctx->GetAttr("ceil_mode", ceil_mode);
}

template <typename T>
class MaxPoolGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    return ParsePoolAttrs(ctx, /*has_dilations=*/true, &window_, &ceil_mode_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    SL_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry(x.shape(), dy.shape(), window_, ceil_mode_ != 0, "MaxPoolGrad"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &dx));
    std::fill(dx->data<T>(), dx->data<T>() + dx->NumElements(), T(0));
    const int64_t planes = x.dim_size(0) * x.dim_size(1);
    const std::vector<int64_t> in = SpatialDims(x.shape());
    const int64_t in_size = Product(in), out_size = Product(g.out);
    // Every plane has the same windows: list their cells once (walking the geometry for each
    // plane took ResNet-18's one MaxPoolGrad 150 ms of a 2 s training step).
    const PoolWindows w = ListPoolWindows(in, g);
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = x.data<T>() + p * in_size;
      const T* dyp = dy.data<T>() + p * out_size;
      T* dxp = dx->data<T>() + p * in_size;
      for (int64_t oi = 0; oi < out_size; ++oi) {
        const int64_t* c = w.cells.data() + w.start[oi];
        const int64_t n = w.start[oi + 1] - w.start[oi];
        if (n == 0) continue;
        // Branch-free: after a ReLU, which cell holds the max is a coin toss, and a branch on
        // it mispredicted for most windows (ResNet-18's MaxPoolGrad at batch 4: 16 ms).
        int64_t arg = c[0];
        T best = xp[arg];
        for (int64_t j = 1; j < n; ++j) {
          const T v = xp[c[j]];
          const bool greater = v > best;
          best = greater ? v : best;
          arg = greater ? c[j] : arg;
        }
        dxp[arg] += dyp[oi];
      }
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
  int64_t ceil_mode_ = 0;
};

template <typename T>
class AveragePoolGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ParsePoolAttrs(ctx, /*has_dilations=*/true, &window_, &ceil_mode_));
    return ctx->GetAttr("count_include_pad", &count_include_pad_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    SL_ASSIGN_OR_RETURN(TensorShape x_shape, ShapeInput(ctx->input(1), "AveragePoolGrad: x_shape"));
    SL_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry(x_shape, dy.shape(), window_, ceil_mode_ != 0, "AveragePoolGrad"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x_shape, &dx));
    std::fill(dx->data<T>(), dx->data<T>() + dx->NumElements(), T(0));
    const int64_t planes = x_shape.dim_size(0) * x_shape.dim_size(1);
    const std::vector<int64_t> in = SpatialDims(x_shape);
    const int64_t in_size = Product(in), out_size = Product(g.out);
    const PoolWindows w = ListPoolWindows(in, g);  // The same for every plane.
    for (int64_t p = 0; p < planes; ++p) {
      const T* dyp = dy.data<T>() + p * out_size;
      T* dxp = dx->data<T>() + p * in_size;
      for (int64_t oi = 0; oi < out_size; ++oi) {
        const int64_t n = w.start[oi + 1] - w.start[oi];
        const int64_t count = count_include_pad_ ? w.padded[oi] : n;
        if (count == 0) continue;
        const T share = dyp[oi] / static_cast<T>(count);
        for (int64_t j = w.start[oi]; j < w.start[oi + 1]; ++j) dxp[w.cells[j]] += share;
      }
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
  int64_t ceil_mode_ = 0, count_include_pad_ = 0;
};

// X is N x C x D1..Dn; one statistic per channel (spatial) or per channel and position.
template <typename T, typename U>
class BatchNormGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("training_mode", &training_));
    return ctx->GetAttr("spatial", &spatial_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (x.dims() < 1 || dy.shape() != x.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("BatchNormalizationGrad: dY ", dy.shape().DebugString(),
                                                     " and X ", x.shape().DebugString(), " differ"));
    }
    const int64_t n = x.dim_size(0), c = x.dims() > 1 ? x.dim_size(1) : 1;
    const int64_t inner = n * c == 0 ? 0 : x.NumElements() / (n * c);
    const int64_t stats = spatial_ ? c : c * inner;
    for (int i = 2; i < 5; ++i) {
      if (ctx->input(i).NumElements() != stats) {
        return absl::InvalidArgumentError(absl::StrCat("BatchNormalizationGrad input ", i, " has ",
                                                       ctx->input(i).NumElements(), " values; X ",
                                                       x.shape().DebugString(), " needs ", stats));
      }
    }
    auto stat_of = [&](int64_t ch, int64_t i) { return spatial_ ? ch : ch * inner + i; };
    // Visits (statistic, element index) for every element of X.
    auto for_each = [&](auto&& fn) {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t base = (b * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) fn(stat_of(ch, i), base + i);
        }
      }
    };
    const T* xd = x.data<T>();
    const T* dyd = dy.data<T>();
    std::vector<double> mean(stats, 0.0), var(stats, 0.0), count(stats, 0.0);
    for_each([&](int64_t s, int64_t) { count[s] += 1; });
    if (training_) {
      for_each([&](int64_t s, int64_t e) { mean[s] += static_cast<double>(xd[e]); });
      for (int64_t s = 0; s < stats; ++s) mean[s] /= std::max(1.0, count[s]);
      for_each([&](int64_t s, int64_t e) {
        const double d = static_cast<double>(xd[e]) - mean[s];
        var[s] += d * d;
      });
      for (int64_t s = 0; s < stats; ++s) var[s] /= std::max(1.0, count[s]);
    } else {
      for (int64_t s = 0; s < stats; ++s) {
        mean[s] = static_cast<double>(ctx->input(3).flat<U>()[s]);
        var[s] = static_cast<double>(ctx->input(4).flat<U>()[s]);
      }
    }
    std::vector<double> inv(stats), scale(stats), sum_dy(stats, 0.0), sum_dy_xhat(stats, 0.0);
    for (int64_t s = 0; s < stats; ++s) {
      inv[s] = 1.0 / std::sqrt(var[s] + epsilon_);
      scale[s] = static_cast<double>(ctx->input(2).flat<U>()[s]);
    }
    for_each([&](int64_t s, int64_t e) {
      const double g = static_cast<double>(dyd[e]);
      sum_dy[s] += g;
      sum_dy_xhat[s] += g * (static_cast<double>(xd[e]) - mean[s]) * inv[s];
    });
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &dx));
    T* dxd = dx->data<T>();
    if (training_) {
      // dX = scale * inv / m * (m dY - sum(dY) - xhat * sum(dY xhat)).
      for_each([&](int64_t s, int64_t e) {
        const double xhat = (static_cast<double>(xd[e]) - mean[s]) * inv[s];
        const double m = std::max(1.0, count[s]);
        dxd[e] = static_cast<T>(scale[s] * inv[s] / m *
                                (m * static_cast<double>(dyd[e]) - sum_dy[s] - xhat * sum_dy_xhat[s]));
      });
    } else {
      for_each([&](int64_t s, int64_t e) { dxd[e] = static_cast<T>(static_cast<double>(dyd[e]) * scale[s] * inv[s]); });
    }
    const TensorShape& stat_shape = ctx->input(2).shape();
    Tensor *dscale, *dbias, *dmean, *dvar;
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, stat_shape, &dscale));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, stat_shape, &dbias));
    SL_RETURN_IF_ERROR(ctx->allocate_output(3, ctx->input(3).shape(), &dmean));
    SL_RETURN_IF_ERROR(ctx->allocate_output(4, ctx->input(4).shape(), &dvar));
    for (int64_t s = 0; s < stats; ++s) {
      dscale->flat<U>()[s] = static_cast<U>(sum_dy_xhat[s]);
      dbias->flat<U>()[s] = static_cast<U>(sum_dy[s]);
      // Inference: y = (x - mean) * scale * inv + b, so dmean = -scale inv sum(dY) and
      // dvar = -scale inv^2 / 2 * sum(dY xhat).
      dmean->flat<U>()[s] = static_cast<U>(training_ ? 0.0 : -scale[s] * inv[s] * sum_dy[s]);
      dvar->flat<U>()[s] = static_cast<U>(training_ ? 0.0 : -0.5 * scale[s] * inv[s] * inv[s] * sum_dy_xhat[s]);
    }
    return absl::OkStatus();
  }

 private:
  float epsilon_ = 1e-5f;
  bool training_ = false, spatial_ = true;
};

[[maybe_unused]] const bool kRegistered = [] {
  using Types = TypeList<float, double>;
  RegisterCpuKernelTemplate<ConvBackpropInputOp>("Onnx>ConvBackpropInput", Types{});
  RegisterCpuKernelTemplate<ConvBackpropFilterOp>("Onnx>ConvBackpropFilter", Types{});
  RegisterCpuKernelTemplate<MaxPoolGradOp>("Onnx>MaxPoolGrad", Types{});
  RegisterCpuKernelTemplate<AveragePoolGradOp>("Onnx>AveragePoolGrad", Types{});
  return true;
}();
REGISTER_KERNEL_BUILDER(
    Name("Onnx>BatchNormalizationGrad").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
    BatchNormGradOp<float, float>);
REGISTER_KERNEL_BUILDER(
    Name("Onnx>BatchNormalizationGrad").Device(DEVICE_CPU).TypeConstraint<double>("T").TypeConstraint<double>("U"),
    BatchNormGradOp<double, double>);

}  // namespace
}  // namespace sluice
