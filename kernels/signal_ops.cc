// DFT, STFT and MelWeightMatrix (ONNX opset 17). Complex values are a trailing dim of 2
// (real, imaginary), real inputs a trailing dim of 1; transforms run in double precision.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/fft.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The value of a one-element integer or floating-point tensor.
absl::StatusOr<double> ScalarValue(const Tensor& t, const char* what) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must hold one value, not ", t.shape().DebugString()));
  }
  double v = 0;
  bool ok = false;
  VisitDataType(t.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, half> || std::is_same_v<V, bfloat16>) {
      v = static_cast<double>(t.data<V>()[0]);
      ok = true;
    }
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(what, " has unsupported type ", DataTypeString(t.dtype())));
  return v;
}

absl::StatusOr<int64_t> PositiveInt(const Tensor& t, const char* what) {
  SL_ASSIGN_OR_RETURN(double v, ScalarValue(t, what));
  if (!(v >= 1) || v != std::floor(v) || v > 9.0e15) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a positive integer, not ", v));
  }
  return static_cast<int64_t>(v);
}

template <typename T>
class DftOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t inverse = 0, onesided = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("inverse", &inverse));
    SL_RETURN_IF_ERROR(ctx->GetAttr("onesided", &onesided));
    DataTypeVector length, axis;
    SL_RETURN_IF_ERROR(ctx->GetAttr("T2", &length));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Taxis", &axis));
    has_length_ = !length.empty();
    has_axis_ = !axis.empty();
    inverse_ = inverse != 0;
    onesided_ = onesided != 0;
    if (inverse_ && onesided_) {
      return absl::InvalidArgumentError("DFT: inverse and onesided together are not supported");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    if (rank < 2 || (x.dim_size(rank - 1) != 1 && x.dim_size(rank - 1) != 2)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DFT input must be [batch, signal..., 1 or 2] (real or complex), not ", x.shape().DebugString()));
    }
    int64_t given_axis = axis_;
    if (has_axis_) {
      SL_ASSIGN_OR_RETURN(double v, ScalarValue(ctx->input(has_length_ ? 2 : 1), "DFT axis"));
      if (v != std::floor(v) || !(std::fabs(v) < 1e9)) {
        return absl::InvalidArgumentError(absl::StrCat("DFT axis must be an integer, not ", v));
      }
      given_axis = static_cast<int64_t>(v);
    }
    const int64_t axis = given_axis < 0 ? given_axis + rank : given_axis;
    if (axis < 0 || axis > rank - 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("DFT axis ", given_axis, " is not a signal dim of ", x.shape().DebugString()));
    }
    const bool complex_in = x.dim_size(rank - 1) == 2;
    if (complex_in && onesided_) {
      return absl::InvalidArgumentError("DFT: onesided output needs a real input");
    }
    const int64_t len = x.dim_size(axis);
    int64_t n = len;
    if (has_length_) {
      SL_ASSIGN_OR_RETURN(n, PositiveInt(ctx->input(1), "DFT dft_length"));
    }
    const int64_t out_len = onesided_ ? n / 2 + 1 : n;
    DimVector out_dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
    out_dims[axis] = out_len;
    out_dims[rank - 1] = 2;
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim_size(d);
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim_size(d);
    const int64_t comps = complex_in ? 2 : 1;
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    FftPlan plan(n, inverse_);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    std::vector<std::complex<double>> line(n), scratch;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (j >= len) {
            line[j] = 0.0;  // dft_length past the signal pads with zeros.
            continue;
          }
          const T* v = xd + ((o * len + j) * inner + i) * comps;
          line[j] = {static_cast<double>(v[0]), complex_in ? static_cast<double>(v[1]) : 0.0};
        }
        plan.Run(line.data(), &scratch);
        for (int64_t j = 0; j < out_len; ++j) {
          T* out = yd + ((o * out_len + j) * inner + i) * 2;
          out[0] = FromDouble<T>(line[j].real() * scale);
          out[1] = FromDouble<T>(line[j].imag() * scale);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 1;
  bool has_length_ = false, has_axis_ = false;
  bool inverse_ = false;
  bool onesided_ = false;
};

