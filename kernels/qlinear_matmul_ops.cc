// MatMulInteger and QLinearMatMul (ONNX semantics, numpy matmul broadcasting). The zero
// points are subtracted up front and the product runs through double GEMM, which is exact
// for 8-bit operands (every partial sum stays far below 2^53).
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/blas.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/quantize_util.h"

namespace sluice {
namespace {

// Which value of a parameter vector applies to a row (or column): one for the tensor, one
// per row, or one per batch and row.
struct RowParams {
  enum Mode { kTensor, kRow, kBatchRow } mode = kTensor;
  int64_t rows = 1;

  static absl::StatusOr<RowParams> Make(const char* op, const char* what, const Tensor& t, int64_t batches,
                                        int64_t rows) {
    RowParams p;
    p.rows = rows;
    const int64_t n = t.NumElements();
    if (n == 1) {
      p.mode = kTensor;
    } else if (n == rows && t.dims() <= 1) {
      p.mode = kRow;
    } else if (n == batches * rows) {
      p.mode = kBatchRow;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " has shape ", t.shape().DebugString(),
                                                     "; it needs 1 value, or one per row/column (", rows, ")"));
    }
    return p;
  }
  int64_t Index(int64_t batch, int64_t row) const {
    return mode == kTensor ? 0 : (mode == kRow ? row : batch * rows + row);
  }
};

// numpy matmul of (a - a_zero_point) and (b - b_zero_point); the zero points are per tensor,
// per row of a / column of b, or per batch and row / column (shapes [..., M, 1] / [..., 1, N]).
struct IntegerMatMul {
  TensorShape out_shape;
  int64_t m = 0, n = 0;
  std::vector<double> acc;  // out_shape's elements, row-major.
};

absl::StatusOr<IntegerMatMul> RunIntegerMatMul(const char* op, const Tensor& a, const Tensor& b,
                                               const Tensor* a_zp, const Tensor* b_zp) {
  if (a.dims() == 0 || b.dims() == 0) return absl::InvalidArgumentError(absl::StrCat(op, ": operands must have rank >= 1"));
  DimVector ad(a.shape().dim_sizes().begin(), a.shape().dim_sizes().end());
  DimVector bd(b.shape().dim_sizes().begin(), b.shape().dim_sizes().end());
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  IntegerMatMul r;
  r.m = ad[ad.size() - 2];
  r.n = bd[bd.size() - 1];
  const int64_t k = ad[ad.size() - 1];
  if (bd[bd.size() - 2] != k) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": inner dimensions differ: ", a.shape().DebugString(), " and ",
                                                   b.shape().DebugString()));
  }
  TensorShape a_batch(absl::Span<const int64_t>(ad.data(), ad.size() - 2));
  TensorShape b_batch(absl::Span<const int64_t>(bd.data(), bd.size() - 2));
  SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(a_batch, b_batch));
  DimVector out_dims(plan.out_shape.dim_sizes().begin(), plan.out_shape.dim_sizes().end());
  if (!a_vec) out_dims.push_back(r.m);
  if (!b_vec) out_dims.push_back(r.n);
  SL_ASSIGN_OR_RETURN(r.out_shape, TensorShape::FromDims(out_dims));
  const int64_t na = a_batch.num_elements(), nb = b_batch.num_elements();
  RowParams pa, pb;
  std::vector<int32_t> zpa{0}, zpb{0};
  if (a_zp != nullptr) {
    SL_ASSIGN_OR_RETURN(pa, RowParams::Make(op, "a_zero_point", *a_zp, na, r.m));
    SL_ASSIGN_OR_RETURN(zpa, ReadQuantized(*a_zp, "a_zero_point"));
  }
  if (b_zp != nullptr) {
    SL_ASSIGN_OR_RETURN(pb, RowParams::Make(op, "b_zero_point", *b_zp, nb, r.n));
    SL_ASSIGN_OR_RETURN(zpb, ReadQuantized(*b_zp, "b_zero_point"));
  }
  SL_ASSIGN_OR_RETURN(std::vector<int32_t> av, ReadQuantized(a, "a"));
  SL_ASSIGN_OR_RETURN(std::vector<int32_t> bv, ReadQuantized(b, "b"));
  std::vector<double> da(av.size()), db(bv.size());
  for (int64_t i = 0; i < static_cast<int64_t>(av.size()); ++i) {
    const int64_t row = (i / k) % r.m, batch = i / (k * r.m);
    da[i] = av[i] - zpa[pa.Index(batch, row)];
  }
  for (int64_t i = 0; i < static_cast<int64_t>(bv.size()); ++i) {
    const int64_t col = i % r.n, batch = i / (k * r.n);
    db[i] = bv[i] - zpb[pb.Index(batch, col)];
  }
  r.acc.assign(r.out_shape.num_elements(), 0.0);
  if (r.acc.empty() || k == 0) return r;
  const int64_t a_mat = r.m * k, b_mat = k * r.n, o_mat = r.m * r.n;
  ForEachBroadcastRun(plan, [&](int64_t o, int64_t ao, int64_t bo, int64_t len, int64_t as, int64_t bs) {
    for (int64_t i = 0; i < len; ++i) {
      GemmRowMajor<double>(false, false, r.m, r.n, k, 1.0, da.data() + (ao + i * as) * a_mat, k,
                           db.data() + (bo + i * bs) * b_mat, r.n, 0.0, r.acc.data() + (o + i) * o_mat, r.n,
                           /*threads=*/1);
    }
  });
  return r;
}

class MatMulIntegerOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    // The optional zero points arrive as zero or one tensor each; Init saw how many.
    const Tensor* a_zp = has_a_zp_ ? &ctx->input(2) : nullptr;
    const Tensor* b_zp = has_b_zp_ ? &ctx->input(has_a_zp_ ? 3 : 2) : nullptr;
    SL_ASSIGN_OR_RETURN(IntegerMatMul r, RunIntegerMatMul("MatMulInteger", ctx->input(0), ctx->input(1), a_zp, b_zp));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, r.out_shape, &y));
    int32_t* yd = y->data<int32_t>();
    for (size_t i = 0; i < r.acc.size(); ++i) yd[i] = SaturateInt32(r.acc[i]);
    return absl::OkStatus();
  }

  absl::Status Init(OpKernelConstruction* ctx) override {
    DataTypeVector ta, tb;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Ta", &ta));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tb", &tb));
    if (ta.size() > 1 || tb.size() > 1) {
      return absl::InvalidArgumentError("MatMulInteger takes at most one a_zero_point and one b_zero_point");
    }
    has_a_zp_ = !ta.empty();
    has_b_zp_ = !tb.empty();
    return absl::OkStatus();
  }

 private:
  bool has_a_zp_ = false, has_b_zp_ = false;
};

// y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point), scales (float, half
// or bfloat16, all one type) per tensor, per row of a, per column of b, per row of y.
class QLinearMatMulOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(3);
    SL_ASSIGN_OR_RETURN(IntegerMatMul r, RunIntegerMatMul("QLinearMatMul", a, b, &ctx->input(2), &ctx->input(5)));
    const Tensor& a_scale = ctx->input(1);
    const Tensor& b_scale = ctx->input(4);
    const Tensor& y_scale = ctx->input(6);
    const Tensor& y_zp = ctx->input(7);
    SL_ASSIGN_OR_RETURN(RowParams pas, RowParams::Make("QLinearMatMul", "a_scale", a_scale, 1, r.m));
    SL_ASSIGN_OR_RETURN(RowParams pbs, RowParams::Make("QLinearMatMul", "b_scale", b_scale, 1, r.n));
    SL_ASSIGN_OR_RETURN(RowParams pys, RowParams::Make("QLinearMatMul", "y_scale", y_scale, 1, r.m));
    SL_ASSIGN_OR_RETURN(RowParams pyz, RowParams::Make("QLinearMatMul", "y_zero_point", y_zp, 1, r.m));
    SL_ASSIGN_OR_RETURN(std::vector<int32_t> yzp, ReadQuantized(y_zp, "y_zero_point"));
    SL_ASSIGN_OR_RETURN(std::vector<float> as, ReadScale(a_scale, "a_scale"), "QLinearMatMul");
    SL_ASSIGN_OR_RETURN(std::vector<float> bs, ReadScale(b_scale, "b_scale"), "QLinearMatMul");
    SL_ASSIGN_OR_RETURN(std::vector<float> ys, ReadScale(y_scale, "y_scale"), "QLinearMatMul");
    // numpy computes a_scale * b_scale / y_scale in the scales' type, rounding each step to
    // it, and the int32 product times that in float64.
    const DataType scale_type = a_scale.dtype();
    auto in_scale_type = [scale_type](float v) {
      if (scale_type == DT_HALF) return static_cast<float>(half(v));
      if (scale_type == DT_BFLOAT16) return static_cast<float>(bfloat16(v));
      return v;
    };
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, r.out_shape, &y));
    auto write = [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Q* yd = y->data<Q>();
      for (int64_t e = 0; e < static_cast<int64_t>(r.acc.size()); ++e) {
        const int64_t i = (e / r.n) % r.m, j = e % r.n;
        const float multiplier =
            in_scale_type(in_scale_type(as[pas.Index(0, i)] * bs[pbs.Index(0, j)]) / ys[pys.Index(0, i)]);
        yd[e] = SaturateRound<Q>(r.acc[e] * static_cast<double>(multiplier), yzp[pyz.Index(0, i)]);
      }
    };
    if (y->dtype() == DT_INT8) {
      write(TypeTag<int8_t>{});
    } else {
      write(TypeTag<uint8_t>{});
    }
    return absl::OkStatus();
  }
};

constexpr DataType kQuantTypes[] = {DT_INT8, DT_UINT8};

REGISTER_KERNEL_BUILDER(
    Name("Onnx>MatMulInteger").Device(DEVICE_CPU).TypeConstraint("T1", kQuantTypes).TypeConstraint("T2", kQuantTypes),
    MatMulIntegerOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>QLinearMatMul")
                            .Device(DEVICE_CPU)
                            .TypeConstraint("T1", kQuantTypes)
                            .TypeConstraint("T2", kQuantTypes)
                            .TypeConstraint("T3", kQuantTypes),
                        QLinearMatMulOp);

}  // namespace
}  // namespace sluice
