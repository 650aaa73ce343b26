// BatchNormalization (every ONNX version, inference and training), InstanceNormalization,
// LayerNormalization and LRN. Statistics accumulate in double.
#include <cmath>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
double D(T v) {
  if constexpr (std::is_same_v<T, double>) return v;
  return static_cast<double>(static_cast<float>(v));
}

// X is N x C x D1..Dn. With spatial (the default) each channel has one statistic; without it
// (versions before 9) each channel-and-position has one, over the batch only.
template <typename T, typename U>
class BatchNormOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("epsilon", &epsilon_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("momentum", &momentum_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("training_mode", &training_));
    return ctx->GetAttr("spatial", &spatial_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 1) return absl::InvalidArgumentError("BatchNormalization needs X of rank >= 1");
    const int64_t n = x.dim_size(0), c = x.dims() > 1 ? x.dim_size(1) : 1;
    const int64_t inner = (n * c) == 0 ? 0 : x.NumElements() / (n * c);
    const int64_t stats = spatial_ ? c : c * inner;
    for (int i = 1; i < 5; ++i) {
      if (ctx->input(i).NumElements() != stats) {
        return absl::InvalidArgumentError(absl::StrCat(
            "BatchNormalization input ", i, " has ", ctx->input(i).NumElements(), " values; X ",
            x.shape().DebugString(), " needs ", stats, spatial_ ? " (one per channel)" : " (per channel and position)"));
      }
    }
    const auto scale = ctx->input(1).flat<U>();
    const auto bias = ctx->input(2).flat<U>();
    const Tensor& in_mean = ctx->input(3);
    const Tensor& in_var = ctx->input(4);
    auto stat_of = [&](int64_t ch, int64_t i) { return spatial_ ? ch : ch * inner + i; };

    std::vector<double> mean(stats), var(stats);
    if (training_) {
      std::vector<double> count(stats, 0);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* row = x.data<T>() + (b * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            mean[stat_of(ch, i)] += D(row[i]);
            count[stat_of(ch, i)] += 1;
          }
        }
      }
      for (int64_t s = 0; s < stats; ++s) mean[s] /= std::max(1.0, count[s]);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* row = x.data<T>() + (b * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            double d = D(row[i]) - mean[stat_of(ch, i)];
            var[stat_of(ch, i)] += d * d;
          }
        }
      }
      for (int64_t s = 0; s < stats; ++s) var[s] /= std::max(1.0, count[s]);  // Population variance.
    } else {
      for (int64_t s = 0; s < stats; ++s) {
        mean[s] = D(in_mean.flat<U>()[s]);
        var[s] = D(in_var.flat<U>()[s]);
      }
    }
    // y = x * a + b per statistic.
    std::vector<double> a(stats), shift(stats);
    for (int64_t s = 0; s < stats; ++s) {
      a[s] = D(scale[s]) / std::sqrt(var[s] + epsilon_);
      shift[s] = D(bias[s]) - mean[s] * a[s];
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const T* row = x.data<T>() + (b * c + ch) * inner;
        T* out = y->data<T>() + (b * c + ch) * inner;
        if (spatial_) {
          if constexpr (std::is_same_v<T, double>) {
            for (int64_t i = 0; i < inner; ++i) out[i] = row[i] * a[ch] + shift[ch];
          } else {
            const float av = static_cast<float>(a[ch]), bv = static_cast<float>(shift[ch]);
            for (int64_t i = 0; i < inner; ++i) out[i] = T(static_cast<float>(row[i]) * av + bv);
          }
        } else {
          for (int64_t i = 0; i < inner; ++i) out[i] = T(D(row[i]) * a[ch * inner + i] + shift[ch * inner + i]);
        }
      }
    }
    const TensorShape& stat_shape = in_mean.shape();
    Tensor *running_mean, *running_var, *saved_mean, *saved_var;
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, stat_shape, &running_mean));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, stat_shape, &running_var));
    SL_RETURN_IF_ERROR(ctx->allocate_output(3, stat_shape, &saved_mean));
    SL_RETURN_IF_ERROR(ctx->allocate_output(4, stat_shape, &saved_var));
    for (int64_t s = 0; s < stats; ++s) {
      double rm = D(in_mean.flat<U>()[s]), rv = D(in_var.flat<U>()[s]);
      if (training_) {
        rm = rm * momentum_ + mean[s] * (1 - momentum_);
        rv = rv * momentum_ + var[s] * (1 - momentum_);
      }
      running_mean->flat<U>()[s] = U(rm);
      running_var->flat<U>()[s] = U(rv);
      saved_mean->flat<U>()[s] = U(mean[s]);
      saved_var->flat<U>()[s] = U(var[s]);
    }
    return absl::OkStatus();
  }

 private:
  float epsilon_ = 1e-5f, momentum_ = 0.9f;
  bool training_ = false, spatial_ = true;
};

