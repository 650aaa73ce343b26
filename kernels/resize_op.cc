// Resize (ONNX): nearest, N-linear and cubic interpolation over any dims, separably: each
// output coordinate of each dim gets its input taps and weights once, then every output
// element sums the products of its taps. Float tensors resized in their last two dims only
// (images, NCHW; signals) take a planar path: fixed-size tap tables, rows split over the
// compute pool. `axes` (Resize-18) is expanded to every dim up front (scale 1, roi [0, 1] for
// the others); antialias widens the linear and cubic filters by 1/scale when downsampling.
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/array_kernel_util.h"
#include "kernels/fast_math.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"

namespace sluice {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

double Input(const Tensor& t, int64_t i) {
  double v = 0;
  VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        v = static_cast<float>(t.flat<T>()[i]);
      } else {
        v = static_cast<double>(t.flat<T>()[i]);
      }
    }
  });
  return v;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = Input(t, i);
  return out;
}

template <typename T>
class ResizeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("coordinate_transformation_mode", &transform_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("cubic_coeff_a", &cubic_a_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("exclude_outside", &exclude_outside_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("extrapolation_value", &extrapolation_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nearest_mode", &nearest_mode_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("antialias", &antialias_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("axes", &axes_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("keep_aspect_ratio_policy", &policy_));
    std::string layout;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "layout", std::string("NCHW"), &layout));
    nhwc_ = layout == "NHWC";
    if (nhwc_ && (!std::is_same_v<T, float> || transform_ == "tf_crop_and_resize")) {
      return absl::InvalidArgumentError("Resize in NHWC layout is float and not tf_crop_and_resize");
    }
    DataTypeVector roi, scales, sizes;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Troi", &roi));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tscales", &scales));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tsizes", &sizes));
    has_roi_ = !roi.empty();
    has_scales_ = !scales.empty();
    has_sizes_ = !sizes.empty();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    int next = 1;
    std::vector<double> roi, scales;
    std::vector<int64_t> sizes;
    if (has_roi_) roi = ToDoubles(ctx->input(next++));
    if (has_scales_) scales = ToDoubles(ctx->input(next++));
    if (has_sizes_) {
      const Tensor& s = ctx->input(next++);
      for (int64_t i = 0; i < s.NumElements(); ++i) {
        int64_t size = 0;
        if (!TruncateToInt64(Input(s, i), &size)) {
          return absl::InvalidArgumentError(absl::StrCat("Resize sizes[", i, "] is not a count"));
        }
        sizes.push_back(size);
      }
    }
    // The dims that roi, scales and sizes describe, in their order.
    std::vector<int> axes;
    std::vector<bool> resized(rank, axes_.empty());
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank) {
        return absl::InvalidArgumentError(absl::StrCat("Resize axis ", a, " is out of range for rank ", rank));
      }
      const int d = static_cast<int>(a < 0 ? a + rank : a);
      if (resized[d]) return absl::InvalidArgumentError(absl::StrCat("Resize axes name dim ", d, " twice"));
      resized[d] = true;
      axes.push_back(d);
    }
    if (axes_.empty()) {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    }
    const int naxes = static_cast<int>(axes.size());
    if (!axes_.empty() && static_cast<int>(roi.size()) == 2 * naxes) {
      std::vector<double> full(2 * rank, 0.0);
      for (int d = 0; d < rank; ++d) full[rank + d] = 1.0;
      for (int i = 0; i < naxes; ++i) {
        full[axes[i]] = roi[i];
        full[rank + axes[i]] = roi[naxes + i];
      }
      roi = std::move(full);
    }
    if (!sizes.empty()) {
      if (static_cast<int>(sizes.size()) != naxes) {
        return absl::InvalidArgumentError(absl::StrCat("Resize sizes has ", sizes.size(), " values for ", naxes,
                                                       " axes of rank ", rank));
      }
      std::vector<int64_t> full(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
      for (int i = 0; i < naxes; ++i) full[axes[i]] = sizes[i];
      sizes = std::move(full);
      scales.assign(rank, 1.0);
      for (int d = 0; d < rank; ++d) scales[d] = x.dim_size(d) == 0 ? 1.0 : static_cast<double>(sizes[d]) / x.dim_size(d);
      if (policy_ != "stretch") {
        // One scale for every axis, the smallest or largest of theirs; sizes follow it,
        // rounded half up.
        double scale = scales[axes[0]];
        for (int d : axes) scale = policy_ == "not_larger" ? std::min(scale, scales[d]) : std::max(scale, scales[d]);
        for (int d : axes) {
          const double size = std::floor(scale * x.dim_size(d) + 0.5);
          if (!(size < 0x1p62)) {
            return absl::InvalidArgumentError(absl::StrCat("Resize: keep_aspect_ratio_policy makes dim ", d, " of ",
                                                           x.shape().DebugString(), " too large"));
          }
          scales[d] = scale;
          sizes[d] = static_cast<int64_t>(size);
        }
      }
    } else {
      if (static_cast<int>(scales.size()) != naxes) {
        return absl::InvalidArgumentError(absl::StrCat("Resize needs scales or sizes with one value per axis (", naxes,
                                                       " of rank ", rank, "), got ", scales.size()));
      }
      std::vector<double> full(rank, 1.0);
      for (int i = 0; i < naxes; ++i) full[axes[i]] = scales[i];
      scales = std::move(full);
      sizes.resize(rank);
      for (int d = 0; d < rank; ++d) {
        if (!(scales[d] > 0)) return absl::InvalidArgumentError("Resize scales must be positive");
        const double size = std::floor(x.dim_size(d) * scales[d]);
        // Checked before the cast: a double beyond int64 converts to anything.
        if (!(size < 0x1p62)) {
          return absl::InvalidArgumentError(absl::StrCat("Resize: scale ", scales[d], " makes dim ", d,
                                                         " of ", x.shape().DebugString(), " too large"));
        }
        sizes[d] = static_cast<int64_t>(size);
      }
    }
    for (int d = 0; d < rank; ++d) {
      if (sizes[d] < 0) return absl::InvalidArgumentError(absl::StrCat("Resize: negative size ", sizes[d]));
    }
    // Allocated before the taps (one per output coordinate), so that sizes no machine holds
    // fail here, as RESOURCE_EXHAUSTED, instead of as bad_alloc building the taps.
    DimVector out_dims(sizes.begin(), sizes.end());
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims), "Resize");
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (transform_ == "tf_crop_and_resize" && static_cast<int>(roi.size()) != 2 * rank) {
      return absl::InvalidArgumentError("tf_crop_and_resize needs roi with 2 * rank values");
    }
    // Taps per dim and output coordinate; -1 index means "outside: extrapolation_value".
    std::vector<std::vector<std::vector<Tap>>> taps(rank);
    for (int d = 0; d < rank; ++d) {
      if (Antialiased(scales[d])) {
        // Each output coordinate gets about 4/scale taps (cubic), about 4 * in_len over the
        // dim; the tables (16 bytes a tap) are capped at 4 GiB.
        const double width = 4.0 / scales[d] + 4;
        if (!(width * static_cast<double>(sizes[d]) < 0x1p28)) {
          return absl::ResourceExhaustedError(absl::StrCat("Resize: antialiasing dim ", d, " of ",
                                                           x.shape().DebugString(), " at scale ", scales[d],
                                                           " needs too many filter taps"));
        }
      }
      taps[d].resize(sizes[d]);
      for (int64_t o = 0; o < sizes[d]; ++o) taps[d][o] = TapsFor(d, o, x.dim_size(d), sizes[d], scales[d], roi, rank);
    }
    if constexpr (std::is_same_v<T, float>) {
      if (nhwc_) {
        if (rank != 4 || !IsIdentity(taps[0]) || !IsIdentity(taps[1])) {
          return absl::InvalidArgumentError(absl::StrCat("Resize in NHWC layout resizes H and W of a 4-D input only; ",
                                                         x.shape().DebugString(), " -> ", y->shape().DebugString()));
        }
        return ResizeNhwc(ctx, taps[2], taps[3], x, y);
      }
      if (rank >= 2 && transform_ != "tf_crop_and_resize") {
        bool leading_identity = true;
        for (int d = 0; d + 2 < rank && leading_identity; ++d) leading_identity = IsIdentity(taps[d]);
        if (leading_identity) return ResizeLastTwoDims(ctx, taps[rank - 2], taps[rank - 1], x, y);
      }
    }
    std::vector<int64_t> in_strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * x.dim_size(d + 1);
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    std::vector<int64_t> o(rank, 0);
    std::vector<size_t> pick(rank, 0);
    for (int64_t oi = 0; oi < y->NumElements(); ++oi) {
      // Sum over the product of this position's taps in every dim.
      double acc = 0;
      bool outside = false;
      std::fill(pick.begin(), pick.end(), 0);
      for (;;) {
        double w = 1;
        int64_t offset = 0;
        for (int d = 0; d < rank; ++d) {
          const Tap& t = taps[d][o[d]][pick[d]];
          if (t.index < 0) outside = true;
          w *= t.weight;
          offset += t.index * in_strides[d];
        }
        if (outside) break;
        if (w != 0) acc += w * static_cast<double>(static_cast<float>(xd[offset]));
        int d = rank - 1;
        for (; d >= 0; --d) {
          if (++pick[d] < taps[d][o[d]].size()) break;
          pick[d] = 0;
        }
        if (d < 0) break;
      }
      if (outside) acc = extrapolation_;
      if constexpr (std::is_integral_v<T>) {
        yd[oi] = static_cast<T>(std::nearbyint(acc));
      } else {
        yd[oi] = T(acc);
      }
      for (int d = rank - 1; d >= 0; --d) {
        if (++o[d] < sizes[d]) break;
        o[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  // Taps that copy the dim as it is: output o reads input o with weight 1 (zero-weight taps
  // aside, as cubic's at a scale of 1).
  static bool IsIdentity(const std::vector<std::vector<Tap>>& dim_taps) {
    for (size_t o = 0; o < dim_taps.size(); ++o) {
      for (const Tap& t : dim_taps[o]) {
        if (t.weight != (t.index == static_cast<int64_t>(o) ? 1.0 : 0.0)) return false;
      }
    }
    return true;
  }

  // A dim's taps as flat tables of `width` taps per output coordinate (zero weights pad).
  struct TapTable {
    int width = 1;
    std::vector<int64_t> index;
    std::vector<float> weight;
  };
  static TapTable Flatten(const std::vector<std::vector<Tap>>& dim_taps) {
    TapTable t;
    for (const auto& taps : dim_taps) t.width = std::max<int>(t.width, static_cast<int>(taps.size()));
    t.index.assign(dim_taps.size() * t.width, 0);
    t.weight.assign(dim_taps.size() * t.width, 0.0f);
    for (size_t o = 0; o < dim_taps.size(); ++o) {
      for (size_t k = 0; k < dim_taps[o].size(); ++k) {
        t.index[o * t.width + k] = dim_taps[o][k].index;
        t.weight[o * t.width + k] = static_cast<float>(dim_taps[o][k].weight);
      }
    }
    return t;
  }

  // The planar path: every plane of the last two dims (H x W -> OH x OW) resized alike, in
  // float, one output row at a time; rows of all planes split over the compute pool.
  absl::Status ResizeLastTwoDims(OpKernelContext* ctx, const std::vector<std::vector<Tap>>& rows_taps,
                                 const std::vector<std::vector<Tap>>& cols_taps, const Tensor& x, Tensor* y) const {
    const int rank = x.dims();
    const int64_t h = x.dim_size(rank - 2), w = x.dim_size(rank - 1);
    const int64_t oh = y->dim_size(rank - 2), ow = y->dim_size(rank - 1);
    const int64_t planes = y->NumElements() / (oh * ow);
    const TapTable rt = Flatten(rows_taps), ct = Flatten(cols_taps);
    const float* xd = x.data<float>();
    float* yd = y->data<float>();
    const bool nearest = rt.width == 1 && ct.width == 1;
    ParallelForIfLarge(ctx, planes * oh, planes * oh * ow * rt.width * ct.width, [&](int64_t begin, int64_t end) {
      // Bilinear: input rows resized across once (into OW values) and kept while consecutive
      // output rows read them (upsampling by k reads each k times), so the per-pixel gathers
      // run once per input row and the output rows are a blend of two contiguous rows.
      struct AcrossRows {
        const TapTable& ct;
        int64_t w, ow;
        std::pair<int64_t, int64_t> key[2] = {{-1, -1}, {-1, -1}};  // (plane, input row) held.
        std::vector<float> row[2];
        const float* Row(int64_t plane, int64_t index, const float* in_plane) {
          for (int i = 0; i < 2; ++i) {
            if (key[i] == std::make_pair(plane, index)) return row[i].data();
          }
          // Replace the earlier row: the output rows move forward through the input.
          const int slot = key[0] <= key[1] ? 0 : 1;
          key[slot] = {plane, index};
          row[slot].resize(ow);
          const int64_t* ci = ct.index.data();
          const float* cw = ct.weight.data();
          float* dst = row[slot].data();
          const float* line = in_plane + index * w;
          // A zero weight (a coordinate on an input point, padded to two taps) must not
          // multiply its value: 0 * inf would turn an infinite input into NaN.
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t a = ci[2 * ox], b = ci[2 * ox + 1];
            dst[ox] = cw[2 * ox + 1] == 0.0f ? cw[2 * ox] * line[a] : cw[2 * ox] * line[a] + cw[2 * ox + 1] * line[b];
          }
          return dst;
        }
      } across{ct, w, ow};
      for (int64_t r = begin; r < end; ++r) {
        const int64_t plane = r / oh, oy = r % oh;
        const float* in = xd + plane * h * w;
        float* out = yd + plane * oh * ow + oy * ow;
        if (nearest) {
          const float* row = in + rt.index[oy] * w;
          for (int64_t ox = 0; ox < ow; ++ox) out[ox] = row[ct.index[ox]];
          continue;
        }
        if (rt.width == 2 && ct.width == 2) {  // Bilinear: two rows, two columns.
          const float w0 = rt.weight[2 * oy], w1 = rt.weight[2 * oy + 1];
          const float* h0 = across.Row(plane, rt.index[2 * oy], in);
          if (w1 == 0.0f) {
            for (int64_t ox = 0; ox < ow; ++ox) out[ox] = w0 * h0[ox];
          } else {
            const float* h1 = across.Row(plane, rt.index[2 * oy + 1], in);
            BlendArrays(h0, w0, h1, w1, out, ow);
          }
          continue;
        }
        for (int64_t ox = 0; ox < ow; ++ox) out[ox] = 0.0f;
        for (int ky = 0; ky < rt.width; ++ky) {
          const float wy = rt.weight[oy * rt.width + ky];
          if (wy == 0.0f) continue;
          const float* row = in + rt.index[oy * rt.width + ky] * w;
          for (int64_t ox = 0; ox < ow; ++ox) {
            float acc = 0.0f;
            for (int kx = 0; kx < ct.width; ++kx) {
              const float wx = ct.weight[ox * ct.width + kx];
              if (wx != 0.0f) acc += wx * row[ct.index[ox * ct.width + kx]];
            }
            out[ox] += wy * acc;
          }
        }
      }
    });
    return ctx->CheckCancelled();
  }

  // N,H,W,C order: each output pixel is the weighted sum of its taps' channel vectors
  // (nearest: one copy), output rows split over the intra-op threads.
  absl::Status ResizeNhwc(OpKernelContext* ctx, const std::vector<std::vector<Tap>>& rows_taps,
                          const std::vector<std::vector<Tap>>& cols_taps, const Tensor& x, Tensor* y) const {
    const int64_t n = x.dim_size(0), c = x.dim_size(1), h = x.dim_size(2), w = x.dim_size(3);
    const int64_t oh = y->dim_size(2), ow = y->dim_size(3);
    const float* xd = x.data<float>();
    float* yd = y->data<float>();
    ParallelForIfLarge(ctx, n * oh, n * oh * ow * c, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / oh, oy = r % oh;
        for (int64_t ox = 0; ox < ow; ++ox) {
          float* out = yd + (r * ow + ox) * c;
          bool first = true;
          for (const Tap& ty : rows_taps[oy]) {
            for (const Tap& tx : cols_taps[ox]) {
              const float weight = static_cast<float>(ty.weight * tx.weight);
              // A zero weight must not multiply its value: 0 * inf would make NaN.
              if (weight == 0.0f) continue;
              const float* src = xd + ((b * h + ty.index) * w + tx.index) * c;
              if (first) {
                if (weight == 1.0f) {
                  std::copy_n(src, c, out);
                } else {
                  for (int64_t ch = 0; ch < c; ++ch) out[ch] = weight * src[ch];
                }
                first = false;
              } else {
                BlendArrays(out, 1.0f, src, weight, out, c);
              }
            }
          }
          if (first) std::fill(out, out + c, 0.0f);
        }
      }
    });
    return ctx->CheckCancelled();
  }

  bool Antialiased(double scale) const { return antialias_ != 0 && mode_ != "nearest" && scale < 1; }

  // Where output coordinate `o` of dim `d` falls in the input.
  double Original(int d, int64_t o, int64_t in_len, int64_t out_len, double scale,
                  const std::vector<double>& roi, int rank) const {
    if (transform_ == "half_pixel") return (o + 0.5) / scale - 0.5;
    if (transform_ == "half_pixel_symmetric") {
      // half_pixel about the input's centre: differs where out_len is in_len * scale rounded.
      const double adjustment = out_len / (in_len * scale);
      return in_len / 2.0 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
    }
    if (transform_ == "pytorch_half_pixel") return out_len > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    // Like ONNX's reference, lengths in these formulas are in_len * scale, not rounded.
    const double scaled_len = in_len * scale;
    if (transform_ == "align_corners") return scaled_len > 1 ? o * (in_len - 1.0) / (scaled_len - 1.0) : 0.0;
    if (transform_ == "asymmetric") return o / scale;
    if (transform_ == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
    // tf_crop_and_resize
    const double start = roi[d], end = roi[d + rank];
    return scaled_len > 1 ? start * (in_len - 1) + o * (end - start) * (in_len - 1) / (scaled_len - 1)
                          : 0.5 * (start + end) * (in_len - 1);
  }

  std::vector<Tap> TapsFor(int d, int64_t o, int64_t in_len, int64_t out_len, double scale,
                           const std::vector<double>& roi, int rank) const {
    double x = Original(d, o, in_len, out_len, scale, roi, rank);
    if (transform_ == "tf_crop_and_resize" && !(x >= 0 && x <= in_len - 1)) return {{-1, 1.0}};  // NaN too.
    auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in_len - 1); };
    if (Antialiased(scale)) return AntialiasTaps(x, in_len, scale, clamp);
    // Far outside the input every tap clamps to an edge anyway; bounded, the casts below are
    // defined (a roi of 1e30 made them undefined behaviour).
    x = std::isnan(x) ? 0.0 : std::min(std::max(x, -4.0), in_len + 3.0);
    if (mode_ == "nearest") {
      int64_t i;
      if (nearest_mode_ == "floor") {
        i = static_cast<int64_t>(std::floor(x));
      } else if (nearest_mode_ == "ceil") {
        i = static_cast<int64_t>(std::ceil(x));
      } else {
        const double f = std::floor(x);
        const double frac = x - f;
        if (frac == 0.5) {
          i = static_cast<int64_t>(nearest_mode_ == "round_prefer_ceil" ? f + 1 : f);
        } else {
          i = static_cast<int64_t>(std::round(x));
        }
      }
      return {{clamp(i), 1.0}};
    }
    if (mode_ == "linear") {
      const double xc = std::min(std::max(x, 0.0), static_cast<double>(in_len - 1));
      const int64_t lo = static_cast<int64_t>(std::floor(xc));
      const int64_t hi = std::min(lo + 1, in_len - 1);
      const double frac = xc - lo;
      if (hi == lo || frac == 0) return {{lo, 1.0}};
      return {{lo, 1.0 - frac}, {hi, frac}};
    }
    // Cubic convolution with coefficient a over the four nearest input points.
    const double a = cubic_a_;
    const int64_t base = static_cast<int64_t>(std::floor(x));
    const double t = x - base;
    auto kernel = [a](double s) {
      s = std::fabs(s);
      if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
      if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
      return 0.0;
    };
    std::vector<Tap> out;
    double total = 0;
    for (int k = -1; k <= 2; ++k) {
      const int64_t i = base + k;
      double w = kernel(t - k);
      if (exclude_outside_ && (i < 0 || i >= in_len)) w = 0;
      out.push_back({clamp(i), w});
      total += w;
    }
    if (exclude_outside_ && total != 0) {
      for (Tap& tap : out) tap.weight /= total;
    }
    return out;
  }

  // Downsampling linear or cubic with antialias: the filter stretched by 1/scale, so that each
  // output averages every input it covers, its weights normalized to sum to 1. Taps are the
  // input points within the stretched support around x (radius 1/scale for linear, 2/scale
  // for cubic), edges repeated.
  template <typename Clamp>
  std::vector<Tap> AntialiasTaps(double x, int64_t in_len, double scale, Clamp clamp) const {
    const double support = mode_ == "linear" ? 1.0 : 2.0;
    // Beyond the support past either edge every tap reads an edge; bounded so the casts hold.
    const double reach = support / scale + 2;
    x = std::isnan(x) ? 0.0 : std::min(std::max(x, -reach), in_len - 1 + reach);
    // base: the input point at or just below x, taken from the left when x is on a point
    // (ONNX's reference picks its taps that way; the weight there is then 0 or symmetric).
    int64_t base = static_cast<int64_t>(std::floor(x));
    if (static_cast<double>(base) == x) --base;
    const double ratio = x - base;  // In (0, 1].
    const int64_t first = static_cast<int64_t>(std::floor(-support / scale)) + 1;
    const int64_t last = 1 - first;  // Symmetric about base + 1/2.
    const double a = cubic_a_;
    auto cubic = [a](double s) {
      s = std::fabs(s);
      if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
      if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
      return 0.0;
    };
    std::vector<Tap> out;
    out.reserve(last - first + 1);
    double total = 0;
    for (int64_t k = first; k <= last; ++k) {
      const double arg = scale * (k - ratio);
      double w = mode_ == "linear" ? std::max(0.0, 1 - std::fabs(arg)) : cubic(arg);
      out.push_back({base + k, w});
      total += w;
    }
    if (total != 0) {
      for (Tap& t : out) t.weight /= total;
    }
    if (exclude_outside_) {
      total = 0;
      for (Tap& t : out) {
        if (t.index < 0 || t.index >= in_len) t.weight = 0;
        total += t.weight;
      }
      if (total != 0) {
        for (Tap& t : out) t.weight /= total;
      }
    }
    for (Tap& t : out) t.index = clamp(t.index);
    return out;
  }

  std::string transform_, mode_, nearest_mode_, policy_;
  std::vector<int64_t> axes_;
  int64_t antialias_ = 0;
  float cubic_a_ = -0.75f, extrapolation_ = 0;
  int64_t exclude_outside_ = 0;
  bool nhwc_ = false;
  bool has_roi_ = false, has_scales_ = false, has_sizes_ = false;
};

#define SL_REGISTER_RESIZE(T) \
  REGISTER_KERNEL_BUILDER(Name("Onnx>Resize").Device(DEVICE_CPU).TypeConstraint<T>("T"), ResizeOp<T>)
SL_REGISTER_RESIZE(float);
SL_REGISTER_RESIZE(double);
SL_REGISTER_RESIZE(half);
SL_REGISTER_RESIZE(uint8_t);
SL_REGISTER_RESIZE(int8_t);
SL_REGISTER_RESIZE(int32_t);
SL_REGISTER_RESIZE(int64_t);
#undef SL_REGISTER_RESIZE

}  // namespace
}  // namespace sluice
