// What the ONNX fuzz targets do with one input: parse it as a ModelProto, import it, require
// that an import that succeeds yields a GraphDef the framework accepts (never silent garbage),
// and optionally run the graph on an embedded session under tight bounds, since many bad
// models only fail in kernels (integer division, window geometry, scales, huge shapes).
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     sluice::fuzz::FuzzOnnxModelBytes(data, size, /*run=*/true);
//     return 0;
//   }
#ifndef SLUICE_FUZZ_ONNX_FUZZ_H_
#define SLUICE_FUZZ_ONNX_FUZZ_H_

#include <cstddef>
#include <cstdint>

#include "onnx/onnx_pb.h"

namespace sluice {
namespace fuzz {

// Inputs larger than this are skipped: they only slow the fuzzer down.
inline constexpr size_t kMaxOnnxInputBytes = size_t{1} << 20;

// Aborts (a finding) only when Sluice misbehaves: an import that succeeds with a graph that
// does not validate. Errors from bad models are the expected outcome.
void FuzzOnnxModelBytes(const uint8_t* data, size_t size, bool run);
void FuzzOnnxModel(const onnx::ModelProto& model, bool run);

}  // namespace fuzz
}  // namespace sluice

#endif  // SLUICE_FUZZ_ONNX_FUZZ_H_