template <typename T>
class InstanceNormOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("epsilon", &epsilon_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 3) return absl::InvalidArgumentError("InstanceNormalization needs N x C x spatial input");
    const int64_t n = x.dim_size(0), c = x.dim_size(1), inner = x.NumElements() / std::max<int64_t>(1, n * c);
    if (ctx->input(1).NumElements() != c || ctx->input(2).NumElements() != c) {
      return absl::InvalidArgumentError("InstanceNormalization scale and B need one value per channel");
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const T* row = x.data<T>() + (b * c + ch) * inner;
        T* out = y->data<T>() + (b * c + ch) * inner;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < inner; ++i) mean += D(row[i]);
        mean /= inner;
        for (int64_t i = 0; i < inner; ++i) var += (D(row[i]) - mean) * (D(row[i]) - mean);
        var /= inner;
        const double a = D(ctx->input(1).flat<T>()[ch]) / std::sqrt(var + epsilon_);
        const double shift = D(ctx->input(2).flat<T>()[ch]) - mean * a;
        for (int64_t i = 0; i < inner; ++i) out[i] = T(D(row[i]) * a + shift);
      }
    }
    return absl::OkStatus();
  }

 private:
  float epsilon_ = 1e-5f;
};

template <typename T>
class LayerNormOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    return ctx->GetAttr("epsilon", &epsilon_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("LayerNormalization axis ", axis_, " is out of range for rank ", rank));
    }
    int64_t outer = 1;
    for (int i = 0; i < axis; ++i) outer *= x.dim_size(i);
    const int64_t inner = outer == 0 ? 0 : x.NumElements() / outer;
    const Tensor& scale = ctx->input(1);
    const Tensor* bias = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    if (scale.NumElements() == 0 || inner % scale.NumElements() != 0 ||
        (bias != nullptr && (bias->NumElements() == 0 || inner % bias->NumElements() != 0))) {
      return absl::InvalidArgumentError("LayerNormalization Scale and B must broadcast to the normalized dims");
    }
    Tensor *y, *mean_out, *inv_out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    DimVector stat_dims;
    for (int i = 0; i < rank; ++i) stat_dims.push_back(i < axis ? x.dim_size(i) : 1);
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape(stat_dims), &mean_out));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, TensorShape(stat_dims), &inv_out));
    const int64_t ns = scale.NumElements(), nb = bias ? bias->NumElements() : 1;
    if constexpr (std::is_same_v<T, float>) {
      if (ns == inner && (bias == nullptr || nb == inner)) {
        // The usual case (one scale and bias per normalized element): rows over the compute
        // pool, sums in eight double partials, the normalization in float.
        const float* sd = scale.data<float>();
        const float* bd = bias ? bias->data<float>() : nullptr;
        const float* xd = x.data<float>();
        float* yd = y->data<float>();
        float* md = mean_out->data<float>();
        float* id = inv_out->data<float>();
        ParallelForElements(ctx, outer, 4 * inner, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const float* row = xd + o * inner;
            float* out = yd + o * inner;
            double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int64_t i = 0;
            for (; i + 8 <= inner; i += 8) {
              for (int k = 0; k < 8; ++k) part[k] += row[i + k];
            }
            for (; i < inner; ++i) part[0] += row[i];
            const double mean = (part[0] + part[1] + part[2] + part[3] + part[4] + part[5] + part[6] + part[7]) / inner;
            for (double& p : part) p = 0;
            for (i = 0; i + 8 <= inner; i += 8) {
              for (int k = 0; k < 8; ++k) part[k] += (row[i + k] - mean) * (row[i + k] - mean);
            }
            for (; i < inner; ++i) part[0] += (row[i] - mean) * (row[i] - mean);
            const double var = (part[0] + part[1] + part[2] + part[3] + part[4] + part[5] + part[6] + part[7]) / inner;
            const double inv = 1.0 / std::sqrt(var + epsilon_);
            const float mf = static_cast<float>(mean), inf = static_cast<float>(inv);
            if (bd != nullptr) {
              for (int64_t j = 0; j < inner; ++j) out[j] = (row[j] - mf) * inf * sd[j] + bd[j];
            } else {
              for (int64_t j = 0; j < inner; ++j) out[j] = (row[j] - mf) * inf * sd[j];
            }
            md[o] = mf;
            id[o] = inf;
          }
        });
        return ctx->CheckCancelled();
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      const T* row = x.data<T>() + o * inner;
      T* out = y->data<T>() + o * inner;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i) mean += D(row[i]);
      mean /= inner;
      for (int64_t i = 0; i < inner; ++i) var += (D(row[i]) - mean) * (D(row[i]) - mean);
      var /= inner;
      const double inv = 1.0 / std::sqrt(var + epsilon_);
      for (int64_t i = 0; i < inner; ++i) {
        double v = (D(row[i]) - mean) * inv * D(scale.flat<T>()[i % ns]);
        if (bias) v += D(bias->flat<T>()[i % nb]);
        out[i] = T(v);
      }
      mean_out->flat<float>()[o] = static_cast<float>(mean);
      inv_out->flat<float>()[o] = static_cast<float>(inv);
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

