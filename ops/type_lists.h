// The sets of element types that several op definitions allow, each spelled once and named for
// what it holds. Every constant is a whole "{...}" set for a type attr spec:
//
//   REGISTER_OP("Exp").Input("x: T").Output("y: T").Attr(absl::StrCat("T: ", kFloatTypes));
//   REGISTER_OP("Clip")...Attr(absl::StrCat("Tmin: list(", kNumericTypes, ") >= 0"));
//
// The order inside a set is the order of the OpDef's allowed values; an op whose set is its
// own spells it inline.
#ifndef SLUICE_OPS_TYPE_LISTS_H_
#define SLUICE_OPS_TYPE_LISTS_H_

#include "absl/strings/string_view.h"

namespace sluice {

// Floating point: ONNX's float ops (activations, pooling, normalization, signal).
inline constexpr absl::string_view kFloatTypes = "{half, bfloat16, float, double}";
// Floating point without bfloat16 (random generators, RNNs, detection, Det).
inline constexpr absl::string_view kIeeeFloatTypes = "{half, float, double}";
// Floating point and signed integers (Neg).
inline constexpr absl::string_view kSignedTypes =
    "{half, bfloat16, float, double, int8, int16, int32, int64}";
inline constexpr absl::string_view kUnsignedIntTypes = "{uint8, uint16, uint32, uint64}";
// Signed and unsigned integers of every width (the Bitwise ops).
inline constexpr absl::string_view kIntTypes =
    "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}";
// Floating point, then signed, then unsigned integers of every width.
inline constexpr absl::string_view kNumericTypes =
    "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64}";
inline constexpr absl::string_view kNumericOrBoolTypes =
    "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "bool}";
// What Where takes: every numeric type, bool and string.
inline constexpr absl::string_view kNumericBoolOrStringTypes =
    "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "bool, string}";
// What Cast and CastLike take: those, the 8-bit floats and the 4-bit integers.
inline constexpr absl::string_view kCastTypes =
    "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "bool, string, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, int4, uint4}";
// Floating point and 32- or 64-bit signed integers (MatMul, AddN, Pow's base).
inline constexpr absl::string_view kFloatOrWideSignedIntTypes =
    "{half, bfloat16, float, double, int32, int64}";
// Floating point and 32- or 64-bit integers (Gemm, BatchMatMulV2, PRelu).
inline constexpr absl::string_view kFloatOrWideIntTypes =
    "{half, bfloat16, float, double, int32, int64, uint32, uint64}";
// The 8-bit integers that quantized values are stored in.
inline constexpr absl::string_view kQuantizedTypes = "{int8, uint8}";
// What QuantizeLinear produces and DequantizeLinear reads (ONNX 21): 4-, 8- and 16-bit
// integers and the 8-bit floats.
inline constexpr absl::string_view kLinearQuantizedTypes =
    "{int8, uint8, int16, uint16, int4, uint4, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, "
    "float8_e5m2fnuz}";

}  // namespace sluice

#endif  // SLUICE_OPS_TYPE_LISTS_H_
