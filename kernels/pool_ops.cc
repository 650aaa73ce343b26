// Pooling with ONNX semantics over any number of spatial dims: MaxPool (with Indices),
// AveragePool, LpPool, the global pools and MaxUnpool.
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv_util.h"
#include "kernels/fast_math.h"
#include "kernels/threading.h"
#include "kernels/kernel_registry.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Double stays double; the narrower types widen through float.
template <typename T>
double AsDouble(T v) {
  if constexpr (std::is_same_v<T, double>) return v;
  return static_cast<double>(static_cast<float>(v));
}

template <typename T, PoolKind kKind>
class PoolOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx, /*has_dilations=*/true));
    if (window_.kernel_shape.empty()) return absl::InvalidArgumentError("kernel_shape is required");
    for (int64_t k : window_.kernel_shape) {
      if (k <= 0) return absl::InvalidArgumentError("kernel_shape must be positive");
    }
    SL_RETURN_IF_ERROR(ctx->GetAttr("ceil_mode", &ceil_mode_));
    if (kKind == PoolKind::kMax) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("storage_order", &storage_order_));
      SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "produce_indices", true, &produce_indices_));
    }
    if (kKind != PoolKind::kLp) {
      std::string layout;
      SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "layout", std::string("NCHW"), &layout));
      nhwc_ = layout == "NHWC";
      if (nhwc_ && ((kKind == PoolKind::kMax && produce_indices_) || window_.kernel_shape.size() != 2 || !std::is_same_v<T, float>)) {
        return absl::InvalidArgumentError("a pool in NHWC layout is 2-D float and has no Indices");
      }
    }
    if (kKind == PoolKind::kAverage) SL_RETURN_IF_ERROR(ctx->GetAttr("count_include_pad", &count_include_pad_));
    if (kKind == PoolKind::kLp) SL_RETURN_IF_ERROR(ctx->GetAttr("p", &p_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 3) {
      return absl::InvalidArgumentError(absl::StrCat("pooling needs N x C x spatial input, got ", x.shape().DebugString()));
    }
    std::vector<int64_t> in = SpatialDims(x.shape());
    SL_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindowGeometry(in, window_.kernel_shape, window_, ceil_mode_ != 0));
    const DimVector dims = WindowOutputDims(x.dim_size(0), x.dim_size(1), g);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(dims), &y));
    Tensor* indices = nullptr;
    if (kKind == PoolKind::kMax) {
      SL_RETURN_IF_ERROR(ctx->allocate_output(1, produce_indices_ ? TensorShape(dims) : TensorShape({0}), &indices));
      if (!produce_indices_) indices = nullptr;
    }
    const int64_t planes = x.dim_size(0) * x.dim_size(1);
    const int64_t in_size = Product(in), out_size = Product(g.out);
    // Column-major spatial index (storage_order 1) of a row-major offset.
    std::vector<int64_t> col_major_stride(in.size(), 1);
    for (size_t d = 1; d < in.size(); ++d) col_major_stride[d] = col_major_stride[d - 1] * in[d - 1];
    auto to_col_major = [&](int64_t offset) {
      int64_t idx = 0;
      for (int d = static_cast<int>(in.size()) - 1; d >= 0; --d) {
        idx += (offset % in[d]) * col_major_stride[d];
        offset /= in[d];
      }
      return idx;
    };
    if (nhwc_) {
      if (x.dims() != 4) return absl::InvalidArgumentError("a pool in NHWC layout needs a 4-D input");
      if constexpr (kKind != PoolKind::kLp && std::is_same_v<T, float>) {
        PoolNhwc(x, y, in, g, ctx->intra_op_threads());
      }
      return absl::OkStatus();
    }
    if (in.size() == 2 && kKind != PoolKind::kLp && (kKind != PoolKind::kMax || storage_order_ == 0)) {
      Pool2D(x.data<T>(), y->data<T>(), indices ? indices->data<int64_t>() : nullptr, planes, in, g,
             ctx->intra_op_threads());
      return absl::OkStatus();
    }
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = x.data<T>() + p * in_size;
      T* yp = y->data<T>() + p * out_size;
      int64_t* ip = indices ? indices->data<int64_t>() + p * out_size : nullptr;
      ForEachPoolWindow(in, g, [&](int64_t oi, const std::vector<int64_t>& cells, int64_t padded) {
        (void)ip;
        if constexpr (kKind == PoolKind::kMax) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t arg = cells.empty() ? 0 : cells[0];
          for (int64_t c : cells) {
            double v = static_cast<double>(static_cast<float>(xp[c]));
            if constexpr (std::is_same_v<T, double>) v = xp[c];
            if (v > best) {
              best = v;
              arg = c;
            }
          }
          yp[oi] = cells.empty() ? T(0) : xp[arg];
          if (ip) ip[oi] = p * in_size + (storage_order_ == 1 ? to_col_major(arg) : arg);
        } else if constexpr (kKind == PoolKind::kAverage) {
          double sum = 0;
          for (int64_t c : cells) sum += AsDouble(xp[c]);
          int64_t count = count_include_pad_ ? padded : static_cast<int64_t>(cells.size());
          yp[oi] = T(count > 0 ? sum / count : 0.0);
        } else {
          double sum = 0;
          for (int64_t c : cells) sum += std::pow(std::fabs(static_cast<double>(static_cast<float>(xp[c]))), p_);
          yp[oi] = T(std::pow(sum, 1.0 / p_));
        }
      });
    }
    return absl::OkStatus();
  }

  // N,H,W,C order: each output pixel is the elementwise max (or mean) of its taps' channel
  // vectors, so the inner loops run along channels and vectorize. Output rows split across the
  // compute pool.
  void PoolNhwc(const Tensor& x, Tensor* y, const std::vector<int64_t>& in, const WindowGeometry& g,
                int threads) const {
    const int64_t n = x.dim_size(0), c = x.dim_size(1), ih = in[0], iw = in[1], oh = g.out[0], ow = g.out[1];
    const int64_t kh = g.kernel[0], kw = g.kernel[1], dh = g.dilations[0], dw = g.dilations[1];
    const float* xd = x.data<float>();
    float* yd = y->data<float>();
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        const int64_t h0 = i * g.strides[0] - g.pad_begin[0];
        const int64_t a_lo = h0 < 0 ? (-h0 + dh - 1) / dh : 0, a_hi = std::min(kh, (ih - h0 + dh - 1) / dh);
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t w0 = j * g.strides[1] - g.pad_begin[1];
          const int64_t k_lo = w0 < 0 ? (-w0 + dw - 1) / dw : 0, k_hi = std::min(kw, (iw - w0 + dw - 1) / dw);
          float* out = yd + (row * ow + j) * c;
          if (a_hi <= a_lo || k_hi <= k_lo) {
            std::fill(out, out + c, 0.0f);
            continue;
          }
          float scale = 1.0f;
          if constexpr (kKind == PoolKind::kAverage) {
            int64_t count;
            if (count_include_pad_) {
              // Cells inside the padded extent (windows past it, from ceil_mode, count less).
              const int64_t hs = std::max<int64_t>(h0, -g.pad_begin[0]);
              const int64_t he = std::min<int64_t>(h0 + (kh - 1) * dh + 1, ih + g.pad_end[0]);
              const int64_t ws = std::max<int64_t>(w0, -g.pad_begin[1]);
              const int64_t we = std::min<int64_t>(w0 + (kw - 1) * dw + 1, iw + g.pad_end[1]);
              count = ((he - hs + dh - 1) / dh) * ((we - ws + dw - 1) / dw);
            } else {
              count = (a_hi - a_lo) * (k_hi - k_lo);
            }
            scale = 1.0f / static_cast<float>(count);
          }
          PoolPixelNhwc(kKind == PoolKind::kMax, xd + ((b * ih + h0 + a_lo * dh) * iw + w0 + k_lo * dw) * c,
                        a_hi - a_lo, k_hi - k_lo, dh * iw * c, dw * c, c, scale, out);
        }
      }
    };
    if (threads > 1 && n * oh * ow * c * kh * kw > (1 << 16)) {
      OmpParallelFor(n * oh, 1, threads, run);
    } else {
      run(0, n * oh);
    }
  }

  // The common 2-D case without per-window allocations: each output's window is clipped to
  // the image once, then scanned directly. Planes split across the compute pool.
  void Pool2D(const T* x, T* y, int64_t* indices, int64_t planes, const std::vector<int64_t>& in,
              const WindowGeometry& g, int threads) const {
    const int64_t ih = in[0], iw = in[1], oh = g.out[0], ow = g.out[1];
    const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
    const int64_t dh = g.dilations[0], dw = g.dilations[1], ph = g.pad_begin[0], pw = g.pad_begin[1];
    // The taps of each output row and column that fall inside the image, worked out once
    // (with dilation, the first and last valid taps).
    std::vector<int64_t> row_lo(oh), row_hi(oh), col_lo(ow), col_hi(ow);
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t h0 = i * sh - ph;
      row_lo[i] = h0 < 0 ? (-h0 + dh - 1) / dh : 0;
      row_hi[i] = std::min(kh, (ih - h0 + dh - 1) / dh);
    }
    for (int64_t j = 0; j < ow; ++j) {
      const int64_t w0 = j * sw - pw;
      col_lo[j] = w0 < 0 ? (-w0 + dw - 1) / dw : 0;
      col_hi[j] = std::min(kw, (iw - w0 + dw - 1) / dw);
    }
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* xp = x + p * ih * iw;
        T* yp = y + p * oh * ow;
        for (int64_t i = 0; i < oh; ++i) {
          const int64_t h0 = i * sh - ph;
          const int64_t kh_lo = row_lo[i], kh_hi = row_hi[i];
          for (int64_t j = 0; j < ow; ++j) {
            const int64_t w0 = j * sw - pw;
            const int64_t kw_lo = col_lo[j], kw_hi = col_hi[j];
            if constexpr (kKind == PoolKind::kMax) {
              if (indices == nullptr && kh_hi > kh_lo && kw_hi > kw_lo) {
                using Wide = std::conditional_t<std::is_same_v<T, double>, double, float>;
                Wide best = static_cast<Wide>(xp[(h0 + kh_lo * dh) * iw + w0 + kw_lo * dw]);
                for (int64_t a = kh_lo; a < kh_hi; ++a) {
                  const T* row = xp + (h0 + a * dh) * iw + w0;
                  for (int64_t b = kw_lo; b < kw_hi; ++b) best = std::max(best, static_cast<Wide>(row[b * dw]));
                }
                yp[i * ow + j] = T(best);
                continue;
              }
              float best = -std::numeric_limits<float>::infinity();
              int64_t arg = -1;
              for (int64_t a = kh_lo; a < kh_hi; ++a) {
                const int64_t row = (h0 + a * dh) * iw;
                for (int64_t b = kw_lo; b < kw_hi; ++b) {
                  const int64_t at = row + w0 + b * dw;
                  const float v = static_cast<float>(xp[at]);
                  if (v > best || arg < 0) {
                    best = v;
                    arg = at;
                  }
                }
              }
              yp[i * ow + j] = arg < 0 ? T(0) : xp[arg];
              if (indices) indices[p * oh * ow + i * ow + j] = p * ih * iw + std::max<int64_t>(arg, 0);
            } else {
              double sum = 0;
              for (int64_t a = kh_lo; a < kh_hi; ++a) {
                const T* row = xp + (h0 + a * dh) * iw + w0;
                for (int64_t b = kw_lo; b < kw_hi; ++b) sum += AsDouble(row[b * dw]);
              }
              int64_t count;
              if (count_include_pad_) {
                // Cells inside the padded extent (windows past it, from ceil_mode, count less).
                const int64_t hs = std::max<int64_t>(h0, -ph), he = std::min<int64_t>(h0 + (kh - 1) * dh + 1, ih + g.pad_end[0]);
                const int64_t ws = std::max<int64_t>(w0, -pw), we = std::min<int64_t>(w0 + (kw - 1) * dw + 1, iw + g.pad_end[1]);
                count = ((he - hs + dh - 1) / dh) * ((we - ws + dw - 1) / dw);
              } else {
                count = std::max<int64_t>(0, kh_hi - kh_lo) * std::max<int64_t>(0, kw_hi - kw_lo);
              }
              yp[i * ow + j] = T(count > 0 ? sum / count : 0.0);
            }
          }
        }
      }
    };
    if (threads > 1 && planes * oh * ow > (1 << 15)) {
      OmpParallelFor(planes, 1, threads, run);
    } else {
      run(0, planes);
    }
  }

  WindowAttrs window_;
  int64_t ceil_mode_ = 0, storage_order_ = 0, count_include_pad_ = 0, p_ = 2;
  bool produce_indices_ = true;
  bool nhwc_ = false;
};

