// Raw bytes that have just become the elements of a DT_BOOL tensor (a TensorProto's
// tensor_content, an ONNX raw_data, bytes from the wire): a byte other than 0 or 1 is not a
// bool, and reading one as a bool is undefined behaviour, so every nonzero byte becomes 1
// (true), as numpy reads bool bytes.
//
//   std::memcpy(t.raw_data(), bytes, n);
//   if (t.dtype() == DT_BOOL) CanonicalizeBoolBytes(t.raw_data(), n);
#ifndef SLUICE_FRAMEWORK_BOOL_BYTES_H_
#define SLUICE_FRAMEWORK_BOOL_BYTES_H_

#include <cstddef>

namespace sluice {

inline void CanonicalizeBoolBytes(void* data, size_t size) {
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) bytes[i] = bytes[i] != 0;
}

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_BOOL_BYTES_H_
