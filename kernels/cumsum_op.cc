// CumSum along an axis given as a scalar input, optionally exclusive (each output leaves out its
// own element) and reversed (sums run from the end). ONNX's CumSum and TensorFlow's Cumsum agree
// in inputs and attrs, so both run this kernel; TensorFlow's Cumprod is the same scan with
// products (an exclusive product starts from 1).
#include <vector>

#include "kernels/axis_util.h"
#include "kernels/cwise_ops.h"

namespace sluice {
namespace {

template <typename T, bool kProduct = false>
class CumSumOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;

  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("exclusive", &exclusive_));
    return ctx->GetAttr("reverse", &reverse_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    if (axis_t.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("axis must be a scalar, got shape ",
                                                     axis_t.shape().DebugString()));
    }
    int64_t axis = axis_t.dtype() == DT_INT32 ? axis_t.data<int32_t>()[0] : axis_t.data<int64_t>()[0];
    SL_ASSIGN_OR_RETURN(AxisLayout l, MakeAxisLayout(x.shape(), axis));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    const T* px = x.data<T>();
    T* po = out->data<T>();
    const bool exclusive = exclusive_, reverse = reverse_;
    ParallelForElements(ctx, l.outer, l.n * l.inner, [&](int64_t begin, int64_t end) {
      std::vector<C> acc(l.inner);
      for (int64_t o = begin; o < end; ++o) {
        std::fill(acc.begin(), acc.end(), C(kProduct ? 1 : 0));
        for (int64_t step = 0; step < l.n; ++step) {
          const int64_t i = reverse ? l.n - 1 - step : step;
          const T* row = px + (o * l.n + i) * l.inner;
          T* orow = po + (o * l.n + i) * l.inner;
          for (int64_t j = 0; j < l.inner; ++j) {
            if (exclusive) {
              orow[j] = T(acc[j]);
              acc[j] = Combine(acc[j], C(row[j]));
            } else {
              acc[j] = Combine(acc[j], C(row[j]));
              orow[j] = T(acc[j]);
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  static C Combine(C acc, C x) {
    if constexpr (kProduct) {
      return Wrapping(acc, x, std::multiplies<>());
    } else {
      return Wrapping(acc, x, std::plus<>());
    }
  }

  bool exclusive_ = false, reverse_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernels("Onnx>CumSum", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<CumSumOp<typename decltype(t)::type>>();
  });
  RegisterCpuKernels("Cumsum", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<CumSumOp<typename decltype(t)::type>>();
  });
  RegisterCpuKernels("Cumprod", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<CumSumOp<typename decltype(t)::type, /*kProduct=*/true>>();
  });
  return true;
}();

}  // namespace
}  // namespace sluice
