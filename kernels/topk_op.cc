// TopK: the k largest (or smallest) elements along an axis, with their indices. Equal values
// keep their order by index, NaN counts as larger than any number (as numpy sorts it last).
// TensorFlow's TopKV2 is the same kernel: the largest along the last dim, k an int16, int32 or
// int64 input, indices of type index_type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/axis_util.h"
#include "kernels/cwise_ops.h"

namespace sluice {
namespace {

template <typename C>
bool NumberLess(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
class TopKOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;

  absl::Status Init(OpKernelConstruction* ctx) override {
    if (ctx->def().op() == "TopKV2") {
      tf_ = true;
      return ctx->GetAttr("sorted", &sorted_);
    }
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("largest", &largest_));
    return ctx->GetAttr("sorted", &sorted_);  // Unsorted results may come in any order: we sort.
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& k_tensor = ctx->input(1);
    if (k_tensor.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("K must hold one value, got shape ",
                                                     k_tensor.shape().DebugString()));
    }
    int64_t k = 0;
    switch (k_tensor.dtype()) {
      case DT_INT16: k = k_tensor.data<int16_t>()[0]; break;
      case DT_INT32: k = k_tensor.data<int32_t>()[0]; break;
      default: k = k_tensor.data<int64_t>()[0]; break;
    }
    if (tf_ && x.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("TopKV2: input must have rank >= 1, got shape ",
                                                     x.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(AxisLayout l, MakeAxisLayout(x.shape(), axis_));
    if (k < 0 || k > l.n) {
      return absl::InvalidArgumentError(absl::StrCat("K = ", k, " is outside [0, ", l.n,
                                                     "] for axis ", l.axis, " of shape ",
                                                     x.shape().DebugString()));
    }
    TensorShape out_shape = x.shape();
    out_shape.set_dim(l.axis, k);
    Tensor *values, *indices;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &values));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, out_shape, &indices));
    if (k == 0) return absl::OkStatus();
    const T* px = x.data<T>();
    if (tf_ && indices->dtype() != DT_INT64 && l.n - 1 > MaxIndex(indices->dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("TopKV2: indices up to ", l.n - 1, " do not fit index_type ",
                                                     DataTypeString(indices->dtype())));
    }
    T* pv = values->data<T>();
    void* pi = indices->raw_data();
    const DataType index_type = indices->dtype();
    const bool largest = largest_;
    ParallelForElements(ctx, l.outer * l.inner, l.n * 4, [&](int64_t begin, int64_t end) {
      std::vector<C> vals(l.n);
      std::vector<int64_t> order(l.n);
      for (int64_t s = begin; s < end; ++s) {
        const int64_t o = s / l.inner, j = s % l.inner;
        const T* in = px + o * l.n * l.inner + j;
        for (int64_t i = 0; i < l.n; ++i) vals[i] = C(in[i * l.inner]);
        std::iota(order.begin(), order.end(), int64_t{0});
        auto before = [&](int64_t a, int64_t b) {
          if (largest) {
            if (NumberLess(vals[b], vals[a])) return true;
            if (NumberLess(vals[a], vals[b])) return false;
          } else {
            if (NumberLess(vals[a], vals[b])) return true;
            if (NumberLess(vals[b], vals[a])) return false;
          }
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        T* v = pv + o * k * l.inner + j;
        const int64_t idx = o * k * l.inner + j;
        for (int64_t i = 0; i < k; ++i) {
          v[i * l.inner] = in[order[i] * l.inner];
          StoreIndex(pi, index_type, idx + i * l.inner, order[i]);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  static int64_t MaxIndex(DataType dt) {
    return dt == DT_INT16 ? std::numeric_limits<int16_t>::max() : std::numeric_limits<int32_t>::max();
  }
  static void StoreIndex(void* p, DataType dt, int64_t at, int64_t value) {
    switch (dt) {
      case DT_INT16: static_cast<int16_t*>(p)[at] = static_cast<int16_t>(value); break;
      case DT_INT32: static_cast<int32_t*>(p)[at] = static_cast<int32_t>(value); break;
      default: static_cast<int64_t*>(p)[at] = value; break;
    }
  }

  int64_t axis_ = -1;
  bool largest_ = true, sorted_ = true;
  bool tf_ = false;  // TopKV2.
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernels("Onnx>TopK", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<TopKOp<typename decltype(t)::type>>();
  });
  RegisterCpuKernels("TopKV2", "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<TopKOp<typename decltype(t)::type>>();
  });
  return true;
}();

}  // namespace
}  // namespace sluice
