// Kernels for tensors in N,H,W,C order between NHWC-layout convolutions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/fast_math.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Per pixel, the inputs' channel vectors one after another.
class ConcatChannelsNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& first = ctx->input(0);
    if (first.dims() != 4) return absl::InvalidArgumentError("ConcatChannelsNhwc needs 4-D inputs");
    int64_t channels = 0;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 4 || t.dim_size(0) != first.dim_size(0) || t.dim_size(2) != first.dim_size(2) ||
          t.dim_size(3) != first.dim_size(3)) {
        return absl::InvalidArgumentError(absl::StrCat("ConcatChannelsNhwc input ", i, " is ",
                                                       t.shape().DebugString(), ", input 0 is ",
                                                       first.shape().DebugString()));
      }
      channels += t.dim_size(1);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(
        0, TensorShape({first.dim_size(0), channels, first.dim_size(2), first.dim_size(3)}), &out));
    const int64_t pixels = first.dim_size(0) * first.dim_size(2) * first.dim_size(3);
    float* out_data = out->data<float>();
    // Each input's values and channel count, looked up once.
    absl::InlinedVector<std::pair<const float*, int64_t>, 8> parts;
    for (int i = 0; i < ctx->num_inputs(); ++i) parts.push_back({ctx->input(i).data<float>(), ctx->input(i).dim_size(1)});
    ParallelForElements(ctx, pixels, channels, [&](int64_t begin, int64_t end) {
      float* dst = out_data + begin * channels;
      for (int64_t p = begin; p < end; ++p) {
        for (const auto& [data, c] : parts) {
          std::memcpy(dst, data + p * c, c * sizeof(float));
          dst += c;
        }
      }
    });
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("ConcatChannelsNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), ConcatChannelsNhwcOp);

class ChannelShuffleOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("groups", &groups_));
    std::vector<int64_t> shape;
    SL_RETURN_IF_ERROR(ctx->GetAttr("shape", &shape));
    if (shape.size() != 4 || groups_ < 1) {
      return absl::InvalidArgumentError(absl::StrCat("ChannelShuffle needs a 4-D shape, got ", shape.size(), " dims"));
    }
    SL_ASSIGN_OR_RETURN(shape_, TensorShape::FromDims(shape), "ChannelShuffle's shape");
    if (shape_.dim_size(1) % groups_ != 0) {
      return absl::InvalidArgumentError(absl::StrCat("ChannelShuffle of ", groups_, " groups of channels ",
                                                     shape_.DebugString(), ": the groups do not divide them"));
    }
    std::string layout;
    SL_RETURN_IF_ERROR(ctx->GetAttr("layout", &layout));
    nhwc_ = layout == "NHWC";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.NumElements() != shape_.num_elements() || (nhwc_ && x.dims() != 4)) {
      return absl::InvalidArgumentError(absl::StrCat("ChannelShuffle to ", shape_.DebugString(), " got ",
                                                     x.shape().DebugString(), nhwc_ ? " (NHWC)" : ""));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape_, &y));
    const int64_t n = shape_.dim_size(0), c = shape_.dim_size(1), hw = shape_.dim_size(2) * shape_.dim_size(3);
    const int64_t g = groups_, per = c / g;
    float* out = y->data<float>();
    if (!nhwc_) {  // Whole planes move.
      const float* in = x.data<float>();
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < g; ++i) {
          for (int64_t j = 0; j < per; ++j) {
            std::memcpy(out + (b * c + j * g + i) * hw, in + (b * c + i * per + j) * hw, hw * sizeof(float));
          }
        }
      }
      return absl::OkStatus();
    }
    std::vector<float> regrouped;
    const float* in = x.data<float>();
    if (x.shape() != shape_) {
      // x's N,C,H,W values in N,H,W,C order, of another shape than the output's (a Reshape may
      // regroup dims): its values in N,C,H,W order, read as the output's N,C,H,W then held
      // N,H,W,C, so that the per-pixel shuffle below applies.
      const int64_t xc = x.dim_size(1), xhw = x.dim_size(2) * x.dim_size(3);
      regrouped.resize(x.NumElements());
      for (int64_t b = 0; b < x.dim_size(0); ++b)
        for (int64_t ch = 0; ch < xc; ++ch)
          for (int64_t p = 0; p < xhw; ++p) {
            const int64_t flat = (b * xc + ch) * xhw + p;  // Its place in N,C,H,W order.
            const int64_t ob = flat / (c * hw), oc = flat / hw % c, op = flat % hw;
            regrouped[(ob * hw + op) * c + oc] = in[(b * xhw + p) * xc + ch];
          }
      in = regrouped.data();
    }
    // Each pixel's channels permuted; two groups (ShuffleNet's) interleave the halves.
    ParallelForElements(ctx, n * hw, c, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* src = in + p * c;
        float* dst = out + p * c;
        if (g == 2) {
          NchwToNhwcFewChannels(src, 1, 2, per, dst);  // Two "planes" of `per` into pairs.
          continue;
        }
        for (int64_t i = 0; i < g; ++i) {
          for (int64_t j = 0; j < per; ++j) dst[j * g + i] = src[i * per + j];
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t groups_ = 1;
  TensorShape shape_;
  bool nhwc_ = false;
};

REGISTER_KERNEL_BUILDER(Name("ChannelShuffle").Device(DEVICE_CPU).TypeConstraint<float>("T"), ChannelShuffleOp);

class NhwcViewOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("channels_last", &channels_last_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("NhwcView needs a 4-D input, got ", x.shape().DebugString()));
    }
    const int64_t a = x.dim_size(0), b = x.dim_size(1), c = x.dim_size(2), d = x.dim_size(3);
    const TensorShape view = channels_last_ ? TensorShape({a, c, d, b}) : TensorShape({a, d, b, c});
    SL_ASSIGN_OR_RETURN(Tensor y, x.Reshaped(view));
    return ctx->set_output(0, y);
  }

 private:
  bool channels_last_ = false;
};

