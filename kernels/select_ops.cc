// ONNX kernels that look at element values: NonZero, Unique, OneHot.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"

namespace sluice {
namespace {

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return !v.empty();
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(v) != 0.0f;
  } else {
    return v != T(0);
  }
}

// Ordering used by Unique: numeric order with NaNs last and equal to each other (a strict
// weak order, as sorting needs), half through float, complex by real then imaginary part,
// byte order for strings.
template <typename T>
bool LessThan(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return LessThan(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    return a < b || (!std::isnan(a) && std::isnan(b));
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

class NonZeroOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    std::vector<int64_t> hits;
    bool visited = VisitDataType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = x.data<T>();
      for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
        if (IsNonZero(v[i])) hits.push_back(i);
      }
    });
    if (!visited) {
      return absl::UnimplementedError(absl::StrCat("NonZero: type ", DataTypeString(x.dtype())));
    }
    // A scalar counts as a 1-element vector (numpy's nonzero does the same).
    TensorShape shape = x.dims() == 0 ? TensorShape({1}) : x.shape();
    const int rank = shape.dims();
    const int64_t nnz = static_cast<int64_t>(hits.size());
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({rank, nnz}), &out));
    int64_t* o = out->data<int64_t>();
    for (int64_t j = 0; j < nnz; ++j) {
      int64_t rest = hits[j];
      for (int d = rank - 1; d >= 0; --d) {
        o[d * nnz + j] = rest % shape.dim_size(d);
        rest /= shape.dim_size(d);
      }
    }
    return absl::OkStatus();
  }
};

class UniqueOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    int64_t sorted = 1;
    SL_RETURN_IF_ERROR(ctx->GetAttr("sorted", &sorted));
    sorted_ = sorted != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() == 0) {
      return absl::InvalidArgumentError("Unique: input must have rank >= 1 (flatten scalars first)");
    }
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, x.dims(), "Unique: axis"));
    const int64_t n = x.dim_size(axis);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
    for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);

    // Slices along axis, compared element by element in row-major order.
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::vector<bool> same_as_prev(n, false);  // In sorted order.
    bool visited = VisitDataType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* v = x.data<T>();
      auto cmp = [&](int64_t a, int64_t b) {  // -1, 0, 1
        for (int64_t o = 0; o < outer; ++o) {
          const T* pa = v + (o * n + a) * inner;
          const T* pb = v + (o * n + b) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            if (LessThan(pa[i], pb[i])) return -1;
            if (LessThan(pb[i], pa[i])) return 1;
          }
        }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
      for (int64_t j = 1; j < n; ++j) same_as_prev[j] = cmp(order[j - 1], order[j]) == 0;
    });
    if (!visited) {
      return absl::UnimplementedError(absl::StrCat("Unique: type ", DataTypeString(x.dtype())));
    }
    // Groups of equal slices in sorted order; stable sorting puts each first occurrence first.
    std::vector<int64_t> first, count, group_of(n);
    for (int64_t j = 0; j < n; ++j) {
      if (j == 0 || !same_as_prev[j]) {
        first.push_back(order[j]);
        count.push_back(0);
      }
      ++count.back();
      group_of[order[j]] = static_cast<int64_t>(first.size()) - 1;
    }
    const int64_t groups = static_cast<int64_t>(first.size());
    std::vector<int64_t> position(groups);  // Output position of each group.
    std::iota(position.begin(), position.end(), 0);
    if (!sorted_) {
      std::vector<int64_t> by_first(groups);
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t p = 0; p < groups; ++p) position[by_first[p]] = p;
    }
    TensorShape y_shape = x.shape();
    y_shape.set_dim(axis, groups);
    Tensor *y, *indices, *inverse, *counts;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, y_shape, &y));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape({groups}), &indices));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, TensorShape({n}), &inverse));
    SL_RETURN_IF_ERROR(ctx->allocate_output(3, TensorShape({groups}), &counts));
    for (int64_t g = 0; g < groups; ++g) {
      indices->data<int64_t>()[position[g]] = first[g];
      counts->data<int64_t>()[position[g]] = count[g];
    }
    for (int64_t j = 0; j < n; ++j) inverse->data<int64_t>()[j] = position[group_of[j]];
    if (y->NumElements() == 0) return absl::OkStatus();
    return VisitElements(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(x.raw_data());
      E* dst = static_cast<E*>(y->raw_data());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t g = 0; g < groups; ++g) {
          const E* s = src + (o * n + first[g]) * inner;
          std::copy(s, s + inner, dst + (o * groups + position[g]) * inner);
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0;
  bool sorted_ = true;
};

// The values of a real-typed tensor as doubles.
absl::StatusOr<std::vector<double>> RealValues(const Tensor& t, absl::string_view what) {
  std::vector<double> out;
  VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> ||
                  std::is_same_v<T, bfloat16>) {
      for (const T& v : t.flat<T>()) {
        if constexpr (std::is_arithmetic_v<T>) {
          out.push_back(static_cast<double>(v));
        } else {
          out.push_back(static_cast<float>(v));
        }
      }
    }
  });
  if (out.size() != static_cast<size_t>(t.NumElements())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must have a real number type, got ", DataTypeString(t.dtype())));
  }
  return out;
}

class OneHotOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(2);
    SL_ASSIGN_OR_RETURN(std::vector<double> depth_v, RealValues(ctx->input(1), "OneHot: depth"));
    if (depth_v.size() != 1) return absl::InvalidArgumentError("OneHot: depth must have one element");
    int64_t depth = 0;
    if (!TruncateToInt64(depth_v[0], &depth) || depth < 1) {
      return absl::InvalidArgumentError(absl::StrCat("OneHot: depth ", depth_v[0], " is not a count >= 1"));
    }
    if (values.NumElements() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "OneHot: values must be [off_value, on_value], got ", values.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<double> idx, RealValues(indices, "OneHot: indices"));
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, indices.dims() + 1, "OneHot: axis"));
    TensorShape out_shape = indices.shape();
    out_shape.InsertDim(axis, depth);
    SL_ASSIGN_OR_RETURN(TensorShape checked, TensorShape::FromDims(out_shape.dim_sizes()));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, checked, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= indices.dim_size(d);
    for (int d = axis; d < indices.dims(); ++d) inner *= indices.dim_size(d);
    return VisitElements(values.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E off = static_cast<const E*>(values.raw_data())[0];
      const E on = static_cast<const E*>(values.raw_data())[1];
      E* o = static_cast<E*>(out->raw_data());
      std::fill(o, o + out->NumElements(), off);
      for (int64_t a = 0; a < outer; ++a) {
        for (int64_t i = 0; i < inner; ++i) {
          int64_t k = -1;  // Out of int64's range (or NaN): out of [-depth, depth), so all off.
          if (!TruncateToInt64(idx[a * inner + i], &k)) continue;
          if (k < 0) k += depth;
          if (k >= 0 && k < depth) o[(a * depth + k) * inner + i] = on;  // Others stay off.
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = -1;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>NonZero").Device(DEVICE_CPU), NonZeroOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Unique").Device(DEVICE_CPU), UniqueOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>OneHot").Device(DEVICE_CPU), OneHotOp);

}  // namespace
}  // namespace sluice
