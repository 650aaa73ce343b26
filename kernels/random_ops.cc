// Random generators (ONNX RandomUniform, RandomNormal, their *Like forms, Bernoulli). A seed
// in [0, 2^32) reproduces numpy's legacy generator after np.random.seed(int(seed)): MT19937,
// doubles from 53 random bits, normals from the polar method with its cached second value.
// Each run starts the stream afresh, so a seeded node gives the same values every run.
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// numpy's RandomState draws, for one run of one kernel.
class NumpyRandom {
 public:
  explicit NumpyRandom(uint32_t seed) : mt_(seed) {}

  // random_sample(): [0, 1) from 53 random bits.
  double Uniform() {
    const uint32_t a = mt_() >> 5, b = mt_() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  // standard_normal(): Marsaglia's polar method, returning the second value of each pair
  // first and caching the other.
  double Gauss() {
    if (has_gauss_) {
      has_gauss_ = false;
      return gauss_;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * Uniform() - 1.0;
      x2 = 2.0 * Uniform() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    has_gauss_ = true;
    return f * x2;
  }

 private:
  std::mt19937 mt_;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

// The float `seed` attr: negative for a nondeterministic seed; others must be finite and are
// taken modulo 2^32 after dropping the fraction.
class SeedAttr {
 public:
  absl::Status Parse(OpKernelConstruction* ctx) {
    float seed;
    SL_RETURN_IF_ERROR(ctx->GetAttr("seed", &seed));
    if (!std::isfinite(seed)) return absl::InvalidArgumentError(absl::StrCat("seed must be finite, got ", seed));
    random_ = seed < 0;
    if (!random_) seed_ = static_cast<uint32_t>(std::fmod(std::floor(static_cast<double>(seed)), 4294967296.0));
    return absl::OkStatus();
  }
  NumpyRandom Make() const { return NumpyRandom(random_ ? std::random_device{}() : seed_); }

 private:
  bool random_ = true;
  uint32_t seed_ = 0;
};

enum class Distribution { kUniform, kNormal };

// RandomUniform / RandomNormal (shape attr) and their *Like forms (the input's shape).
template <typename T, Distribution kDist, bool kLike>
class RandomOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(seed_.Parse(ctx));
    float a, b;
    if (kDist == Distribution::kUniform) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("low", &a));
      SL_RETURN_IF_ERROR(ctx->GetAttr("high", &b));
    } else {
      SL_RETURN_IF_ERROR(ctx->GetAttr("mean", &a));
      SL_RETURN_IF_ERROR(ctx->GetAttr("scale", &b));
    }
    a_ = a;
    b_ = b;
    if constexpr (!kLike) {
      std::vector<int64_t> shape;
      SL_RETURN_IF_ERROR(ctx->GetAttr("shape", &shape));
      for (int64_t d : shape) {
        if (d < 0) return absl::InvalidArgumentError(absl::StrCat("shape dims must be >= 0, got ", d));
      }
      shape_ = TensorShape(shape);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, kLike ? ctx->input(0).shape() : shape_, &y));
    NumpyRandom rng = seed_.Make();
    T* out = y->data<T>();
    for (int64_t i = 0; i < y->NumElements(); ++i) {
      // numpy: low + (high - low) * random_sample(); loc + scale * standard_normal().
      const double v = kDist == Distribution::kUniform ? a_ + (b_ - a_) * rng.Uniform() : a_ + b_ * rng.Gauss();
      out[i] = static_cast<T>(v);
    }
    return absl::OkStatus();
  }

 private:
  SeedAttr seed_;
  double a_ = 0, b_ = 1;  // low, high or mean, scale
  TensorShape shape_;
};

// Bernoulli as ONNX's function body defines it: Cast(RandomUniformLike(input) < input), the
// uniform draws rounded to the input's type before the comparison.
template <typename Out>
class BernoulliOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return seed_.Parse(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& p = ctx->input(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, p.shape(), &y));
    NumpyRandom rng = seed_.Make();
    Out* out = y->data<Out>();
    absl::Status status;
    VisitDataType(p.dtype(), [&](auto tag) {
      using In = typename decltype(tag)::type;
      if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double> || std::is_same_v<In, half>) {
        const In* in = p.data<In>();
        for (int64_t i = 0; i < p.NumElements(); ++i) {
          const double prob = static_cast<double>(in[i]);
          if (!(prob >= 0.0 && prob <= 1.0)) {
            status = absl::InvalidArgumentError(
                absl::StrCat("Bernoulli: probabilities must be in [0, 1], got ", prob, " at ", i));
            return;
          }
          const double u = static_cast<double>(static_cast<In>(rng.Uniform()));
          out[i] = static_cast<Out>(u < prob ? 1 : 0);
        }
      } else {
        status = absl::InvalidArgumentError(
            absl::StrCat("Bernoulli: input must be half, float or double, got ", DataTypeString(p.dtype())));
      }
    });
    return status;
  }

 private:
  SeedAttr seed_;
};

using RandomFloatTypes = TypeList<half, float, double>;

template <Distribution kDist, bool kLike>
void RegisterRandom(const char* op) {
  RegisterCpuKernels(op, "dtype", RandomFloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<RandomOp<typename decltype(t)::type, kDist, kLike>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterRandom<Distribution::kUniform, false>("Onnx>RandomUniform");
  RegisterRandom<Distribution::kNormal, false>("Onnx>RandomNormal");
  RegisterRandom<Distribution::kUniform, true>("Onnx>RandomUniformLike");
  RegisterRandom<Distribution::kNormal, true>("Onnx>RandomNormalLike");
  RegisterCpuKernels("Onnx>Bernoulli", "dtype", NumericTypes{} + TypeList<bool>{},
                     [](auto t) -> std::unique_ptr<OpKernel> {
                       return std::make_unique<BernoulliOp<typename decltype(t)::type>>();
                     });
  return true;
}();

}  // namespace
}  // namespace sluice