template <typename T, PoolKind kKind>
class GlobalPoolOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    if (kKind == PoolKind::kLp) SL_RETURN_IF_ERROR(ctx->GetAttr("p", &p_));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 2) return absl::InvalidArgumentError("global pooling needs N x C x ... input");
    DimVector dims = {x.dim_size(0), x.dim_size(1)};
    for (int i = 2; i < x.dims(); ++i) dims.push_back(1);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(dims), &y));
    const int64_t planes = x.dim_size(0) * x.dim_size(1);
    const int64_t size = planes == 0 ? 0 : x.NumElements() / planes;
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = x.data<T>() + p * size;
      double acc = kKind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < size; ++i) {
        double v = static_cast<double>(static_cast<float>(xp[i]));
        if constexpr (std::is_same_v<T, double>) v = xp[i];
        if (kKind == PoolKind::kMax) acc = std::max(acc, v);
        else if (kKind == PoolKind::kAverage) acc += v;
        else acc += std::pow(std::fabs(v), p_);
      }
      if (kKind == PoolKind::kAverage) acc /= size;
      if (kKind == PoolKind::kLp) acc = std::pow(acc, 1.0 / p_);
      y->data<T>()[p] = T(acc);
    }
    return absl::OkStatus();
  }

 private:
  int64_t p_ = 2;
};

