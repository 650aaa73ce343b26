// Dropout (ONNX): identity with an all-true mask unless training_mode is true.
#include <random>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
class DropoutOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("seed", &seed_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("default_ratio", &default_ratio_));
    // ratio and training_mode are optional inputs: list(type) attrs of length 0 or 1.
    DataTypeVector ratio_type, training_type;
    SL_RETURN_IF_ERROR(ctx->GetAttr("T1", &ratio_type));
    SL_RETURN_IF_ERROR(ctx->GetAttr("T2", &training_type));
    has_ratio_ = !ratio_type.empty();
    has_training_ = !training_type.empty();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    double ratio = default_ratio_;
    bool training = false;
    int next = 1;
    if (has_ratio_) ratio = ScalarAsDouble(ctx->input(next++));
    if (has_training_) training = ScalarAsDouble(ctx->input(next++)) != 0;
    Tensor* mask;
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, x.shape(), &mask));
    bool* m = mask->data<bool>();
    if (!training || ratio == 0.0) {
      SL_RETURN_IF_ERROR(ctx->set_output(0, x));
      std::fill(m, m + x.NumElements(), true);
      return absl::OkStatus();
    }
    if (!(ratio >= 0.0 && ratio < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("Dropout ratio must be in [0, 1), got ", ratio));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    // With a seed, the mask is the one numpy draws after np.random.seed(seed):
    // uniform(0, 1) >= ratio per element, from MT19937 doubles of 53 random bits.
    std::mt19937 rng(seed_ >= 0 ? static_cast<uint32_t>(seed_) : std::random_device{}());
    auto uniform = [&rng]() {
      const uint32_t a = rng() >> 5, b = rng() >> 6;
      return (a * 67108864.0 + b) / 9007199254740992.0;
    };
    const double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      m[i] = uniform() >= ratio;
      if constexpr (std::is_same_v<T, double>) {
        y->data<T>()[i] = m[i] ? x.data<T>()[i] * scale : 0.0;
      } else {
        y->data<T>()[i] = m[i] ? T(static_cast<float>(x.data<T>()[i]) * scale) : T(0);
      }
    }
    return absl::OkStatus();
  }

 private:
  static double ScalarAsDouble(const Tensor& t) {
    double v = 0;
    VisitDataType(t.dtype(), [&](auto tag) {
      using V = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, half> || std::is_same_v<V, bfloat16>) {
        if (t.NumElements() > 0) v = static_cast<double>(static_cast<float>(t.flat<V>()[0]));
      }
    });
    return v;
  }
  int64_t seed_ = -1;
  float default_ratio_ = 0.5f;
  bool has_ratio_ = false, has_training_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Dropout").Device(DEVICE_CPU).TypeConstraint<float>("T"), DropoutOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Dropout").Device(DEVICE_CPU).TypeConstraint<double>("T"), DropoutOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>Dropout").Device(DEVICE_CPU).TypeConstraint<half>("T"), DropoutOp<half>);

}  // namespace
}  // namespace sluice
