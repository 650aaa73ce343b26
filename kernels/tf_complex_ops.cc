// TensorFlow's complex-number kernels (ops/tf_complex_ops.cc): Complex, Real, Imag, ComplexAbs,
// Conj, FFT and IFFT. The arithmetic of complex tensors (Add, Sub, Mul, Div, Neg) is in the
// element-wise kernels with the other types.
#include <complex>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/fft.h"
#include "kernels/kernel_registry.h"
#include "kernels/parallel_for.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// real + i * imag with broadcasting; R is the parts' type, C = std::complex<R>.
template <typename R>
class ComplexOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& re = ctx->input(0);
    const Tensor& im = ctx->input(1);
    SL_ASSIGN_OR_RETURN(NaryBroadcastPlan plan, MakeNaryBroadcastPlan({re.shape(), im.shape()}));
    if (ctx->expected_output_dtype(0) != DataTypeToEnum<std::complex<R>>::value) {
      return absl::InvalidArgumentError(absl::StrCat("Complex of ", DataTypeString(re.dtype()), " parts makes ",
                                                     DataTypeString(DataTypeToEnum<std::complex<R>>::value), ", not ",
                                                     DataTypeString(ctx->expected_output_dtype(0))));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, plan.out_shape, &out));
    const R* pr = re.data<R>();
    const R* pi = im.data<R>();
    std::complex<R>* po = out->data<std::complex<R>>();
    ForEachNaryRun(plan, [&](int64_t o, const int64_t* off, int64_t count, const int64_t* step) {
      for (int64_t i = 0; i < count; ++i) po[o + i] = {pr[off[0] + i * step[0]], pi[off[1] + i * step[1]]};
    });
    return absl::OkStatus();
  }
};

// One real value per complex element: its real part, imaginary part or magnitude.
enum class Part { kReal, kImag, kAbs };

template <typename C, Part P>
class ComplexPartOp : public OpKernel {
 public:
  using R = typename C::value_type;
  absl::Status Compute(OpKernelContext* ctx) const override {
    if (ctx->expected_output_dtype(0) != DataTypeToEnum<R>::value) {
      return absl::InvalidArgumentError(absl::StrCat(type_string(), " of ", DataTypeString(DataTypeToEnum<C>::value),
                                                     " gives ", DataTypeString(DataTypeToEnum<R>::value), ", not ",
                                                     DataTypeString(ctx->expected_output_dtype(0))));
    }
    const Tensor& x = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    const C* px = x.data<C>();
    R* po = out->data<R>();
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      if constexpr (P == Part::kReal) {
        po[i] = px[i].real();
      } else if constexpr (P == Part::kImag) {
        po[i] = px[i].imag();
      } else {
        po[i] = std::hypot(px[i].real(), px[i].imag());  // No overflow for large parts.
      }
    }
    return absl::OkStatus();
  }
};

template <typename C>
class ConjOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    const C* px = x.data<C>();
    C* po = out->data<C>();
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) po[i] = std::conj(px[i]);
    return absl::OkStatus();
  }
};

// The 1-D transform of every innermost row, in double precision (fft.h); IFFT scales by 1/n as
// TensorFlow does. Rows go to the device's threads.
template <typename C, bool kInverse>
class FftOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.shape().dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(type_string(), ": input must have rank at least 1, got ",
                                                     x.shape().DebugString()));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    const int64_t n = x.shape().dim_size(x.shape().dims() - 1);
    if (n == 0 || x.NumElements() == 0) return absl::OkStatus();
    const int64_t rows = x.NumElements() / n;
    const FftPlan plan(n, kInverse);
    const C* px = x.data<C>();
    C* po = out->data<C>();
    const double scale = kInverse ? 1.0 / static_cast<double>(n) : 1.0;
    ParallelForElements(ctx, rows, /*cost_per_element=*/n * 40, [&](int64_t begin, int64_t end) {
      std::vector<std::complex<double>> row(n), scratch;
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t j = 0; j < n; ++j) row[j] = std::complex<double>(px[r * n + j]);
        plan.Run(row.data(), &scratch);
        for (int64_t j = 0; j < n; ++j) po[r * n + j] = C(row[j] * scale);
      }
    });
    return absl::OkStatus();
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernelTemplate<ComplexOp>("Complex", TypeList<float, double>{});
  using ComplexTypes = TypeList<complex64, complex128>;
  RegisterCpuKernels("Real", "T", ComplexTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<ComplexPartOp<typename decltype(t)::type, Part::kReal>>();
  });
  RegisterCpuKernels("Imag", "T", ComplexTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<ComplexPartOp<typename decltype(t)::type, Part::kImag>>();
  });
  RegisterCpuKernels("ComplexAbs", "T", ComplexTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<ComplexPartOp<typename decltype(t)::type, Part::kAbs>>();
  });
  RegisterCpuKernelTemplate<ConjOp>("Conj", ComplexTypes{});
  RegisterCpuKernels("FFT", "Tcomplex", ComplexTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<FftOp<typename decltype(t)::type, false>>();
  });
  RegisterCpuKernels("IFFT", "Tcomplex", ComplexTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<FftOp<typename decltype(t)::type, true>>();
  });
  return true;
}();

}  // namespace
}  // namespace sluice