template <typename T>
class LrnOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("beta", &beta_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("bias", &bias_));
    return ctx->GetAttr("size", &size_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 2) return absl::InvalidArgumentError("LRN needs N x C x ... input");
    const int64_t n = x.dim_size(0), c = x.dim_size(1), inner = x.NumElements() / std::max<int64_t>(1, n * c);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;  // floor and ceil of (size-1)/2
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t i = 0; i < inner; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
            double v = D(x.data<T>()[(b * c + k) * inner + i]);
            sq += v * v;
          }
          const int64_t at = (b * c + ch) * inner + i;
          y->data<T>()[at] = T(D(x.data<T>()[at]) / std::pow(bias_ + alpha_ / size_ * sq, beta_));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  float alpha_ = 1e-4f, beta_ = 0.75f, bias_ = 1.0f;
  int64_t size_ = 1;
};

#define SL_REGISTER_BN(T, U)                                                                  \
  REGISTER_KERNEL_BUILDER(Name("Onnx>BatchNormalization").Device(DEVICE_CPU).TypeConstraint<T>("T") \
                              .TypeConstraint<U>("T1").TypeConstraint<U>("T2"),                \
                          BatchNormOp<T, U>)
SL_REGISTER_BN(float, float);
SL_REGISTER_BN(double, double);
SL_REGISTER_BN(half, half);
SL_REGISTER_BN(half, float);
SL_REGISTER_BN(bfloat16, float);
#undef SL_REGISTER_BN

#define SL_REGISTER_NORMS(T)                                                                            \
  REGISTER_KERNEL_BUILDER(Name("Onnx>InstanceNormalization").Device(DEVICE_CPU).TypeConstraint<T>("T"),     \
                          InstanceNormOp<T>);                                                          \
  REGISTER_KERNEL_BUILDER(Name("Onnx>LayerNormalization").Device(DEVICE_CPU).TypeConstraint<T>("T")         \
                              .TypeConstraint<float>("U"),                                             \
                          LayerNormOp<T>);                                                             \
  REGISTER_KERNEL_BUILDER(Name("Onnx>LRN").Device(DEVICE_CPU).TypeConstraint<T>("T"), LrnOp<T>)
SL_REGISTER_NORMS(float);
SL_REGISTER_NORMS(double);
SL_REGISTER_NORMS(half);
#undef SL_REGISTER_NORMS

}  // namespace
}  // namespace sluice