REGISTER_KERNEL_BUILDER(Name("NhwcView").Device(DEVICE_CPU).TypeConstraint<float>("T"), NhwcViewOp);

class SliceChannelsNhwcOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("begin", &begin_));
    return ctx->GetAttr("end", &end_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4 || begin_ > end_ || end_ > x.dim_size(1)) {
      return absl::InvalidArgumentError(absl::StrCat("SliceChannelsNhwc of channels [", begin_, ", ", end_,
                                                     ") needs a 4-D input with that many, got ",
                                                     x.shape().DebugString()));
    }
    const int64_t c = x.dim_size(1), kept = end_ - begin_;
    Tensor* y;
    SL_RETURN_IF_ERROR(
        ctx->allocate_output(0, TensorShape({x.dim_size(0), kept, x.dim_size(2), x.dim_size(3)}), &y));
    const float* in = x.data<float>() + begin_;
    float* out = y->data<float>();
    ParallelForElements(ctx, x.dim_size(0) * x.dim_size(2) * x.dim_size(3), kept, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) std::memcpy(out + p * kept, in + p * c, kept * sizeof(float));
    });
    return absl::OkStatus();
  }

 private:
  int64_t begin_ = 0, end_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("SliceChannelsNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), SliceChannelsNhwcOp);

// Add's and Mul's numpy broadcasting of the N,C,H,W shapes is the same broadcasting of the
// N,H,W,C views, which is how the values lie; the usual case, equal shapes, goes element by
// element.
template <typename Fn>
class BinaryNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 4 || b.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(type_string(), " needs 4-D inputs, got ", a.shape().DebugString(),
                                                     " and ", b.shape().DebugString()));
    }
    if (a.shape() == b.shape()) {
      return ComputeBroadcastBinary<float, float, float>(ctx, a, b, ElementwiseFn::kCost, Fn());
    }
    // A per-image channel vector ([N,C,1,1], a squeeze-and-excitation scale) against a whole
    // tensor: each pixel's channels against the vector.
    auto is_vector_of = [](const Tensor& v, const Tensor& t) {
      return v.dim_size(0) == t.dim_size(0) && v.dim_size(1) == t.dim_size(1) && v.dim_size(2) == 1 &&
             v.dim_size(3) == 1;
    };
    if (is_vector_of(b, a) || is_vector_of(a, b)) {
      const bool vector_is_b = is_vector_of(b, a);
      const Tensor& t = vector_is_b ? a : b;
      const Tensor& v = vector_is_b ? b : a;
      Tensor* out;
      SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(vector_is_b ? 0 : 1, 0, t.shape(), &out));
      const int64_t c = t.dim_size(1), pixels = t.dim_size(2) * t.dim_size(3);
      const float* td = t.data<float>();
      const float* vd = v.data<float>();
      float* od = out->data<float>();
      ParallelForElements(ctx, t.dim_size(0) * pixels, c, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          Fn::Channels(td + p * c, vd + (p / pixels) * c, od + p * c, c);
        }
      });
      return absl::OkStatus();
    }
    auto nhwc_view = [](const Tensor& t) {
      return t.Reshaped(TensorShape({t.dim_size(0), t.dim_size(2), t.dim_size(3), t.dim_size(1)}));
    };
    SL_ASSIGN_OR_RETURN(Tensor a_view, nhwc_view(a));
    SL_ASSIGN_OR_RETURN(Tensor b_view, nhwc_view(b));
    absl::Status s = ComputeBroadcastBinary<float, float, float>(ctx, a_view, b_view, ElementwiseFn::kCost, Fn());
    if (!s.ok()) return s;
    const Tensor& c = ctx->output(0);
    SL_ASSIGN_OR_RETURN(Tensor c_nchw,
                        c.Reshaped(TensorShape({c.dim_size(0), c.dim_size(3), c.dim_size(1), c.dim_size(2)})));
    return ctx->set_output(0, c_nchw);
  }
};

