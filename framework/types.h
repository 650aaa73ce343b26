// Element types: sizes, names, and the mapping between C++ types and DataType.
//
//   DataType dt = DataTypeToEnum<float>::value;        // DT_FLOAT
//   size_t bytes = DataTypeSize(dt);                   // 4
//   SL_ASSIGN_OR_RETURN(DataType t, DataTypeFromString("int32"));
#ifndef SLUICE_FRAMEWORK_TYPES_H_
#define SLUICE_FRAMEWORK_TYPES_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "proto/types.pb.h"

namespace sluice {

// IEEE 754 binary16, stored as its bits; arithmetic goes through float.
struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f) : bits(FloatToBits(f)) {}
  operator float() const { return BitsToFloat(bits); }
  static half FromBits(uint16_t b) { half h; h.bits = b; return h; }
  static uint16_t FloatToBits(float f);
  static float BitsToFloat(uint16_t b);
};

// bfloat16: the upper 16 bits of a float32, rounded to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(FloatToBits(f)) {}
  operator float() const { return BitsToFloat(bits); }
  static bfloat16 FromBits(uint16_t b) { bfloat16 h; h.bits = b; return h; }
  static uint16_t FloatToBits(float f);
  static float BitsToFloat(uint16_t b);
};

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
using tstring = std::string;

using DataTypeVector = absl::InlinedVector<DataType, 4>;

// The element of a DT_VARIANT tensor: an immutable value the runtime moves without knowing
// its type (a sequence of tensors, an optional; framework/tensor_sequence.h). Elements are
// shared, never changed in place: an op that "modifies" one makes a new one.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  virtual std::string DebugString() const = 0;
};
using Variant = std::shared_ptr<const VariantValue>;

// Bytes per element; 0 for types without a fixed-size representation (string, resource).
size_t DataTypeSize(DataType dt);
// "float", "int32", ... (TensorFlow's spelling); "invalid" for unknown values.
std::string DataTypeString(DataType dt);
// Accepts "float" and "DT_FLOAT" spellings.
absl::StatusOr<DataType> DataTypeFromString(absl::string_view name);
bool DataTypeIsFloating(DataType dt);
bool DataTypeIsInteger(DataType dt);
bool DataTypeIsComplex(DataType dt);
// Types whose tensors the runtime can hold (fixed-size numerics, bool, string).
bool DataTypeIsSupported(DataType dt);
std::string DataTypeVectorString(const DataTypeVector& types);

template <typename T> struct DataTypeToEnum;
template <DataType D> struct EnumToDataType;

#define SL_MATCH_TYPE_AND_ENUM(TYPE, ENUM)                     \
  template <> struct DataTypeToEnum<TYPE> {                    \
    static constexpr DataType value = ENUM;                    \
  };                                                           \
  template <> struct EnumToDataType<ENUM> { using Type = TYPE; }

SL_MATCH_TYPE_AND_ENUM(float, DT_FLOAT);
SL_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE);
SL_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32);
SL_MATCH_TYPE_AND_ENUM(uint32_t, DT_UINT32);
SL_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16);
SL_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8);
SL_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16);
SL_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8);
SL_MATCH_TYPE_AND_ENUM(tstring, DT_STRING);
SL_MATCH_TYPE_AND_ENUM(complex64, DT_COMPLEX64);
SL_MATCH_TYPE_AND_ENUM(complex128, DT_COMPLEX128);
SL_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64);
SL_MATCH_TYPE_AND_ENUM(uint64_t, DT_UINT64);
SL_MATCH_TYPE_AND_ENUM(bool, DT_BOOL);
SL_MATCH_TYPE_AND_ENUM(half, DT_HALF);
SL_MATCH_TYPE_AND_ENUM(bfloat16, DT_BFLOAT16);
SL_MATCH_TYPE_AND_ENUM(Variant, DT_VARIANT);
#undef SL_MATCH_TYPE_AND_ENUM

// Carries a C++ type through a generic lambda: [&](auto tag) { using T = typename decltype(tag)::type; }
template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with the C++ type T of `dt`; returns false when `dt` has no C++ type
// in the runtime. Used where one template handles every dtype (proto conversion, Cast), so
// it leaves out DT_VARIANT, whose elements are no numbers or strings.
template <typename Fn>
bool VisitDataType(DataType dt, Fn&& fn) {
  switch (dt) {
#define SL_VISIT_CASE(ENUM) \
  case ENUM:                \
    fn(TypeTag<typename EnumToDataType<ENUM>::Type>{}); \
    return true;
    SL_VISIT_CASE(DT_FLOAT)
    SL_VISIT_CASE(DT_DOUBLE)
    SL_VISIT_CASE(DT_INT32)
    SL_VISIT_CASE(DT_UINT32)
    SL_VISIT_CASE(DT_UINT16)
    SL_VISIT_CASE(DT_UINT8)
    SL_VISIT_CASE(DT_INT16)
    SL_VISIT_CASE(DT_INT8)
    SL_VISIT_CASE(DT_STRING)
    SL_VISIT_CASE(DT_COMPLEX64)
    SL_VISIT_CASE(DT_COMPLEX128)
    SL_VISIT_CASE(DT_INT64)
    SL_VISIT_CASE(DT_UINT64)
    SL_VISIT_CASE(DT_BOOL)
    SL_VISIT_CASE(DT_HALF)
    SL_VISIT_CASE(DT_BFLOAT16)
#undef SL_VISIT_CASE
    default:
      return false;
  }
}

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_TYPES_H_