template <typename T>
class StftOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    DataTypeVector window, length;
    int64_t onesided = 1;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Twindow", &window));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tlength", &length));
    SL_RETURN_IF_ERROR(ctx->GetAttr("onesided", &onesided));
    if (window.size() > 1 || length.size() > 1) {
      return absl::InvalidArgumentError("STFT takes at most one window and one frame_length");
    }
    has_window_ = !window.empty();
    has_length_ = !length.empty();
    onesided_ = onesided != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& signal = ctx->input(0);
    if (signal.dims() != 3 || (signal.dim_size(2) != 1 && signal.dim_size(2) != 2)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "STFT signal must be [batch, length, 1 or 2] (real or complex), not ", signal.shape().DebugString()));
    }
    const bool complex_in = signal.dim_size(2) == 2;
    if (complex_in && onesided_) return absl::InvalidArgumentError("STFT: onesided output needs a real signal");
    SL_ASSIGN_OR_RETURN(int64_t step, PositiveInt(ctx->input(1), "STFT frame_step"));
    const Tensor* window = has_window_ ? &ctx->input(2) : nullptr;
    int64_t frame = -1;
    if (window != nullptr) {
      if (window->dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("STFT window must be 1-D, not ", window->shape().DebugString()));
      }
      frame = window->dim_size(0);
    }
    if (has_length_) {
      SL_ASSIGN_OR_RETURN(int64_t length, PositiveInt(ctx->input(has_window_ ? 3 : 2), "STFT frame_length"));
      if (frame >= 0 && frame != length) {
        return absl::InvalidArgumentError(
            absl::StrCat("STFT frame_length ", length, " differs from the window's length ", frame));
      }
      frame = length;
    }
    if (frame <= 0) return absl::InvalidArgumentError("STFT needs a window or a frame_length");
    const int64_t batch = signal.dim_size(0), len = signal.dim_size(1);
    if (len < frame) {
      return absl::InvalidArgumentError(absl::StrCat("STFT signal of length ", len, " is shorter than a frame (", frame, ")"));
    }
    const int64_t frames = (len - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({batch, frames, bins, 2}), &y));
    const int64_t comps = complex_in ? 2 : 1;
    const T* sd = signal.data<T>();
    const T* wd = window != nullptr ? window->data<T>() : nullptr;
    T* yd = y->data<T>();
    FftPlan plan(frame, false);
    std::vector<std::complex<double>> line(frame), scratch;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t j = 0; j < frame; ++j) {
          const T* v = sd + (b * len + f * step + j) * comps;
          const double w = wd != nullptr ? static_cast<double>(wd[j]) : 1.0;
          line[j] = {static_cast<double>(v[0]) * w, complex_in ? static_cast<double>(v[1]) * w : 0.0};
        }
        plan.Run(line.data(), &scratch);
        T* out = yd + (b * frames + f) * bins * 2;
        for (int64_t k = 0; k < bins; ++k) {
          out[2 * k] = FromDouble<T>(line[k].real());
          out[2 * k + 1] = FromDouble<T>(line[k].imag());
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool has_window_ = false, has_length_ = false, onesided_ = true;
};

// Triangular filters between mel-spaced points of [lower_edge_hertz, upper_edge_hertz], each
// point snapped down to a DFT bin: output[bin, mel] rises from 0 at the left point to 1 at
// the center and falls to 0 at the right.
class MelWeightMatrixOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(int64_t num_mel, PositiveInt(ctx->input(0), "MelWeightMatrix num_mel_bins"));
    SL_ASSIGN_OR_RETURN(int64_t dft_length, PositiveInt(ctx->input(1), "MelWeightMatrix dft_length"));
    SL_ASSIGN_OR_RETURN(int64_t sample_rate, PositiveInt(ctx->input(2), "MelWeightMatrix sample_rate"));
    SL_ASSIGN_OR_RETURN(double lower, ScalarValue(ctx->input(3), "MelWeightMatrix lower_edge_hertz"));
    SL_ASSIGN_OR_RETURN(double upper, ScalarValue(ctx->input(4), "MelWeightMatrix upper_edge_hertz"));
    if (!(lower >= 0 && lower < upper && upper <= sample_rate / 2.0)) {
      return absl::InvalidArgumentError(absl::StrCat("MelWeightMatrix needs 0 <= lower_edge_hertz < upper_edge_hertz <= ",
                                                     "sample_rate / 2; got ", lower, ", ", upper, ", ", sample_rate));
    }
    const int64_t num_bins = dft_length / 2 + 1;
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims({num_bins, num_mel}));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));  // Before sizing buffers by it.
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(num_mel + 2);
    std::vector<int64_t> points(num_mel + 2);
    for (int64_t i = 0; i < num_mel + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (i * mel_step + low_mel) / 2595.0) - 1.0);
      points[i] = static_cast<int64_t>(std::floor((dft_length + 1) * hz / sample_rate));
      if (points[i] < 0 || points[i] >= num_bins) {
        return absl::InvalidArgumentError(absl::StrCat("MelWeightMatrix: a filter edge falls on DFT bin ", points[i],
                                                       ", outside the ", num_bins, " bins"));
      }
    }
    bool ok = false;
    VisitDataType(y->dtype(), [&](auto tag) {
      using V = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, half> || std::is_same_v<V, bfloat16>) {
        ok = true;
        V* w = y->data<V>();
        std::fill(w, w + num_bins * num_mel, FromDouble<V>(0.0));
        for (int64_t m = 0; m < num_mel; ++m) {
          const int64_t left = points[m], center = points[m + 1], right = points[m + 2];
          if (center == left) {
            w[center * num_mel + m] = FromDouble<V>(1.0);
          } else {
            for (int64_t j = left; j <= center; ++j) {
              w[j * num_mel + m] = FromDouble<V>(static_cast<double>(j - left) / static_cast<double>(center - left));
            }
          }
          for (int64_t j = center; j < right; ++j) {
            w[j * num_mel + m] = FromDouble<V>(static_cast<double>(right - j) / static_cast<double>(right - center));
          }
        }
      }
    });
    if (!ok) return absl::InvalidArgumentError("MelWeightMatrix: unsupported output_datatype");
    return absl::OkStatus();
  }
};

struct RegisterSignalKernels {
  RegisterSignalKernels() {
    RegisterCpuKernels("Onnx>DFT", "T1", FloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<DftOp<typename decltype(t)::type>>();
    });
    RegisterCpuKernels("Onnx>STFT", "T1", FloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<StftOp<typename decltype(t)::type>>();
    });
  }
} register_signal_kernels;

REGISTER_KERNEL_BUILDER(Name("Onnx>MelWeightMatrix").Device(DEVICE_CPU), MelWeightMatrixOp);

}  // namespace
}  // namespace sluice
