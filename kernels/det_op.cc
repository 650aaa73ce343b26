// Det: determinants of the innermost square matrices, by LU decomposition with partial
// pivoting in double precision.
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// Determinant of the n x n row-major matrix `a`, which is overwritten.
double LuDeterminant(double* a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    }
    if (a[pivot * n + col] == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[pivot * n + j], a[col * n + j]);
      det = -det;
    }
    const double d = a[col * n + col];
    det *= d;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / d;
      if (f == 0.0) continue;
      for (int64_t j = col + 1; j < n; ++j) a[r * n + j] -= f * a[col * n + j];
    }
  }
  return det;
}

template <typename T>
class DetOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    if (rank < 2 || x.dim_size(rank - 1) != x.dim_size(rank - 2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Det needs square matrices in the last two dims, got ", x.shape().DebugString()));
    }
    const int64_t n = x.dim_size(rank - 1);
    TensorShape out_shape(absl::Span<const int64_t>(x.shape().dim_sizes().data(), rank - 2));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));
    const T* xd = x.data<T>();
    T* yd = y->data<T>();
    std::vector<double> m(n * n);
    for (int64_t b = 0; b < y->NumElements(); ++b) {
      for (int64_t i = 0; i < n * n; ++i) m[i] = static_cast<double>(xd[b * n * n + i]);
      const double det = LuDeterminant(m.data(), n);
      if constexpr (std::is_same_v<T, half>) {
        yd[b] = T(static_cast<float>(det));
      } else {
        yd[b] = static_cast<T>(det);
      }
    }
    return absl::OkStatus();
  }
};

struct RegisterDet {
  RegisterDet() {
    RegisterCpuKernels("Onnx>Det", "T", TypeList<half, float, double>{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<DetOp<typename decltype(t)::type>>();
    });
  }
} register_det;

}  // namespace
}  // namespace sluice
