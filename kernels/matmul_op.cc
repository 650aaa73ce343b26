// MatMul: float and double through OpenBLAS; half and bfloat16 widened to float for the
// product; integers with a cache-friendly loop (no BLAS for them).
#include <cblas.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
                n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
                n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    std::vector<float> fa(m * k), fb(k * n), fc(m * n);
    for (int64_t i = 0; i < m * k; ++i) fa[i] = static_cast<float>(a[i]);
    for (int64_t i = 0; i < k * n; ++i) fb[i] = static_cast<float>(b[i]);
    Gemm<float>(ta, tb, m, n, k, fa.data(), fb.data(), fc.data());
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(fc[i]);
  } else {
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * lda + i] : a[i * lda + p];
        T* crow = c + i * n;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      }
    }
  }
}

template <typename T>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("transpose_a", &transpose_a_));
    return ctx->GetAttr("transpose_b", &transpose_b_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2 || b.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("MatMul needs 2-D inputs, got ",
                                                     a.shape().DebugString(), " and ",
                                                     b.shape().DebugString()));
    }
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t kb = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    if (k != kb) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MatMul inner dimensions differ: a is ", a.shape().DebugString(),
          transpose_a_ ? " (transposed)" : "", ", b is ", b.shape().DebugString(),
          transpose_b_ ? " (transposed)" : ""));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return absl::OkStatus();
    if (k == 0) {
      for (T& v : out->flat<T>()) v = T(0);
      return absl::OkStatus();
    }
    Gemm<T>(transpose_a_, transpose_b_, m, n, k, a.data<T>(), b.data<T>(), out->data<T>());
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"), MatMulOp<float>);
REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<double>("T"), MatMulOp<double>);
REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<half>("T"), MatMulOp<half>);
REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<bfloat16>("T"), MatMulOp<bfloat16>);
REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), MatMulOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), MatMulOp<int64_t>);

}  // namespace
}  // namespace sluice
