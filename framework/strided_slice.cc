#include "framework/strided_slice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

constexpr int64_t kNewAxis = -1;
constexpr int64_t kShrunk = -2;

bool Bit(int64_t mask, int i) { return ((static_cast<uint64_t>(mask) >> i) & 1) != 0; }

}  // namespace

absl::StatusOr<StridedSlicePlan> PlanStridedSlice(absl::Span<const int64_t> dims,
                                                  absl::Span<const int64_t> begin,
                                                  absl::Span<const int64_t> end,
                                                  absl::Span<const int64_t> strides,
                                                  const StridedSliceMasks& masks) {
  const int n = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return absl::InvalidArgumentError(absl::StrCat("StridedSlice: begin, end and strides must have one length, got ",
                                                   begin.size(), ", ", end.size(), " and ", strides.size()));
  }
  if (n > 64) {
    return absl::InvalidArgumentError(absl::StrCat("StridedSlice: a spec of ", n, " entries is longer than 64"));
  }
  int ellipses = 0;
  for (int i = 0; i < n; ++i) ellipses += Bit(masks.ellipsis, i) ? 1 : 0;
  if (ellipses > 1) return absl::InvalidArgumentError("StridedSlice: more than one ellipsis in ellipsis_mask");
  for (int i = 0; i < n; ++i) {
    if (strides[i] == 0) return absl::InvalidArgumentError(absl::StrCat("StridedSlice: strides[", i, "] is 0"));
  }

  const int rank = static_cast<int>(dims.size());
  StridedSlicePlan p;
  p.begin.assign(rank, 0);
  p.stride.assign(rank, 1);
  p.size.assign(dims.begin(), dims.end());
  std::vector<int64_t> gather;  // Per output dim: the input dim it shows, kNewAxis or kShrunk.
  int full = 0;                 // The next input dim the spec describes.
  auto too_many = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("StridedSlice: the slice spec names more dims than the input's rank ", rank));
  };
  for (int i = 0; i < n; ++i) {
    if (Bit(masks.ellipsis, i)) {
      // The ellipsis stands for the dims that the entries after it do not name.
      int named_after = 0;
      for (int j = i + 1; j < n; ++j) named_after += Bit(masks.new_axis, j) ? 0 : 1;
      const int next = rank - named_after;
      for (; full < next; ++full) gather.push_back(full);
      continue;
    }
    if (Bit(masks.new_axis, i)) {
      gather.push_back(kNewAxis);
      continue;
    }
    if (full >= rank) return too_many();
    const int64_t dim = dims[full], s = strides[i];
    auto fwd = [dim](int64_t x) { return x < 0 ? x + dim : x; };
    if (Bit(masks.shrink_axis, i)) {
      if (s < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("StridedSlice: only stride 1 is allowed on a shrunk axis (strides[", i, "] is ", s, ")"));
      }
      const int64_t x = fwd(begin[i]);
      if (x < 0 || x >= dim) {
        return absl::InvalidArgumentError(absl::StrCat("StridedSlice: index ", begin[i], " of dim ", full,
                                                       " is out of bounds for size ", dim));
      }
      p.begin[full] = x;
      p.size[full] = 1;
      gather.push_back(kShrunk);
      ++full;
      continue;
    }
    // Reading forward covers [0, dim]; backward [-1, dim - 1] (-1: one before the first).
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    const int64_t b = Bit(masks.begin, i) ? (s > 0 ? lo : hi) : std::clamp(fwd(begin[i]), lo, hi);
    const int64_t e = Bit(masks.end, i) ? (s > 0 ? hi : lo) : std::clamp(fwd(end[i]), lo, hi);
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && (interval < 0) == (s < 0)) size = interval / s + (interval % s != 0 ? 1 : 0);
    p.begin[full] = size > 0 ? b : 0;
    p.stride[full] = size > 1 ? s : 1;
    p.size[full] = size;
    gather.push_back(full);
    ++full;
  }
  for (; full < rank; ++full) gather.push_back(full);  // An implicit ellipsis at the end.
  for (int64_t g : gather) {
    if (g == kNewAxis) {
      p.final_shape.push_back(1);
    } else if (g != kShrunk) {
      p.final_shape.push_back(p.size[g]);
    }
  }
  return p;
}

}  // namespace sluice
