// PNG decoding from memory through libpng, as TensorFlow's DecodePng reads PNGs: palettes and
// low bit depths expanded, then converted to the channels and sample depth asked for. Shared by
// the TensorFlow decode ops (tf_image_decode_ops.cc).
//
//   SL_RETURN_IF_ERROR(DecodePngStream(bytes, /*channels=*/0, /*depth=*/8, &sink, "DecodePng"));
#ifndef SLUICE_KERNELS_PNG_DECODE_H_
#define SLUICE_KERNELS_PNG_DECODE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kernels/pixel_sink.h"

namespace sluice {

// Decodes `data` into samples of `depth` bits (8, or 16 in the host's order) from `sink`
// (frames = 1). `channels` 0 keeps the image's own (1 to 4, palettes expanded, tRNS as alpha),
// 1 gray (ITU-R 601 weights, as TensorFlow's), 2 gray + alpha, 3 RGB, 4 RGBA (opaque when the image has no
// alpha); 16-bit samples are cut to their high byte for 8 and 8-bit ones scaled by 257 for 16.
// INVALID_ARGUMENT naming `op` for an undecodable stream, or the sink's error.
absl::Status DecodePngStream(absl::string_view data, int channels, int depth, PixelSink* sink, absl::string_view op);

}  // namespace sluice

#endif  // SLUICE_KERNELS_PNG_DECODE_H_
