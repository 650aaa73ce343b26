#include "framework/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {

absl::StatusOr<TensorShape> TensorShape::FromDims(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape [", absl::StrJoin(dims, ","), "] has a negative dimension"));
    }
    if (d != 0 && n > INT64_MAX / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape [", absl::StrJoin(dims, ","), "] has too many elements"));
    }
    n *= d;
  }
  return TensorShape(dims);
}

absl::StatusOr<TensorShape> TensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) return absl::InvalidArgumentError("shape has unknown rank");
  DimVector dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return FromDims(dims);
}

int64_t TensorShape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

PartialShape PartialShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) return PartialShape();
  DimVector dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size() < 0 ? -1 : d.size());
  return PartialShape(dims);
}

bool PartialShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool PartialShape::IsCompatibleWith(const TensorShape& s) const {
  if (unknown_rank_) return true;
  if (static_cast<int>(dims_.size()) != s.dims()) return false;
  for (int i = 0; i < s.dims(); ++i) {
    if (dims_[i] >= 0 && dims_[i] != s.dim_size(i)) return false;
  }
  return true;
}

void PartialShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  if (unknown_rank_) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

std::string PartialShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  return absl::StrCat("[", absl::StrJoin(dims_, ",", [](std::string* out, int64_t d) {
                        absl::StrAppend(out, d < 0 ? std::string("?") : absl::StrCat(d));
                      }),
                      "]");
}

}  // namespace sluice