// Channels: y = x (op) s along one pixel's n channels.
struct AddFloats {
  float operator()(float x, float y) const { return x + y; }
  static void Channels(const float* x, const float* s, float* y, int64_t n) { AddArrays(x, s, y, n); }
};
struct MulFloats {
  float operator()(float x, float y) const { return x * y; }
  static void Channels(const float* x, const float* s, float* y, int64_t n) { MulArrays(x, s, y, n); }
};

REGISTER_KERNEL_BUILDER(Name("AddNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), BinaryNhwcOp<AddFloats>);
REGISTER_KERNEL_BUILDER(Name("MulNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), BinaryNhwcOp<MulFloats>);

// y = x * scale[c] + shift[c] along each pixel's channels (an inference BatchNormalization).
class ChannelAffineNhwcOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    return GetNodeAttrOr(ctx->attrs(), "relu", false, &relu_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& shift = ctx->input(2);
    if (x.dims() != 4 || scale.NumElements() != x.dim_size(1) || shift.NumElements() != x.dim_size(1)) {
      return absl::InvalidArgumentError(absl::StrCat("ChannelAffineNhwc needs a 4-D input and [C] scale and shift, got ",
                                                     x.shape().DebugString(), ", ", scale.shape().DebugString(),
                                                     " and ", shift.shape().DebugString()));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    const int64_t c = x.dim_size(1);
    const float* xd = x.data<float>();
    const float* sd = scale.data<float>();
    const float* bd = shift.data<float>();
    float* yd = y->data<float>();
    ParallelForElements(ctx, c == 0 ? 0 : x.NumElements() / c, 2 * c, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        if (relu_) {
          AffineReluArray(xd + p * c, sd, bd, yd + p * c, c);
        } else {
          AffineArray(xd + p * c, sd, bd, yd + p * c, c);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool relu_ = false;
};

REGISTER_KERNEL_BUILDER(Name("ChannelAffineNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), ChannelAffineNhwcOp);

// The mean of each image's channel vectors, pixel by pixel (each channel sums its pixels in
// the same order as the N,C,H,W kernel does).
class GlobalAveragePoolNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("GlobalAveragePoolNhwc needs a 4-D input, got ",
                                                     x.shape().DebugString()));
    }
    const int64_t n = x.dim_size(0), c = x.dim_size(1), pixels = x.dim_size(2) * x.dim_size(3);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n, c, 1, 1}), &y));
    const float* xd = x.data<float>();
    float* yd = y->data<float>();
    std::vector<float> sum(c);
    for (int64_t b = 0; b < n; ++b) {
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t p = 0; p < pixels; ++p) AddInto(sum.data(), xd + (b * pixels + p) * c, c);
      for (int64_t ch = 0; ch < c; ++ch) yd[b * c + ch] = pixels > 0 ? sum[ch] / static_cast<float>(pixels) : NAN;
    }
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("GlobalAveragePoolNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        GlobalAveragePoolNhwcOp);

}  // namespace
}  // namespace sluice