template <typename T>
class MaxUnpoolOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return window_.Parse(ctx, false); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& idx = ctx->input(1);
    if (x.dims() < 3 || idx.shape() != x.shape()) {
      return absl::InvalidArgumentError("MaxUnpool needs X of rank >= 3 and indices of X's shape");
    }
    const size_t nd = x.dims() - 2;
    // Indices point into the tensor MaxPool saw, whose shape the attrs imply.
    DimVector pooled = {x.dim_size(0), x.dim_size(1)};
    std::vector<int64_t> strides = window_.strides.empty() ? std::vector<int64_t>(nd, 1) : window_.strides;
    std::vector<int64_t> pads = window_.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : window_.pads;
    if (window_.kernel_shape.size() != nd || strides.size() != nd || pads.size() != 2 * nd) {
      return absl::InvalidArgumentError("MaxUnpool attrs do not match the spatial rank");
    }
    for (size_t i = 0; i < nd; ++i) {
      pooled.push_back((x.dim_size(i + 2) - 1) * strides[i] - pads[i] - pads[i + nd] + window_.kernel_shape[i]);
    }
    DimVector dims = pooled;
    if (ctx->num_inputs() > 2) {
      const Tensor& shape = ctx->input(2);
      if (shape.NumElements() != x.dims()) return absl::InvalidArgumentError("output_shape has the wrong length");
      dims.clear();
      for (int64_t d : shape.flat<int64_t>()) dims.push_back(d);
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(dims), &y));
    std::fill(y->data<T>(), y->data<T>() + y->NumElements(), T(0));
    const int64_t total = TensorShape(pooled).num_elements();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      int64_t j = idx.data<int64_t>()[i];
      if (j < 0 || j >= total) {
        return absl::InvalidArgumentError(absl::StrCat("MaxUnpool index ", j, " is outside the pooled input of ", total, " elements"));
      }
      // Coordinates in the pooled input's shape, placed at the same coordinates of the output.
      int64_t out_index = 0, rest = j, scale = 1;
      for (int d = static_cast<int>(pooled.size()) - 1; d >= 0; --d) {
        int64_t coord = rest % pooled[d];
        rest /= pooled[d];
        if (coord >= dims[d]) return absl::InvalidArgumentError("MaxUnpool output_shape is smaller than the pooled input");
        out_index += coord * scale;
        scale *= dims[d];
      }
      y->data<T>()[out_index] = x.data<T>()[i];
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
};

// Kernels of one pool kind for each type in the list (as RegisterUnary in unary_ops.cc).
template <template <typename, PoolKind> class K, PoolKind kKind, typename Types>
void RegisterPool(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<K<typename decltype(t)::type, kKind>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  using Types = TypeList<float, double>;
  RegisterPool<PoolOp, PoolKind::kMax>("Onnx>MaxPool", Types{} + TypeList<int8_t, uint8_t>{});
  RegisterPool<PoolOp, PoolKind::kAverage>("Onnx>AveragePool", Types{});
  RegisterPool<PoolOp, PoolKind::kLp>("Onnx>LpPool", Types{});
  RegisterPool<GlobalPoolOp, PoolKind::kMax>("Onnx>GlobalMaxPool", Types{});
  RegisterPool<GlobalPoolOp, PoolKind::kAverage>("Onnx>GlobalAveragePool", Types{});
  RegisterPool<GlobalPoolOp, PoolKind::kLp>("Onnx>GlobalLpPool", Types{});
  RegisterCpuKernelTemplate<MaxUnpoolOp>("Onnx>MaxUnpool", Types{});
  return true;
}();

}  // namespace
}  // namespace sluice
