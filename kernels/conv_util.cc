#include "kernels/conv_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/checked_size.h"

namespace sluice {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

absl::StatusOr<int64_t> ScratchElements(std::initializer_list<int64_t> factors, absl::string_view what) {
  SL_ASSIGN_OR_RETURN(int64_t n, ShapeElements(absl::Span<const int64_t>(factors.begin(), factors.size())), what);
  SL_RETURN_IF_ERROR(TensorBytes(DT_DOUBLE, n, what).status());
  return n;
}

std::vector<int64_t> SpatialDims(const TensorShape& shape) {
  std::vector<int64_t> d;
  for (int i = 2; i < shape.dims(); ++i) d.push_back(shape.dim_size(i));
  return d;
}

DimVector WindowOutputDims(int64_t n, int64_t c, const WindowGeometry& g) {
  DimVector dims = {n, c};
  for (int64_t o : g.out) dims.push_back(o);
  return dims;
}

absl::Status WindowAttrs::Parse(OpKernelConstruction* ctx, bool has_dilations) {
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "auto_pad", std::string("NOTSET"), &auto_pad));
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "kernel_shape", std::vector<int64_t>{}, &kernel_shape));
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "strides", std::vector<int64_t>{}, &strides));
  if (has_dilations) {
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "dilations", std::vector<int64_t>{}, &dilations));
  }
  SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "pads", std::vector<int64_t>{}, &pads));
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    return absl::InvalidArgumentError(absl::StrCat("unknown auto_pad '", auto_pad, "'"));
  }
  for (int64_t s : strides) {
    if (s <= 0) return absl::InvalidArgumentError("strides must be positive");
  }
  for (int64_t d : dilations) {
    if (d <= 0) return absl::InvalidArgumentError("dilations must be positive");
  }
  for (int64_t p : pads) {
    if (p < 0) return absl::InvalidArgumentError("pads must not be negative");
  }
  return absl::OkStatus();
}

absl::StatusOr<WindowGeometry> ComputeWindowGeometry(const std::vector<int64_t>& in,
                                                     const std::vector<int64_t>& kernel,
                                                     const WindowAttrs& a, bool ceil_mode) {
  const size_t n = in.size();
  auto check_len = [&](const std::vector<int64_t>& v, size_t want, const char* what) -> absl::Status {
    if (!v.empty() && v.size() != want) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has ", v.size(), " values for ", n,
                                                     " spatial dimensions"));
    }
    return absl::OkStatus();
  };
  SL_RETURN_IF_ERROR(check_len(kernel, n, "kernel_shape"));
  SL_RETURN_IF_ERROR(check_len(a.strides, n, "strides"));
  SL_RETURN_IF_ERROR(check_len(a.dilations, n, "dilations"));
  SL_RETURN_IF_ERROR(check_len(a.pads, 2 * n, "pads"));
  WindowGeometry g;
  g.kernel = kernel;
  g.strides = a.strides.empty() ? std::vector<int64_t>(n, 1) : a.strides;
  g.dilations = a.dilations.empty() ? std::vector<int64_t>(n, 1) : a.dilations;
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  g.out.resize(n);
  // Every value below comes from attributes or input shapes: checked, so that pads or
  // dilations near 2^62 give an error instead of a wrapped size that oneDNN or im2col trust.
  auto overflow = [&](size_t i) {
    return absl::InvalidArgumentError(absl::StrCat(
        "window geometry overflows in spatial dimension ", i, ": input ", in[i], ", kernel ",
        g.kernel[i], ", stride ", g.strides[i], ", dilation ", g.dilations[i], ", pads ",
        g.pad_begin[i], "/", g.pad_end[i]));
  };
  for (size_t i = 0; i < n; ++i) {
    if (g.kernel[i] <= 0 || g.strides[i] <= 0 || g.dilations[i] <= 0 || in[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel (", g.kernel[i], "), stride (", g.strides[i], ") and dilation (", g.dilations[i],
          ") must be positive in spatial dimension ", i));
    }
    int64_t dk;  // (kernel - 1) * dilation + 1
    if (!CheckedMul(g.kernel[i] - 1, g.dilations[i], &dk) || !CheckedAdd(dk, int64_t{1}, &dk)) {
      return overflow(i);
    }
    const int64_t s = g.strides[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[i] = in[i] / s + (in[i] % s != 0 ? 1 : 0);  // ceil(in / s) without in + s - 1.
      int64_t total;
      if (!CheckedMul(std::max<int64_t>(g.out[i] - 1, 0), s, &total) || !CheckedAdd(total, dk, &total)) {
        return overflow(i);
      }
      total = std::max<int64_t>(0, total - in[i]);
      int64_t small = total / 2;
      g.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? small : total - small;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
      g.pad_begin[i] = a.pads[i];
      g.pad_end[i] = a.pads[i + n];
      if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("pads must not be negative, got ",
                                                       absl::StrJoin(a.pads, ",")));
      }
    }
    int64_t padded;
    if (!CheckedAdd(in[i], g.pad_begin[i], &padded) || !CheckedAdd(padded, g.pad_end[i], &padded)) {
      return overflow(i);
    }
    const int64_t span = padded - dk;
    if (span < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the window (", dk, " after dilation) is larger than the padded input (", padded,
          ") in spatial dimension ", i));
    }
    g.out[i] = (ceil_mode ? span / s + (span % s != 0 ? 1 : 0) : span / s) + 1;
    // In ceil mode the last window must start inside the input or its leading pad (ONNX 1.17's
    // rule, and PyTorch's): [1,1,2,2] pooled by 1 with stride 2 is 1 x 1, not 2 x 2.
    if (ceil_mode && g.out[i] > 1 && (g.out[i] - 1) * s >= in[i] + g.pad_begin[i]) --g.out[i];
  }
  // The kernels index kernel and output positions as one flat int64.
  if (ShapeElementsOrMinusOne(g.out) < 0 || ShapeElementsOrMinusOne(g.kernel) < 0) {
    return absl::InvalidArgumentError(absl::StrCat("window output [", absl::StrJoin(g.out, ","),
                                                   "] or kernel [", absl::StrJoin(g.kernel, ","),
                                                   "] has more elements than fit in int64"));
  }
  return g;
}

