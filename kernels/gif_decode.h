// GIF decoding from memory through giflib, every frame composited onto a canvas as TensorFlow's
// gif_io.cc does: the canvas is as large as the largest frame, a frame is drawn over the one
// before it (disposal methods are ignored), its transparent pixels keep what is under them
// (black under the first frame), and pixels outside a frame's rectangle keep the frame before
// (black before the first). Shared by the TensorFlow decode ops (tf_image_decode_ops.cc).
//
//   SL_RETURN_IF_ERROR(DecodeGifStream(bytes, /*all_frames=*/true, &sink, "DecodeGif"));
#ifndef SLUICE_KERNELS_GIF_DECODE_H_
#define SLUICE_KERNELS_GIF_DECODE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kernels/pixel_sink.h"

namespace sluice {

// Decodes `data` into 8-bit RGB from `sink`: frames x height x width x 3, or only the first
// frame (on the canvas that every frame sizes) when `all_frames` is false. INVALID_ARGUMENT
// naming `op` for an undecodable stream (also a pixel outside its color table), RESOURCE_
// EXHAUSTED above kMaxDecodedPixels, or the sink's error.
absl::Status DecodeGifStream(absl::string_view data, bool all_frames, PixelSink* sink, absl::string_view op);

}  // namespace sluice

#endif  // SLUICE_KERNELS_GIF_DECODE_H_
