// Bytes -> ONNX ModelProto -> GraphDef -> one bounded run on an embedded session: finds
// models that import and then crash or hang a kernel.
#include <cstddef>
#include <cstdint>

#include "fuzz/onnx_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::FuzzOnnxModelBytes(data, size, /*run=*/true);
  return 0;
}