namespace {

// Walks output positions of all spatial dims but the last; calls fn(input offset of the row
// start for this kernel offset, output row offset) with in-bounds information computed per
// element by the caller.
template <bool kAccumulate, typename T>
void ColumnPass(T* image, T* columns, int64_t channels, const std::vector<int64_t>& in,
                const WindowGeometry& g) {
  const int nd = static_cast<int>(in.size());
  const int64_t out_size = Product(g.out);
  const int64_t kernel_size = Product(g.kernel);
  const int64_t in_size = Product(in);
  std::vector<int64_t> kidx(nd, 0), oidx(nd, 0);
  const int last = nd - 1;
  const int64_t out_last = g.out[last];
  for (int64_t c = 0; c < channels; ++c) {
    T* img = image + c * in_size;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t k = 0; k < kernel_size; ++k) {
      T* col = columns + (c * kernel_size + k) * out_size;
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t row = 0; row < out_size; row += out_last) {
        // Input offset of the outer coordinates; -1 when outside the image.
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < last; ++d) {
          int64_t x = oidx[d] * g.strides[d] - g.pad_begin[d] + kidx[d] * g.dilations[d];
          if (x < 0 || x >= in[d]) {
            inside = false;
            break;
          }
          offset = offset * in[d] + x;
        }
        T* col_row = col + row;
        const int64_t s = g.strides[last];
        const int64_t x0 = kidx[last] * g.dilations[last] - g.pad_begin[last];
        if (!inside) {
          if (!kAccumulate) std::memset(col_row, 0, out_last * sizeof(T));
        } else {
          T* img_row = img + offset * in[last];
          for (int64_t o = 0; o < out_last; ++o) {
            int64_t x = x0 + o * s;
            bool ok = x >= 0 && x < in[last];
            if (kAccumulate) {
              if (ok) img_row[x] += col_row[o];
            } else {
              col_row[o] = ok ? img_row[x] : T(0);
            }
          }
        }
        for (int d = last - 1; d >= 0; --d) {  // Next outer output coordinate.
          if (++oidx[d] < g.out[d]) break;
          oidx[d] = 0;
        }
      }
      for (int d = nd - 1; d >= 0; --d) {  // Next kernel offset.
        if (++kidx[d] < g.kernel[d]) break;
        kidx[d] = 0;
      }
    }
  }
}

}  // namespace

void Im2Col(const float* image, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, float* columns) {
  ColumnPass<false>(const_cast<float*>(image), columns, channels, in, g);
}

void Col2Im(const float* columns, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, float* image) {
  ColumnPass<true>(image, const_cast<float*>(columns), channels, in, g);
}

void Im2Col(const double* image, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, double* columns) {
  ColumnPass<false>(const_cast<double*>(image), columns, channels, in, g);
}

void Col2Im(const double* columns, int64_t channels, const std::vector<int64_t>& in,
            const WindowGeometry& g, double* image) {
  ColumnPass<true>(image, const_cast<double*>(columns), channels, in, g);
}

}  // namespace sluice
