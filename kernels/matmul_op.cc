// MatMul: float through oneDNN and double through OpenBLAS (see GemmRowMajor); half and
// bfloat16 widened to float for the product; integers with a cache-friendly loop (no BLAS for them).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/array_kernel_util.h"
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

// Matrix products over broadcast batches; with vector_operands, numpy matmul (ONNX MatMul);
// see BatchMatMulV2 in ops/onnx_nn_ops.cc.
template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("adj_x", &adj_x_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("adj_y", &adj_y_));
    return GetNodeAttrOr(ctx->attrs(), "vector_operands", false, &vector_operands_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (!vector_operands_ && (a.dims() < 2 || b.dims() < 2)) {  // TensorFlow's words.
      const bool first = a.dims() < 2;
      return absl::InvalidArgumentError(absl::StrCat("BatchMatMulV2: In[", first ? 0 : 1, "] ndims must be >= 2: ",
                                                     first ? a.dims() : b.dims()));
    }
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
  bool vector_operands_ = false;
};

// SumToShape(BatchMatMulV2(a, b), shape) in one kernel: the gradient of a batched product
// with respect to an operand that was broadcast over the batch (a weight [K, N] against
// activations [B, S, K]). Each batch's product is added into the output batch it sums to, so
// the [B, K, N] intermediate is never made; when everything sums to one matrix and the
// operands' batches line up, it is one product over the flattened batch (A_flat^T B_flat).
template <typename T>
class BatchMatMulSumOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("adj_x", &adj_x_));
    return ctx->GetAttr("adj_y", &adj_y_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    SL_ASSIGN_OR_RETURN(TensorShape target, ShapeInput(ctx->input(2), "BatchMatMulSum: shape"));
    if (a.dims() < 2 || b.dims() < 2 || target.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("BatchMatMulSum needs matrices: ", a.shape().DebugString(),
                                                     ", ", b.shape().DebugString(), " to ", target.DebugString()));
    }
    const int ar = a.dims(), br = b.dims();
    const int64_t m = adj_x_ ? a.dim_size(ar - 1) : a.dim_size(ar - 2);
    const int64_t k = adj_x_ ? a.dim_size(ar - 2) : a.dim_size(ar - 1);
    const int64_t kb = adj_y_ ? b.dim_size(br - 1) : b.dim_size(br - 2);
    const int64_t n = adj_y_ ? b.dim_size(br - 2) : b.dim_size(br - 1);
    const TensorShape a_batch(absl::Span<const int64_t>(a.shape().dim_sizes().data(), ar - 2));
    const TensorShape b_batch(absl::Span<const int64_t>(b.shape().dim_sizes().data(), br - 2));
    auto plan = MakeBroadcastPlan(a_batch, b_batch);
    if (k != kb || !plan.ok() || target.dim_size(target.dims() - 2) != m || target.dim_size(target.dims() - 1) != n) {
      return absl::InvalidArgumentError(absl::StrCat("BatchMatMulSum: ", a.shape().DebugString(), " times ",
                                                     b.shape().DebugString(), " does not sum to ",
                                                     target.DebugString()));
    }
    const TensorShape& out_batch = plan->out_shape;
    const int rank = out_batch.dims(), t_rank = target.dims() - 2;
    if (t_rank > rank) {
      return absl::InvalidArgumentError(absl::StrCat("BatchMatMulSum: ", target.DebugString(),
                                                     " has more batch dims than the product's ",
                                                     out_batch.DebugString()));
    }
    // Element strides (in matrices) of a, b and the target over the product's batch dims; 0
    // where a side is broadcast or the target sums the dim away.
    std::vector<int64_t> as(rank, 0), bs(rank, 0), ts(rank, 0);
    for (int d = rank - 1, sa = 1, sb = 1, st = 1; d >= 0; --d) {
      const int da = d - (rank - (ar - 2)), db = d - (rank - (br - 2)), dt = d - (rank - t_rank);
      if (da >= 0 && a.dim_size(da) != 1) as[d] = sa;
      if (da >= 0) sa *= a.dim_size(da);
      if (db >= 0 && b.dim_size(db) != 1) bs[d] = sb;
      if (db >= 0) sb *= b.dim_size(db);
      if (dt >= 0) {
        const int64_t t = target.dim_size(dt);
        if (t != 1 && t != out_batch.dim_size(d)) {
          return absl::InvalidArgumentError(absl::StrCat("BatchMatMulSum: ", target.DebugString(),
                                                         " does not broadcast to the product's batch ",
                                                         out_batch.DebugString()));
        }
        if (t != 1) ts[d] = st;
        st *= t;
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, target, &out));
    T* po = out->data<T>();
    std::fill(po, po + out->NumElements(), T(0));
    if (out->NumElements() == 0 || k == 0 || out_batch.num_elements() == 0) return absl::OkStatus();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const int threads = ctx->intra_op_threads();
    const int64_t batches = out_batch.num_elements();
    const bool one_target = target.num_elements() == m * n;
    if (one_target && adj_x_ && !adj_y_ && a_batch == b_batch) {
      // sum_i A_i^T B_i over rows of k: one product of the stacked rows.
      GemmRowMajor<T>(true, false, m, n, k * batches, T(1), pa, m, pb, n, T(0), po, n, threads);
      return absl::OkStatus();
    }
    if (!adj_x_ && b_batch.num_elements() == 1 && target.num_elements() == batches * m * n && a_batch == out_batch) {
      // Nothing summed and B shared: one product of all of A's rows.
      GemmRowMajor<T>(false, adj_y_, batches * m, n, k, T(1), pa, k, pb, adj_y_ ? k : n, T(0), po, n, threads);
      return absl::OkStatus();
    }
    std::vector<int64_t> idx(rank, 0);
    int64_t ao = 0, bo = 0, to = 0;
    for (int64_t o = 0; o < batches; ++o) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
      GemmRowMajor<T>(adj_x_, adj_y_, m, n, k, T(1), pa + ao * m * k, adj_x_ ? m : k, pb + bo * k * n,
                      adj_y_ ? k : n, T(1), po + to * m * n, n, threads);
      for (int d = rank - 1; d >= 0; --d) {
        ao += as[d];
        bo += bs[d];
        to += ts[d];
        if (++idx[d] < out_batch.dim_size(d)) break;
        ao -= as[d] * out_batch.dim_size(d);
        bo -= bs[d] * out_batch.dim_size(d);
        to -= ts[d] * out_batch.dim_size(d);
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  using MatMulTypes = TypeList<float, double, half, bfloat16, int32_t, int64_t>;
  RegisterCpuKernelTemplate<BatchMatMulOp>("BatchMatMulV2", MatMulTypes{} + TypeList<uint32_t, uint64_t>{});
  RegisterCpuKernelTemplate<MatMulOp>("MatMul", MatMulTypes{});
  RegisterCpuKernelTemplate<BatchMatMulSumOp>("BatchMatMulSum", TypeList<float, double>{});
  return true;
}();

}  // namespace
}  // namespace sluice
