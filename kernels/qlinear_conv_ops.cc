// ConvInteger and QLinearConv (ONNX semantics): im2col of (x - x_zero_point), so padding
// reads as the zero point, then a double GEMM against (w - w_zero_point) per image and group.
// 8-bit differences are exact in float for im2col and their products sum exactly in double.
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/blas.h"
#include "kernels/conv_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/quantize_util.h"

namespace sluice {
namespace {

struct IntegerConv {
  TensorShape out_shape;  // [N, M, out...]
  int64_t channels = 0;   // M
  int64_t out_size = 0;   // Elements per output channel and image.
  std::vector<double> acc;
};

// Per-tensor x zero point; w zero point per tensor or per output channel.
absl::StatusOr<IntegerConv> RunIntegerConv(const char* op, const Tensor& x, const Tensor& w, const Tensor* x_zp,
                                           const Tensor* w_zp, const WindowAttrs& window, int64_t group) {
  if (x.dims() < 3 || w.dims() != x.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(op, " needs x of rank >= 3 and w of the same rank; got ",
                                                   x.shape().DebugString(), " and ", w.shape().DebugString()));
  }
  const int64_t n = x.dim_size(0), c = x.dim_size(1), m = w.dim_size(0);
  if (c != w.dim_size(1) * group || m % group != 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, " channels do not fit: x has ", c, " channels, w is ",
                                                   w.shape().DebugString(), " with group ", group));
  }
  const std::vector<int64_t> in = SpatialDims(x.shape()), kernel = SpatialDims(w.shape());
  if (!window.kernel_shape.empty() && window.kernel_shape != kernel) {
    return absl::InvalidArgumentError(absl::StrCat(op, " kernel_shape does not match w"));
  }
  SL_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindowGeometry(in, kernel, window, false));
  int32_t xzp = 0;
  std::vector<int32_t> wzp{0};
  if (x_zp != nullptr) {
    if (x_zp->NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": x_zero_point must hold one value, not ",
                                                     x_zp->shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int32_t> v, ReadQuantized(*x_zp, "x_zero_point"));
    xzp = v[0];
  }
  if (w_zp != nullptr) {
    if (w_zp->NumElements() != 1 && w_zp->NumElements() != m) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": w_zero_point ", w_zp->shape().DebugString(),
                                                     " needs 1 value or one per output channel (", m, ")"));
    }
    SL_ASSIGN_OR_RETURN(wzp, ReadQuantized(*w_zp, "w_zero_point"));
  }
  IntegerConv r;
  SL_ASSIGN_OR_RETURN(r.out_shape, TensorShape::FromDims(WindowOutputDims(n, m, g)));
  r.channels = m;
  r.out_size = Product(g.out);
  r.acc.assign(r.out_shape.num_elements(), 0.0);
  if (r.acc.empty()) return r;
  const int64_t cg = c / group, mg = m / group, in_size = Product(in), k_size = Product(kernel);
  const int64_t rows = cg * k_size;  // GEMM depth.
  SL_ASSIGN_OR_RETURN(std::vector<int32_t> xv, ReadQuantized(x, "x"));
  SL_ASSIGN_OR_RETURN(std::vector<int32_t> wv, ReadQuantized(w, "w"));
  std::vector<double> wd(wv.size());
  for (int64_t o = 0; o < m; ++o) {
    const int32_t z = wzp[wzp.size() == 1 ? 0 : o];
    for (int64_t i = 0; i < rows; ++i) wd[o * rows + i] = wv[o * rows + i] - z;
  }
  std::vector<float> image(cg * in_size), columns(rows * r.out_size);
  std::vector<double> dcols(columns.size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const int32_t* src = xv.data() + (b * c + gi * cg) * in_size;
      for (int64_t i = 0; i < cg * in_size; ++i) image[i] = static_cast<float>(src[i] - xzp);
      Im2Col(image.data(), cg, in, g, columns.data());
      for (size_t i = 0; i < columns.size(); ++i) dcols[i] = columns[i];
      GemmRowMajor<double>(false, false, mg, r.out_size, rows, 1.0, wd.data() + gi * mg * rows, rows, dcols.data(),
                           r.out_size, 0.0, r.acc.data() + (b * m + gi * mg) * r.out_size, r.out_size,
                           /*threads=*/1);
    }
  }
  return r;
}

class ConvIntegerOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx));
    SL_RETURN_IF_ERROR(ctx->GetAttr("group", &group_));
    DataTypeVector tx, tw;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tx", &tx));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tw", &tw));
    if (tx.size() > 1 || tw.size() > 1) {
      return absl::InvalidArgumentError("ConvInteger takes at most one x_zero_point and one w_zero_point");
    }
    has_x_zp_ = !tx.empty();
    has_w_zp_ = !tw.empty();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor* x_zp = has_x_zp_ ? &ctx->input(2) : nullptr;
    const Tensor* w_zp = has_w_zp_ ? &ctx->input(has_x_zp_ ? 3 : 2) : nullptr;
    SL_ASSIGN_OR_RETURN(IntegerConv r,
                        RunIntegerConv("ConvInteger", ctx->input(0), ctx->input(1), x_zp, w_zp, window_, group_));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, r.out_shape, &y));
    int32_t* yd = y->data<int32_t>();
    for (size_t i = 0; i < r.acc.size(); ++i) yd[i] = SaturateInt32(r.acc[i]);
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
  int64_t group_ = 1;
  bool has_x_zp_ = false, has_w_zp_ = false;
};

// y = saturate(round((acc + b) * x_scale * w_scale / y_scale) + y_zero_point).
class QLinearConvOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(window_.Parse(ctx));
    return ctx->GetAttr("group", &group_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x_scale = ctx->input(1);
    const Tensor& w_scale = ctx->input(4);
    const Tensor& y_scale = ctx->input(6);
    const Tensor& y_zp = ctx->input(7);
    const Tensor* bias = ctx->num_inputs() > 8 ? &ctx->input(8) : nullptr;
    SL_ASSIGN_OR_RETURN(IntegerConv r, RunIntegerConv("QLinearConv", ctx->input(0), ctx->input(3), &ctx->input(2),
                                                      &ctx->input(5), window_, group_));
    const int64_t m = r.channels;
    if (x_scale.NumElements() != 1 || y_scale.NumElements() != 1 || y_zp.NumElements() != 1) {
      return absl::InvalidArgumentError("QLinearConv: x_scale, y_scale and y_zero_point must hold one value each");
    }
    if (w_scale.NumElements() != 1 && w_scale.NumElements() != m) {
      return absl::InvalidArgumentError(absl::StrCat("QLinearConv: w_scale ", w_scale.shape().DebugString(),
                                                     " needs 1 value or one per output channel (", m, ")"));
    }
    if (bias != nullptr && (bias->dtype() != DT_INT32 || bias->NumElements() != m)) {
      return absl::InvalidArgumentError(absl::StrCat("QLinearConv: b must be int32 with one value per output channel (",
                                                     m, "), not ", DataTypeString(bias->dtype()), " ",
                                                     bias->shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int32_t> yzp, ReadQuantized(y_zp, "y_zero_point"));
    std::vector<float> multiplier(m);
    for (int64_t o = 0; o < m; ++o) {
      const float ws = w_scale.data<float>()[w_scale.NumElements() == 1 ? 0 : o];
      multiplier[o] = x_scale.data<float>()[0] * ws / y_scale.data<float>()[0];
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, r.out_shape, &y));
    auto write = [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Q* yd = y->data<Q>();
      for (int64_t e = 0; e < static_cast<int64_t>(r.acc.size()); ++e) {
        const int64_t o = (e / r.out_size) % m;
        const double acc = r.acc[e] + (bias != nullptr ? bias->data<int32_t>()[o] : 0);
        yd[e] = SaturateRound<Q>(static_cast<float>(acc) * multiplier[o], yzp[0]);
      }
    };
    if (y->dtype() == DT_INT8) {
      write(TypeTag<int8_t>{});
    } else {
      write(TypeTag<uint8_t>{});
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs window_;
  int64_t group_ = 1;
};

constexpr DataType kQuantTypes[] = {DT_INT8, DT_UINT8};

REGISTER_KERNEL_BUILDER(
    Name("Onnx>ConvInteger").Device(DEVICE_CPU).TypeConstraint("T1", kQuantTypes).TypeConstraint("T2", kQuantTypes),
    ConvIntegerOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>QLinearConv")
                            .Device(DEVICE_CPU)
                            .TypeConstraint("T1", kQuantTypes)
                            .TypeConstraint("T2", kQuantTypes)
                            .TypeConstraint("T3", kQuantTypes),
                        QLinearConvOp);

}  // namespace
}  // namespace sluice
