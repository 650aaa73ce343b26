// MatMul: float through oneDNN and double through OpenBLAS (see GemmRowMajor); half and
// bfloat16 widened to float for the product; integers with a cache-friendly loop (no BLAS for them).
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/blas.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// C (m x n, dense) = op(A) * op(B). Returns false when the step was cancelled part-way.
template <typename T>
bool Gemm(const OpKernelContext* ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
          const T* b, T* c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return CancellableGemmRowMajor<T>(ctx->cancellation(), ta, tb, m, n, k, T(1), a, lda, b, ldb, T(0), c, n,
                                      ctx->intra_op_threads());
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    std::vector<float> fa(m * k), fb(k * n), fc(m * n);
    for (int64_t i = 0; i < m * k; ++i) fa[i] = static_cast<float>(a[i]);
    for (int64_t i = 0; i < k * n; ++i) fb[i] = static_cast<float>(b[i]);
    if (!Gemm<float>(ctx, ta, tb, m, n, k, fa.data(), fb.data(), fc.data())) return false;
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(fc[i]);
    return true;
  } else {
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(0);
    bool done = true;
    ForEachCancellableSlice(ctx, m, n * k, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        for (int64_t p = 0; p < k; ++p) {
          const T av = ta ? a[p * lda + i] : a[i * lda + p];
          T* crow = c + i * n;
          for (int64_t j = 0; j < n; ++j) {
            // Integers wrap as numpy's do (signed overflow is undefined behaviour).
            crow[j] = Wrapping(crow[j], Wrapping(av, tb ? b[j * ldb + p] : b[p * ldb + j], std::multiplies<>()),
                               std::plus<>());
          }
        }
      }
      done = end == m;
    });
    return done;
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
    if (!Gemm<T>(ctx, transpose_a_, transpose_b_, m, n, k, a.data<T>(), b.data<T>(), out->data<T>())) {
      return ctx->CheckCancelled();
    }
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// numpy matmul over batches; see BatchMatMulV2 in ops/onnx_nn_ops.cc.
template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("adj_x", &adj_x_));
    return ctx->GetAttr("adj_y", &adj_y_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() == 0 || b.dims() == 0) {
      return absl::InvalidArgumentError("MatMul operands must have rank >= 1");
    }
    // Promote vectors to matrices; remember which unit dims to drop from the result.
    DimVector ad(a.shape().dim_sizes().begin(), a.shape().dim_sizes().end());
    DimVector bd(b.shape().dim_sizes().begin(), b.shape().dim_sizes().end());
    const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
    if (a_vec) ad.insert(ad.begin(), 1);
    if (b_vec) bd.push_back(1);
    const int64_t m = adj_x_ ? ad[ad.size() - 1] : ad[ad.size() - 2];
    const int64_t k = adj_x_ ? ad[ad.size() - 2] : ad[ad.size() - 1];
    const int64_t kb = adj_y_ ? bd[bd.size() - 1] : bd[bd.size() - 2];
    const int64_t n = adj_y_ ? bd[bd.size() - 2] : bd[bd.size() - 1];
    if (k != kb) {
      return absl::InvalidArgumentError(absl::StrCat("MatMul inner dimensions differ: ",
                                                     a.shape().DebugString(), " and ", b.shape().DebugString()));
    }
    TensorShape a_batch(absl::Span<const int64_t>(ad.data(), ad.size() - 2));
    TensorShape b_batch(absl::Span<const int64_t>(bd.data(), bd.size() - 2));
    SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(a_batch, b_batch));
    DimVector out_dims(plan.out_shape.dim_sizes().begin(), plan.out_shape.dim_sizes().end());
    if (!a_vec) out_dims.push_back(m);
    if (!b_vec) out_dims.push_back(n);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(out_dims), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out->data<T>();
    const int64_t a_mat = m * k, b_mat = k * n, o_mat = m * n;
    if (k == 0) {
      for (int64_t i = 0; i < out->NumElements(); ++i) po[i] = T(0);
      return absl::OkStatus();
    }
    if (!adj_x_ && b_batch.num_elements() == 1) {
      // B shared by every batch of A (a weight, as in transformers' projections): one product
      // of all of A's rows ([batch * m, k] x [k, n]), not one small product per batch.
      if (!Gemm<T>(ctx, false, adj_y_, a.NumElements() / k, n, k, pa, pb, po)) return ctx->CheckCancelled();
      return absl::OkStatus();
    }
    bool done = true;
    ForEachBroadcastRun(plan, [&](int64_t o, int64_t ao, int64_t bo, int64_t len, int64_t as, int64_t bs) {
      for (int64_t i = 0; i < len && done; ++i) {
        done = Gemm<T>(ctx, adj_x_, adj_y_, m, n, k, pa + (ao + i * as) * a_mat, pb + (bo + i * bs) * b_mat,
                       po + (o + i) * o_mat);
      }
    });
    return done ? absl::OkStatus() : ctx->CheckCancelled();
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  using MatMulTypes = TypeList<float, double, half, bfloat16, int32_t, int64_t>;
  RegisterCpuKernelTemplate<BatchMatMulOp>("BatchMatMulV2", MatMulTypes{} + TypeList<uint32_t, uint64_t>{});
  RegisterCpuKernelTemplate<MatMulOp>("MatMul", MatMulTypes{});
  return true;
}();

}  // namespace
}  // namespace sluice
