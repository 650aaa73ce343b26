// RoiAlign (ONNX): average or max of bilinearly interpolated samples per output bin.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Bilinear sample of one H x W plane at (y, x), as the four corner weights and offsets.
// Samples more than one pixel outside the plane contribute nothing (valid = false).
struct BilinearTaps {
  bool valid = false;
  int64_t offset[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

BilinearTaps Taps(double y, double x, int64_t height, int64_t width) {
  BilinearTaps t;
  // An empty plane has nothing to sample: its corners would be at offset -1.
  if (height <= 0 || width <= 0) return t;
  if (!(y >= -1.0 && y <= height && x >= -1.0 && x <= width)) return t;  // NaN too.
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_low = y_high = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_low = x_high = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - y_low, lx = x - x_low, hy = 1.0 - ly, hx = 1.0 - lx;
  t.valid = true;
  t.offset[0] = y_low * width + x_low;
  t.offset[1] = y_low * width + x_high;
  t.offset[2] = y_high * width + x_low;
  t.offset[3] = y_high * width + x_high;
  t.weight[0] = hy * hx;
  t.weight[1] = hy * lx;
  t.weight[2] = ly * hx;
  t.weight[3] = ly * lx;
  return t;
}

// The adaptive sampling grid grows with the roi; past this many samples per bin axis the roi
// is far larger than any real feature map (and the sample count would overflow memory).
constexpr double kMaxAdaptiveSamples = 1 << 16;

template <typename T>
class RoiAlignOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string mode, transform;
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
    SL_RETURN_IF_ERROR(ctx->GetAttr("coordinate_transformation_mode", &transform));
    SL_RETURN_IF_ERROR(ctx->GetAttr("output_height", &output_height_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("output_width", &output_width_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("sampling_ratio", &sampling_ratio_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("spatial_scale", &spatial_scale_));
    if (output_height_ < 1 || output_width_ < 1 || sampling_ratio_ < 0) {
      return absl::InvalidArgumentError(
          "RoiAlign: output_height and output_width must be >= 1 and sampling_ratio >= 0");
    }
    max_mode_ = mode == "max";
    half_pixel_ = transform == "half_pixel";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& rois = ctx->input(1);
    const Tensor& batch_indices = ctx->input(2);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("RoiAlign: x must be N x C x H x W, got ", x.shape().DebugString()));
    }
    if (rois.dims() != 2 || rois.dim_size(1) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("RoiAlign: rois must be [num_rois, 4], got ", rois.shape().DebugString()));
    }
    const int64_t num_rois = rois.dim_size(0);
    if (batch_indices.dims() != 1 || batch_indices.dim_size(0) != num_rois) {
      return absl::InvalidArgumentError(absl::StrCat("RoiAlign: batch_indices must be [", num_rois,
                                                     "], got ", batch_indices.shape().DebugString()));
    }
    const int64_t batch = x.dim_size(0), channels = x.dim_size(1);
    const int64_t height = x.dim_size(2), width = x.dim_size(3);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(
        0, TensorShape({num_rois, channels, output_height_, output_width_}), &y));
    const T* in = x.data<T>();
    const T* roi_data = rois.data<T>();
    const int64_t* batch_data = batch_indices.data<int64_t>();
    T* out = y->data<T>();
    const double offset = half_pixel_ ? 0.5 : 0.0;
    const int64_t plane = height * width, out_plane = output_height_ * output_width_;
    std::vector<BilinearTaps> taps;
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t n = batch_data[r];
      if (n < 0 || n >= batch) {
        return absl::InvalidArgumentError(
            absl::StrCat("RoiAlign: batch index ", n, " of roi ", r, " is outside [0, ", batch, ")"));
      }
      const T* roi = roi_data + r * 4;  // [x1, y1, x2, y2]
      const double start_w = static_cast<double>(roi[0]) * spatial_scale_ - offset;
      const double start_h = static_cast<double>(roi[1]) * spatial_scale_ - offset;
      double roi_w = static_cast<double>(roi[2]) * spatial_scale_ - offset - start_w;
      double roi_h = static_cast<double>(roi[3]) * spatial_scale_ - offset - start_h;
      if (!half_pixel_) {  // Legacy behaviour: rois at least one pixel wide.
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / output_height_, bin_w = roi_w / output_width_;
      if (!std::isfinite(start_h) || !std::isfinite(start_w) || !std::isfinite(bin_h) || !std::isfinite(bin_w)) {
        return absl::InvalidArgumentError(absl::StrCat("RoiAlign: roi ", r, " is not finite"));
      }
      // With sampling_ratio 0 the grid adapts to the bin size (ceil(bin) samples per axis).
      // A reversed roi (legacy half_pixel mode keeps its negative extent) still takes one sample.
      const double adaptive_h = std::max(std::ceil(bin_h), 1.0), adaptive_w = std::max(std::ceil(bin_w), 1.0);
      if (sampling_ratio_ == 0 && (adaptive_h > kMaxAdaptiveSamples || adaptive_w > kMaxAdaptiveSamples)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RoiAlign: roi ", r, " needs ", adaptive_h, " x ", adaptive_w,
            " samples per bin; give sampling_ratio or smaller rois"));
      }
      const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(adaptive_h);
      const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(adaptive_w);
      const double count = std::max<int64_t>(grid_h * grid_w, 1);
      for (int64_t ph = 0; ph < output_height_; ++ph) {
        for (int64_t pw = 0; pw < output_width_; ++pw) {
          // The bin's sample points are the same for every channel.
          taps.clear();
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            const double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h;
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w;
              taps.push_back(Taps(yy, xx, height, width));
            }
          }
          for (int64_t c = 0; c < channels; ++c) {
            const T* p = in + (n * channels + c) * plane;
            double acc = 0.0;
            bool first = true;
            for (const BilinearTaps& t : taps) {
              if (!t.valid) continue;
              if (max_mode_) {
                // As ONNX Runtime and ONNX's reference: the largest weighted corner value.
                double m = -std::numeric_limits<double>::infinity();
                for (int k = 0; k < 4; ++k) m = std::max(m, t.weight[k] * static_cast<double>(p[t.offset[k]]));
                acc = first ? m : std::max(acc, m);
                first = false;
              } else {
                for (int k = 0; k < 4; ++k) acc += t.weight[k] * static_cast<double>(p[t.offset[k]]);
              }
            }
            out[(r * channels + c) * out_plane + ph * output_width_ + pw] =
                static_cast<T>(max_mode_ ? acc : acc / count);
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t output_height_ = 1, output_width_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.0f;
  bool max_mode_ = false, half_pixel_ = true;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>RoiAlign").Device(DEVICE_CPU).TypeConstraint<float>("T1"), RoiAlignOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>RoiAlign").Device(DEVICE_CPU).TypeConstraint<double>("T1"), RoiAlignOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>RoiAlign").Device(DEVICE_CPU).TypeConstraint<half>("T1"), RoiAlignOp<half>);

}  // namespace
}  // namespace sluice
