#include "framework/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/checked_size.h"
#include "framework/status.h"

namespace sluice {

absl::StatusOr<TensorShape> TensorShape::FromDims(absl::Span<const int64_t> dims) {
  SL_RETURN_IF_ERROR(ShapeElements(dims).status());
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
  bool overflow = false;
  for (int64_t d : dims_) {
    if (d == 0) return 0;
    if (!overflow && !CheckedMul(n, d, &n)) overflow = true;
  }
  return overflow ? INT64_MAX : n;
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
