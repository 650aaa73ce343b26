// Softmax, LogSoftmax and Hardmax along one axis (ONNX opset-13 semantics). The input is seen
// as [outer, n, inner]; each outer slab is normalized over n with `inner` lanes side by side,
// so contiguous rows (inner == 1, the common case) and strided axes share one code path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/axis_util.h"
#include "kernels/cwise_ops.h"
#include "kernels/fast_math.h"

namespace sluice {
namespace {

enum class SoftmaxMode { kSoftmax, kLogSoftmax, kHardmax };

template <typename T, SoftmaxMode kMode>
class SoftmaxOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;
  static constexpr bool kExact = std::is_same_v<T, C>;

  absl::Status Init(OpKernelConstruction* ctx) override {
    if (!ctx->def().attr().contains("axis")) {  // TensorFlow's Softmax and LogSoftmax: the last axis.
      axis_ = -1;
      return absl::OkStatus();
    }
    return ctx->GetAttr("axis", &axis_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(AxisLayout l, MakeAxisLayout(x.shape(), axis_));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return absl::OkStatus();
    const T* px = x.data<T>();
    T* po = out->data<T>();
    if constexpr (std::is_same_v<T, float> && kMode == SoftmaxMode::kSoftmax) {
      if (l.inner == 1) {
        // Contiguous rows (the last axis, as attention's): SoftmaxRow's vectorized passes.
        ParallelForElements(ctx, l.outer, l.n * 8, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) SoftmaxRow(px + o * l.n, po + o * l.n, l.n);
        });
        return ctx->CheckCancelled();
      }
    }
    ParallelForElements(ctx, l.outer, l.n * l.inner * 8, [&](int64_t begin, int64_t end) {
      std::vector<C> best(l.inner), sum(l.inner);
      std::vector<int64_t> arg(l.inner);
      for (int64_t o = begin; o < end; ++o) {
        const T* in = px + o * l.n * l.inner;
        T* dst = po + o * l.n * l.inner;
        Slab(in, dst, l.n, l.inner, best.data(), sum.data(), arg.data());
      }
    });
    return absl::OkStatus();
  }

 private:
  static void Slab(const T* in, T* out, int64_t n, int64_t inner, C* best, C* sum, int64_t* arg) {
    for (int64_t j = 0; j < inner; ++j) {
      best[j] = C(in[j]);
      arg[j] = 0;
    }
    for (int64_t i = 1; i < n; ++i) {
      const T* row = in + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        C v = C(row[j]);
        if (v > best[j]) {
          best[j] = v;
          arg[j] = i;
        }
      }
    }
    if constexpr (kMode == SoftmaxMode::kHardmax) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) out[i * inner + j] = T(C(arg[j] == i ? 1 : 0));
      }
      return;
    }
    std::fill(sum, sum + inner, C(0));
    for (int64_t i = 0; i < n; ++i) {
      const T* row = in + i * inner;
      T* orow = out + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        C e = std::exp(C(row[j]) - best[j]);
        sum[j] += e;
        if constexpr (kMode == SoftmaxMode::kSoftmax && kExact) orow[j] = T(e);
      }
    }
    if constexpr (kMode == SoftmaxMode::kSoftmax) {
      for (int64_t j = 0; j < inner; ++j) sum[j] = C(1) / sum[j];
      for (int64_t i = 0; i < n; ++i) {
        const T* row = in + i * inner;
        T* orow = out + i * inner;
        for (int64_t j = 0; j < inner; ++j) {
          // half and bfloat16 would round the stored exponential twice; recompute it instead.
          C e = kExact ? C(orow[j]) : std::exp(C(row[j]) - best[j]);
          orow[j] = T(e * sum[j]);
        }
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) sum[j] = best[j] + std::log(sum[j]);
      for (int64_t i = 0; i < n; ++i) {
        const T* row = in + i * inner;
        T* orow = out + i * inner;
        for (int64_t j = 0; j < inner; ++j) orow[j] = T(C(row[j]) - sum[j]);
      }
    }
  }

  int64_t axis_ = -1;
};

template <SoftmaxMode kMode>
void RegisterSoftmax(const char* op) {
  RegisterCpuKernels(op, "T", FloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<SoftmaxOp<typename decltype(t)::type, kMode>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterSoftmax<SoftmaxMode::kSoftmax>("Onnx>Softmax");
  RegisterSoftmax<SoftmaxMode::kLogSoftmax>("Onnx>LogSoftmax");
  RegisterSoftmax<SoftmaxMode::kHardmax>("Onnx>Hardmax");
  RegisterSoftmax<SoftmaxMode::kSoftmax>("Softmax");
  RegisterSoftmax<SoftmaxMode::kLogSoftmax>("LogSoftmax");
  return true;
}();

}  // namespace
}  // namespace sluice
