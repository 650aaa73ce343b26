#include "framework/checked_size.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {

int64_t ShapeElementsOrMinusOne(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    // A zero dim makes the count 0 even when the others would overflow on their own.
    if (d == 0) return 0;
    if (!overflow && !CheckedMul(n, d, &n)) overflow = true;
  }
  return overflow ? -1 : n;
}

absl::StatusOr<int64_t> ShapeElements(absl::Span<const int64_t> dims) {
  const int64_t n = ShapeElementsOrMinusOne(dims);
  if (n >= 0) return n;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape [", absl::StrJoin(dims, ","), "] has a negative dimension"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "shape [", absl::StrJoin(dims, ","), "] has more elements than fit in int64"));
}

absl::StatusOr<uint64_t> TensorBytes(DataType dt, int64_t num_elements, absl::string_view what) {
  if (num_elements < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative element count ", num_elements,
                                                   what.empty() ? "" : " for ", what));
  }
  const uint64_t elem = dt == DT_STRING    ? sizeof(tstring)
                        : dt == DT_VARIANT ? sizeof(Variant)
                                           : DataTypeSize(dt);
  uint64_t bytes = 0;
  if (!CheckedMul(static_cast<uint64_t>(num_elements), elem, &bytes) || bytes > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what.empty() ? "a " : "", what, what.empty() ? "" : ": a ", DataTypeString(dt),
        " tensor of ", num_elements, " elements needs more than the ", kMaxTensorBytes >> 30,
        " GiB one tensor may hold"));
  }
  return bytes;
}

}  // namespace sluice
