#include "framework/types.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsAsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct TypeName {
  DataType dt;
  const char* name;
};

constexpr TypeName kTypeNames[] = {
    {DT_FLOAT, "float"},       {DT_DOUBLE, "double"},     {DT_INT32, "int32"},
    {DT_UINT8, "uint8"},       {DT_INT16, "int16"},       {DT_INT8, "int8"},
    {DT_STRING, "string"},     {DT_COMPLEX64, "complex64"}, {DT_INT64, "int64"},
    {DT_BOOL, "bool"},         {DT_QINT8, "qint8"},       {DT_QUINT8, "quint8"},
    {DT_QINT32, "qint32"},     {DT_BFLOAT16, "bfloat16"}, {DT_QINT16, "qint16"},
    {DT_QUINT16, "quint16"},   {DT_UINT16, "uint16"},     {DT_COMPLEX128, "complex128"},
    {DT_HALF, "half"},         {DT_RESOURCE, "resource"}, {DT_VARIANT, "variant"},
    {DT_UINT32, "uint32"},     {DT_UINT64, "uint64"},
    {DT_FLOAT8_E5M2, "float8_e5m2"},         {DT_FLOAT8_E4M3FN, "float8_e4m3fn"},
    {DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"}, {DT_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"}, {DT_INT4, "int4"}, {DT_UINT4, "uint4"},
};

// The shape of an 8-bit float format: a sign bit, exponent bits, then man_bits.
struct Float8Layout {
  int man_bits;
  int bias;
  uint8_t max_bits;   // The largest finite magnitude's bits.
  uint8_t nan_bits;   // Its NaN (the sign is or'ed in where the format has signed NaNs).
  bool has_inf;       // E5M2: exponent all ones, mantissa 0.
  bool unsigned_zero; // FNUZ: 0x80 is NaN, not -0.
};

Float8Layout LayoutOf(Float8Format f) {
  switch (f) {
    case Float8Format::kE4M3FN: return {3, 7, 0x7e, 0x7f, false, false};
    case Float8Format::kE4M3FNUZ: return {3, 8, 0x7f, 0x80, false, true};
    case Float8Format::kE5M2: return {2, 15, 0x7b, 0x7f, true, false};
    case Float8Format::kE5M2FNUZ: return {2, 16, 0x7f, 0x80, false, true};
  }
  return {3, 7, 0x7e, 0x7f, false, false};
}

}  // namespace

uint16_t half::FloatToBits(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) {  // Inf or NaN; keep NaN quiet.
    return static_cast<uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0));
  }
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // Overflow to inf.
  if (mag < 0x38800000u) {
    // Subnormal or zero in half precision: add a magic number so the FPU rounds for us.
    float r = BitsAsFloat(mag) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(r) - FloatBits(0.5f)));
  }
  // Normal: rebias the exponent and round to nearest even on the dropped 13 bits.
  uint32_t odd = (mag >> 13) & 1u;
  mag += 0xc8000fffu + odd;  // (15 - 127) << 23, plus rounding bias.
  return static_cast<uint16_t>(sign | (mag >> 13));
}

float half::BitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (man == 0) {
      out = sign;
    } else {  // Subnormal: value = man * 2^-24.
      float v = static_cast<float>(man) * 5.9604644775390625e-8f;
      out = sign | FloatBits(v);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (man << 13);
  } else {
    out = sign | ((exp + 112) << 23) | (man << 13);
  }
  return BitsAsFloat(out);
}

