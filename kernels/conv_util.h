// Window geometry shared by convolution, transposed convolution and pooling kernels (ONNX
// semantics): output sizes and padding from auto_pad, kernel, strides, dilations and pads.
//
//   SL_ASSIGN_OR_RETURN(WindowGeometry g,
//                       ComputeWindowGeometry(spatial_in, attrs, /*ceil_mode=*/false));
//   g.out[i], g.pad_begin[i], g.pad_end[i]
#ifndef SLUICE_KERNELS_CONV_UTIL_H_
#define SLUICE_KERNELS_CONV_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/op_kernel.h"

namespace sluice {

// The window attrs every conv-like ONNX op shares, parsed once in Init.
struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape;  // Empty: taken from the weights (Conv).
  std::vector<int64_t> strides;       // Empty: all 1.
  std::vector<int64_t> dilations;     // Empty: all 1.
  std::vector<int64_t> pads;          // Empty: all 0. Begin values, then end values.

  absl::Status Parse(OpKernelConstruction* ctx, bool has_dilations = true);
};

struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

// Output size per spatial dim: floor (or ceil) of (in + pads - dilated kernel) / stride + 1;
// SAME_UPPER/SAME_LOWER give ceil(in / stride) with the odd padding at the end/begin.
absl::StatusOr<WindowGeometry> ComputeWindowGeometry(const std::vector<int64_t>& in,
                                                     const std::vector<int64_t>& kernel,
                                                     const WindowAttrs& attrs, bool ceil_mode);

// Columns for convolution as a matrix product: for one image of `channels` x in..., writes
// rows (channel, kernel offset...) x cols (output position...), zero where the window is in
// the padding.
void Im2Col(const float* image, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, float* columns);
// The adjoint of Im2Col: adds each column entry into the image position it came from.
void Col2Im(const float* columns, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, float* image);
// The same in double precision (double Conv and the convolution gradients).
void Im2Col(const double* image, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, double* columns);
void Col2Im(const double* columns, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, double* image);

int64_t Product(const std::vector<int64_t>& v);

}  // namespace sluice

#endif  // SLUICE_KERNELS_CONV_UTIL_H_
