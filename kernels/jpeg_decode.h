// JPEG decoding from memory through libjpeg-turbo, with the options of TensorFlow's DecodeJpeg
// (channels, ratio, fancy upscaling, DCT method, truncated streams, a crop window) and its
// reading of CMYK. Shared by the TensorFlow decode ops (tf_image_decode_ops.cc) and ONNX's
// ImageDecoder (image_decoder_op.cc).
//
//   JpegDecodeOptions options;
//   options.channels = 3;
//   SL_RETURN_IF_ERROR(DecodeJpegStream(bytes, options, &sink, "DecodeJpeg"));
//   SL_ASSIGN_OR_RETURN(JpegShape shape, ReadJpegShape(bytes, "ExtractJpegShape"));
#ifndef SLUICE_KERNELS_JPEG_DECODE_H_
#define SLUICE_KERNELS_JPEG_DECODE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/pixel_sink.h"

namespace sluice {

struct JpegCropWindow {
  int64_t y = 0, x = 0, height = 0, width = 0;  // In the (ratio-scaled) output's pixels.
};

struct JpegDecodeOptions {
  int channels = 0;  // 0: the stream's own (CMYK read as RGB), 1 gray, 3 RGB.
  int ratio = 1;     // Output scaled by 1/ratio: 1, 2, 4 or 8.
  bool fancy_upscaling = true;
  bool accurate_dct = false;  // libjpeg's ISLOW; false is IFAST, TensorFlow's default.
  // At the end of the data, pretend the stream ended there (libjpeg fills what is missing);
  // otherwise a stream that ends early is an error.
  bool try_recover_truncated = false;
  // Of the rows, the fraction that must decode before a partly read image is accepted (its
  // missing rows black). Only a source that suspends reads part of an image, and memory never
  // does, so as in TensorFlow this rarely decides anything.
  float acceptable_fraction = 1;
  // CMYK and YCCK streams converted to RGB as TensorFlow does (Adobe's inverted CMYK when the
  // stream has an Adobe marker); false leaves them to libjpeg, which cannot make RGB of them.
  bool convert_cmyk = true;
  const JpegCropWindow* crop = nullptr;  // Not owned; null decodes the whole image.
};

// Decodes `data` into 8-bit samples from `sink` (frames = 1). INVALID_ARGUMENT naming `op` for
// an undecodable stream or a crop window outside the image, RESOURCE_EXHAUSTED above
// kMaxDecodedPixels or libjpeg's memory limit, or the sink's error.
absl::Status DecodeJpegStream(absl::string_view data, const JpegDecodeOptions& options, PixelSink* sink,
                              absl::string_view op);

struct JpegShape {
  int64_t height = 0, width = 0, channels = 0;  // channels: 1 gray, 3 YCbCr or RGB, 4 CMYK.
};

// The image's size and libjpeg's default output channels, as ExtractJpegShape reports them.
absl::StatusOr<JpegShape> ReadJpegShape(absl::string_view data, absl::string_view op);

}  // namespace sluice

#endif  // SLUICE_KERNELS_JPEG_DECODE_H_
