// Shapes: TensorShape (fully known) and PartialShape (unknown dims as -1, or unknown rank).
//
//   TensorShape s({2, 3});
//   s.num_elements();                  // 6
//   PartialShape p = PartialShape::FromProto(attr.shape());
//   p.IsCompatibleWith(s);             // does a fed tensor fit a placeholder's shape?
#ifndef SLUICE_FRAMEWORK_TENSOR_SHAPE_H_
#define SLUICE_FRAMEWORK_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tensor_shape.pb.h"

namespace sluice {

using DimVector = absl::InlinedVector<int64_t, 6>;

class TensorShape {
 public:
  TensorShape() = default;  // A scalar.
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}

  // Fails on negative or unknown dims and on element counts that overflow int64.
  static absl::StatusOr<TensorShape> FromDims(absl::Span<const int64_t> dims);
  static absl::StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  // The product of the dims; INT64_MAX when it overflows (a shape built from unchecked dims),
  // which no allocation accepts, so such a tensor fails to allocate instead of wrapping.
  int64_t num_elements() const;
  bool IsScalar() const { return dims_.empty(); }

  void AddDim(int64_t size) { dims_.push_back(size); }
  void InsertDim(int i, int64_t size) { dims_.insert(dims_.begin() + i, size); }
  void RemoveDim(int i) { dims_.erase(dims_.begin() + i); }
  void set_dim(int i, int64_t size) { dims_[i] = size; }
  void Clear() { dims_.clear(); }

  void AsProto(TensorShapeProto* proto) const;
  std::string DebugString() const;  // "[2,3]"

  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return !(*this == o); }

 private:
  DimVector dims_;
};

class PartialShape {
 public:
  PartialShape() : unknown_rank_(true) {}
  explicit PartialShape(absl::Span<const int64_t> dims)
      : unknown_rank_(false), dims_(dims.begin(), dims.end()) {}
  explicit PartialShape(const TensorShape& s) : PartialShape(s.dim_sizes()) {}
  static PartialShape FromProto(const TensorShapeProto& proto);
  static PartialShape Scalar() { return PartialShape(absl::Span<const int64_t>()); }

  bool unknown_rank() const { return unknown_rank_; }
  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }  // -1 when unknown.
  absl::Span<const int64_t> dims() const { return dims_; }
  bool IsFullyDefined() const;
  bool IsCompatibleWith(const TensorShape& s) const;

  void AsProto(TensorShapeProto* proto) const;
  std::string DebugString() const;  // "[2,?]" or "<unknown>"

  bool operator==(const PartialShape& o) const {
    return unknown_rank_ == o.unknown_rank_ && dims_ == o.dims_;
  }

 private:
  bool unknown_rank_;
  DimVector dims_;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_TENSOR_SHAPE_H_
