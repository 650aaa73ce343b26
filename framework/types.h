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
#include <type_traits>
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

// The 8-bit float formats of ONNX (IR 9) and TensorFlow. E4M3FN and E5M2 are the OCP ones
// (E5M2 has inf; E4M3FN has no inf and one NaN per sign, S.1111.111); the FNUZ formats
// (exponent bias one higher) have no inf and no negative zero, and 0x80 is their only NaN.
enum class Float8Format { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ };

// Rounds to nearest even. A finite value beyond the largest one becomes that largest value
// when `saturate` (ONNX Cast's default, which also takes inf there); otherwise it becomes inf
// (E5M2) or NaN (the others), and inf stays inf where the format has one (E5M2) or becomes
// NaN. NaN stays NaN.
uint8_t Float8FromFloat(Float8Format format, float f, bool saturate);
float Float8ToFloat(Float8Format format, uint8_t bits);

// One 8-bit float, stored as its bits; arithmetic goes through float.
template <Float8Format kFormat>
struct float8 {
  uint8_t bits = 0;
  float8() = default;
  explicit float8(float f) : bits(Float8FromFloat(kFormat, f, /*saturate=*/true)) {}
  operator float() const { return Float8ToFloat(kFormat, bits); }
  static float8 FromBits(uint8_t b) { float8 v; v.bits = b; return v; }
  static float8 FromFloat(float f, bool saturate) { return FromBits(Float8FromFloat(kFormat, f, saturate)); }
};
using float8_e4m3fn = float8<Float8Format::kE4M3FN>;
using float8_e4m3fnuz = float8<Float8Format::kE4M3FNUZ>;
using float8_e5m2 = float8<Float8Format::kE5M2>;
using float8_e5m2fnuz = float8<Float8Format::kE5M2FNUZ>;

// A 4-bit integer held in one byte (as TensorFlow holds int4; ONNX packs two per byte on the
// wire). Values from outside [kMin, kMax] saturate, as ONNX's Cast to INT4/UINT4 does.
template <typename Storage, int kMin, int kMax>
struct int4_base {
  Storage value = 0;
  int4_base() = default;
  explicit int4_base(int v) : value(static_cast<Storage>(v < kMin ? kMin : (v > kMax ? kMax : v))) {}
  operator int() const { return value; }
  static constexpr int min() { return kMin; }
  static constexpr int max() { return kMax; }
};
using int4 = int4_base<int8_t, -8, 7>;
using uint4 = int4_base<uint8_t, 0, 15>;

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

template <typename T>
inline constexpr bool kIsFloat8 = std::is_same_v<T, float8_e4m3fn> || std::is_same_v<T, float8_e4m3fnuz> ||
                                  std::is_same_v<T, float8_e5m2> || std::is_same_v<T, float8_e5m2fnuz>;
template <typename T>
inline constexpr bool kIsInt4 = std::is_same_v<T, int4> || std::is_same_v<T, uint4>;

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
SL_MATCH_TYPE_AND_ENUM(float8_e5m2, DT_FLOAT8_E5M2);
SL_MATCH_TYPE_AND_ENUM(float8_e4m3fn, DT_FLOAT8_E4M3FN);
SL_MATCH_TYPE_AND_ENUM(float8_e4m3fnuz, DT_FLOAT8_E4M3FNUZ);
SL_MATCH_TYPE_AND_ENUM(float8_e5m2fnuz, DT_FLOAT8_E5M2FNUZ);
SL_MATCH_TYPE_AND_ENUM(int4, DT_INT4);
SL_MATCH_TYPE_AND_ENUM(uint4, DT_UINT4);
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
    SL_VISIT_CASE(DT_FLOAT8_E5M2)
    SL_VISIT_CASE(DT_FLOAT8_E4M3FN)
    SL_VISIT_CASE(DT_FLOAT8_E4M3FNUZ)
    SL_VISIT_CASE(DT_FLOAT8_E5M2FNUZ)
    SL_VISIT_CASE(DT_INT4)
    SL_VISIT_CASE(DT_UINT4)
#undef SL_VISIT_CASE
    default:
      return false;
  }
}

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_TYPES_H_
