// Bytes -> ONNX ModelProto -> the importer -> a GraphDef the framework accepts. Byte-level:
// exercises the loader and the checks before conversion.
#include <cstddef>
#include <cstdint>

#include "fuzz/onnx_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::FuzzOnnxModelBytes(data, size, /*run=*/false);
  return 0;
}
