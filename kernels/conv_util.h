// Window geometry shared by convolution, transposed convolution and pooling kernels (ONNX
// semantics): output sizes and padding from auto_pad, kernel, strides, dilations and pads.
//
//   SL_ASSIGN_OR_RETURN(WindowGeometry g,
//                       ComputeWindowGeometry(spatial_in, attrs, /*ceil_mode=*/false));
//   g.out[i], g.pad_begin[i], g.pad_end[i]
#ifndef SLUICE_KERNELS_CONV_UTIL_H_
#define SLUICE_KERNELS_CONV_UTIL_H_

#include <algorithm>
#include <initializer_list>
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

// The product of `factors`, the element count of a scratch buffer (im2col columns) of up to
// 8-byte elements; INVALID_ARGUMENT on overflow, RESOURCE_EXHAUSTED over kMaxTensorBytes,
// naming `what`. Checked once per Compute, before the buffer is sized.
absl::StatusOr<int64_t> ScratchElements(std::initializer_list<int64_t> factors, absl::string_view what);

// The spatial dims of an N x C x spatial... shape (dims 2 and on).
std::vector<int64_t> SpatialDims(const TensorShape& shape);
// [n, c, g.out...]: the shape a window op gives for n images of c channels.
DimVector WindowOutputDims(int64_t n, int64_t c, const WindowGeometry& g);

// Calls fn(out_index, in-bounds input offsets, cells inside the padded extent) for every
// output position of one (n, c) plane of spatial size `in`, kernel offsets in row-major order.
// The pooling kernels and their gradients walk the same windows through it.
template <typename Fn>
void ForEachPoolWindow(const std::vector<int64_t>& in, const WindowGeometry& g, Fn&& fn) {
  const int nd = static_cast<int>(in.size());
  const int64_t out_size = Product(g.out), k_size = Product(g.kernel);
  std::vector<int64_t> o(nd, 0), k(nd, 0), cells;
  cells.reserve(k_size);
  for (int64_t oi = 0; oi < out_size; ++oi) {
    cells.clear();
    int64_t padded = 0;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t ki = 0; ki < k_size; ++ki) {
      int64_t offset = 0;
      bool inside = true, in_padded = true;
      for (int d = 0; d < nd; ++d) {
        const int64_t x = o[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
        if (x < -g.pad_begin[d] || x >= in[d] + g.pad_end[d]) in_padded = false;
        if (x < 0 || x >= in[d]) inside = false;
        offset = offset * in[d] + x;
      }
      if (in_padded) ++padded;
      if (inside) cells.push_back(offset);
      for (int d = nd - 1; d >= 0; --d) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
    fn(oi, cells, padded);
    for (int d = nd - 1; d >= 0; --d) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

// Every window of ForEachPoolWindow at once: window oi's cells are
// cells[start[oi] .. start[oi + 1]), and padded[oi] counts its positions inside the padding.
struct PoolWindows {
  std::vector<int64_t> start, cells, padded;
};
inline PoolWindows ListPoolWindows(const std::vector<int64_t>& in, const WindowGeometry& g) {
  PoolWindows w;
  const int64_t out_size = Product(g.out);
  w.start.reserve(out_size + 1);
  w.padded.reserve(out_size);
  ForEachPoolWindow(in, g, [&](int64_t, const std::vector<int64_t>& cells, int64_t padded) {
    w.start.push_back(static_cast<int64_t>(w.cells.size()));
    w.cells.insert(w.cells.end(), cells.begin(), cells.end());
    w.padded.push_back(padded);
  });
  w.start.push_back(static_cast<int64_t>(w.cells.size()));
  return w;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_CONV_UTIL_H_
