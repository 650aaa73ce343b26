// AffineGrid (ONNX 20): the sampling grid that GridSample takes, made by an affine map theta
// of each output pixel's normalized centre (x, y[, z]) in [-1, 1].
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

template <typename T>
class AffineGridOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t align_corners = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners));
    align_corners_ = align_corners != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& theta = ctx->input(0);
    const Tensor& size = ctx->input(1);
    if (size.dims() != 1 || (size.NumElements() != 4 && size.NumElements() != 5)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AffineGrid: size must be [N, C, H, W] or [N, C, D, H, W], got shape ", size.shape().DebugString()));
    }
    const int r = static_cast<int>(size.NumElements()) - 2;  // 2 or 3 spatial dims.
    const int64_t* s = size.data<int64_t>();
    if (theta.dims() != 3 || theta.dim_size(0) != s[0] || theta.dim_size(1) != r || theta.dim_size(2) != r + 1) {
      return absl::InvalidArgumentError(absl::StrCat("AffineGrid: theta must be [", s[0], ", ", r, ", ", r + 1,
                                                     "] for size [", absl::StrJoin(s, s + size.NumElements(), ", "),
                                                     "], got ", theta.shape().DebugString()));
    }
    // Output dims: N, then the spatial dims outermost first (D, H, W), then r coordinates.
    DimVector dims = {s[0]};
    for (int d = 0; d < r; ++d) dims.push_back(s[2 + d]);
    dims.push_back(r);
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims), "AffineGrid");
    Tensor* grid;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &grid));
    if (grid->NumElements() == 0) return absl::OkStatus();
    // Normalized centres along each spatial dim, outermost first.
    std::vector<std::vector<double>> centres(r);
    for (int d = 0; d < r; ++d) {
      const int64_t n = s[2 + d];
      centres[d].resize(n);
      for (int64_t i = 0; i < n; ++i) {
        centres[d][i] = align_corners_ ? (n > 1 ? -1.0 + 2.0 * i / (n - 1) : -1.0) : -1.0 + (2.0 * i + 1) / n;
      }
    }
    const T* th = theta.data<T>();
    T* out = grid->data<T>();
    const int64_t points = grid->NumElements() / (s[0] * r);
    std::vector<int64_t> index(r, 0);
    std::vector<double> homo(r + 1, 1.0);  // (x, y[, z], 1): innermost dim first.
    for (int64_t n = 0; n < s[0]; ++n) {
      const T* m = th + n * r * (r + 1);
      std::fill(index.begin(), index.end(), 0);
      for (int64_t p = 0; p < points; ++p) {
        for (int d = 0; d < r; ++d) homo[r - 1 - d] = centres[d][index[d]];
        for (int row = 0; row < r; ++row) {
          double acc = 0;
          for (int k = 0; k <= r; ++k) acc += ToDouble(m[row * (r + 1) + k]) * homo[k];
          out[(n * points + p) * r + row] = FromDouble<T>(acc);
        }
        for (int d = r - 1; d >= 0; --d) {
          if (++index[d] < s[2 + d]) break;
          index[d] = 0;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool align_corners_ = false;
};

struct RegisterAffineGridKernels {
  RegisterAffineGridKernels() {
    RegisterCpuKernels("Onnx>AffineGrid", "T1", FloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<AffineGridOp<typename decltype(t)::type>>();
    });
  }
} register_affine_grid_kernels;

}  // namespace
}  // namespace sluice