uint16_t bfloat16::FloatToBits(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16::BitsToFloat(uint16_t b) { return BitsAsFloat(static_cast<uint32_t>(b) << 16); }

uint8_t Float8FromFloat(Float8Format format, float f, bool saturate) {
  const Float8Layout l = LayoutOf(format);
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const uint8_t nan = l.unsigned_zero ? l.nan_bits : static_cast<uint8_t>(sign | l.nan_bits);
  // What a value beyond the largest finite one becomes.
  const uint8_t overflow = saturate ? static_cast<uint8_t>(sign | l.max_bits)
                                    : (l.has_inf ? static_cast<uint8_t>(sign | 0x7c) : nan);
  if (std::isnan(f)) return nan;
  if (std::isinf(f)) return overflow;
  const double a = std::fabs(static_cast<double>(f));
  const int min_exp = 1 - l.bias;  // Of the smallest normal number, 2^min_exp.
  int field, man;
  if (a < std::ldexp(1.0, min_exp)) {
    // Subnormal: a multiple of 2^(min_exp - man_bits); a count of 2^man_bits is the smallest
    // normal number, whose bits are that same count.
    const double k = std::nearbyint(std::ldexp(a, l.man_bits - min_exp));
    field = 0;
    man = static_cast<int>(k);
  } else {
    int e;
    const double fr = std::frexp(a, &e);  // a = fr * 2^e, fr in [0.5, 1).
    --e;                                  // a = (2 fr) * 2^e, 2 fr in [1, 2).
    double k = std::nearbyint(std::ldexp(2 * fr - 1, l.man_bits));
    if (k == std::ldexp(1.0, l.man_bits)) {
      k = 0;
      ++e;
    }
    field = e + l.bias;
    man = static_cast<int>(k);
  }
  const int bits = (field << l.man_bits) | man;
  if (bits > l.max_bits) return overflow;
  if (bits == 0 && l.unsigned_zero) return 0;
  return static_cast<uint8_t>(sign | bits);
}

float Float8ToFloat(Float8Format format, uint8_t bits) {
  const Float8Layout l = LayoutOf(format);
  const bool negative = (bits & 0x80) != 0;
  const int mag = bits & 0x7f;
  if (l.unsigned_zero ? bits == 0x80 : mag == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  if (l.has_inf && mag == 0x7c) return negative ? -std::numeric_limits<float>::infinity()
                                                : std::numeric_limits<float>::infinity();
  if (l.has_inf && mag > 0x7c) return std::numeric_limits<float>::quiet_NaN();
  const int field = mag >> l.man_bits;
  const int man = mag & ((1 << l.man_bits) - 1);
  const double v = field == 0 ? std::ldexp(man, 1 - l.bias - l.man_bits)
                              : std::ldexp((1 << l.man_bits) + man, field - l.bias - l.man_bits);
  return static_cast<float>(negative ? -v : v);
}

size_t DataTypeSize(DataType dt) {
  switch (dt) {
    case DT_FLOAT: case DT_INT32: case DT_UINT32: case DT_QINT32: return 4;
    case DT_DOUBLE: case DT_INT64: case DT_UINT64: case DT_COMPLEX64: return 8;
    case DT_COMPLEX128: return 16;
    case DT_INT16: case DT_UINT16: case DT_HALF: case DT_BFLOAT16: case DT_QINT16:
    case DT_QUINT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOL: case DT_QINT8: case DT_QUINT8: return 1;
    // One element per byte in memory, whatever the packing on a wire.
    case DT_FLOAT8_E5M2: case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E4M3FNUZ: case DT_FLOAT8_E5M2FNUZ:
    case DT_INT4: case DT_UINT4: return 1;
    default: return 0;
  }
}

std::string DataTypeString(DataType dt) {
  if (dt > 100 && dt < 200) return absl::StrCat(DataTypeString(static_cast<DataType>(dt - 100)), "_ref");
  for (const auto& t : kTypeNames) {
    if (t.dt == dt) return t.name;
  }
  return absl::StrCat("invalid(", static_cast<int>(dt), ")");
}

absl::StatusOr<DataType> DataTypeFromString(absl::string_view name) {
  for (const auto& t : kTypeNames) {
    if (name == t.name) return t.dt;
  }
  DataType dt;
  if (DataType_Parse(std::string(name), &dt)) return dt;
  return absl::InvalidArgumentError(absl::StrCat("unknown data type '", name, "'"));
}

bool DataTypeIsFloating(DataType dt) {
  return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF || dt == DT_BFLOAT16 ||
         dt == DT_FLOAT8_E5M2 || dt == DT_FLOAT8_E4M3FN || dt == DT_FLOAT8_E4M3FNUZ ||
         dt == DT_FLOAT8_E5M2FNUZ;
}

bool DataTypeIsInteger(DataType dt) {
  switch (dt) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
    case DT_INT4: case DT_UINT4: return true;
    default: return false;
  }
}

bool DataTypeIsComplex(DataType dt) { return dt == DT_COMPLEX64 || dt == DT_COMPLEX128; }

bool DataTypeIsSupported(DataType dt) {
  return VisitDataType(dt, [](auto) {});
}

std::string DataTypeVectorString(const DataTypeVector& types) {
  return absl::StrJoin(types, ", ", [](std::string* out, DataType dt) {
    absl::StrAppend(out, DataTypeString(dt));
  });
}

}  // namespace sluice
