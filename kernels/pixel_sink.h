// Where an image decoder (jpeg_decode.h, png_decode.h, gif_decode.h) puts its pixels. The
// decoder reads the stream's header, asks the sink once for a buffer of the decoded size and
// fills it; the kernel decides where that buffer lives (its output, or scratch it converts
// from) and how large an image it accepts.
//
//   class OutputSink : public PixelSink {
//     uint8_t* Allocate(int64_t frames, int64_t height, int64_t width, int64_t channels) override;
//   };
//   OutputSink sink(ctx);
//   SL_RETURN_IF_ERROR(DecodeJpegStream(bytes, options, &sink, "DecodeJpeg"));
#ifndef SLUICE_KERNELS_PIXEL_SINK_H_
#define SLUICE_KERNELS_PIXEL_SINK_H_

#include <cstdint>

#include "absl/status/status.h"

namespace sluice {

// Decoded images larger than this many pixels (all frames together) are refused before any
// pixel buffer is allocated: a few bytes of header can declare billions of them.
inline constexpr int64_t kMaxDecodedPixels = int64_t{1} << 28;

class PixelSink {
 public:
  virtual ~PixelSink() = default;

  // The first byte of frames x height x width x channels samples, rows packed, of the size the
  // decoder documents (8-bit, or 16-bit in the host's order), owned by the sink. Null when it
  // cannot, with status() saying why; the decoder then returns that status. Decoders call it
  // at most once, from frames whose codec errors longjmp: it must return (or fail), not throw.
  virtual uint8_t* Allocate(int64_t frames, int64_t height, int64_t width, int64_t channels) = 0;

  const absl::Status& status() const { return status_; }

 protected:
  absl::Status status_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_PIXEL_SINK_H_
