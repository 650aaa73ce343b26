// CRC-32C (Castagnoli), as TFRecord files and TensorFlow's checkpoints frame their records.
//
//   uint32_t crc = Crc32c(bytes);
//   uint32_t stored = MaskCrc32c(crc);          // what a TFRecord holds
//   crc = Crc32cExtend(crc, more_bytes);         // CRC of bytes + more_bytes
#ifndef SLUICE_FRAMEWORK_CRC32C_H_
#define SLUICE_FRAMEWORK_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace sluice {

// The CRC-32C of `data` following data whose CRC is `crc` (0 for none).
uint32_t Crc32cExtend(uint32_t crc, absl::string_view data);
inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data); }
// The table-driven path Crc32cExtend takes on a CPU without SSE 4.2 (tests compare the two).
uint32_t Crc32cExtendPortable(uint32_t crc, absl::string_view data);

// TFRecord's masked form: a CRC of data that itself holds CRCs is unlikely to match by chance.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_CRC32C_H_
