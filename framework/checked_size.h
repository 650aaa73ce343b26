// Overflow-checked arithmetic for element counts, byte sizes and offsets that come from user
// input (shapes, attributes, file offsets). One place decides what overflows and how it is
// reported, so kernels, decoders and loaders all fail the same way instead of wrapping.
//
//   SL_ASSIGN_OR_RETURN(int64_t n, ShapeElements(dims), "node '", name, "'");
//   SL_ASSIGN_OR_RETURN(uint64_t bytes, TensorBytes(DT_FLOAT, n));   // <= kMaxTensorBytes
//   int64_t end;
//   if (!CheckedAdd(offset, length, &end)) return ...;
//
// Errors: INVALID_ARGUMENT for a negative dim or a count that overflows int64;
// RESOURCE_EXHAUSTED for a byte size above kMaxTensorBytes (no machine holds it, so refusing
// early beats a bad_alloc or a wrapped size).
#ifndef SLUICE_FRAMEWORK_CHECKED_SIZE_H_
#define SLUICE_FRAMEWORK_CHECKED_SIZE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/types.h"

namespace sluice {

// The largest buffer one tensor may have: 1 TiB. Far above any real model's tensor, far
// below where size arithmetic in bytes could wrap.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

// a * b and a + b into *out; false (and *out unspecified) when the result does not fit.
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }

// The product of `dims`; INVALID_ARGUMENT naming the shape on a negative dim or on overflow.
absl::StatusOr<int64_t> ShapeElements(absl::Span<const int64_t> dims);

// The product of `dims`, or -1 when a dim is negative or the product overflows: for hot
// paths that only need to know whether a shape is sane.
int64_t ShapeElementsOrMinusOne(absl::Span<const int64_t> dims);

// Bytes of `num_elements` elements of `dt` (DT_STRING and DT_VARIANT count their in-memory
// element objects). INVALID_ARGUMENT on a negative count; RESOURCE_EXHAUSTED, naming `what`
// (a tensor, a node) when given, above kMaxTensorBytes.
absl::StatusOr<uint64_t> TensorBytes(DataType dt, int64_t num_elements, absl::string_view what = "");

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_CHECKED_SIZE_H_
