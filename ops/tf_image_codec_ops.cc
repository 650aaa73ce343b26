// TensorFlow's image encoders and decoders, with TensorFlow's names, inputs, attrs and
// defaults, for clients that run TensorFlow ops one at a time (TensorFlow.js's Node backend
// encodes and decodes images with them). Kernels: kernels/tf_image_codec_ops.cc (encoders) and
// kernels/tf_image_decode_ops.cc (decoders).
//
// As in TensorFlow, the decoders tell formats by their magic bytes rather than by their names:
// DecodeJpeg, DecodePng and DecodeGif each read JPEG, PNG and GIF; DecodeBmp only BMP;
// DecodeAndCropJpeg only JPEG; DecodeImage all four.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// A scalar string out of an [height, width, channels] image.
absl::Status EncodedImageShape(InferenceContext* c) {
  const PartialShape& image = c->input(0);
  if (!image.unknown_rank() && image.rank() != 3) {
    return c->Error(absl::StrCat("image must be 3-dimensional [height, width, channels], got ", image.DebugString()));
  }
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ScalarContents(InferenceContext* c) {
  const PartialShape& contents = c->input(0);
  if (!contents.unknown_rank() && contents.rank() != 0) {
    return c->Error(absl::StrCat("contents must be a scalar, got ", contents.DebugString()));
  }
  return absl::OkStatus();
}

// [?, ?, channels] (channels unknown when 0) out of a scalar string.
absl::Status DecodedImageShape(InferenceContext* c) {
  SL_RETURN_IF_ERROR(ScalarContents(c));
  int64_t channels = 0;
  GetNodeAttr(c->attrs(), "channels", &channels).IgnoreError();
  if (channels < 0) return c->Error(absl::StrCat("channels must be non-negative, got ", channels));
  c->set_output(0, PartialShape(std::vector<int64_t>{-1, -1, channels == 0 ? -1 : channels}));
  return absl::OkStatus();
}

}  // namespace

// PNG of 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) channels of 8 or 16 bits; compression
// is zlib's level, -1 its default.
REGISTER_OP("EncodePng")
    .Input("image: T")
    .Output("contents: string")
    .Attr("compression: int = -1")
    .Attr("T: {uint8, uint16} = DT_UINT8")
    .SetShapeFn(EncodedImageShape);

// JPEG (JFIF) of 1 (grayscale) or 3 (RGB) channels; `format` '' takes the channels as they are.
// chroma_downsampling false keeps full-resolution chroma (4:4:4); xmp_metadata, when set, goes in
// an APP1 marker.
REGISTER_OP("EncodeJpeg")
    .Input("image: uint8")
    .Output("contents: string")
    .Attr("format: {'', 'grayscale', 'rgb'} = ''")
    .Attr("quality: int = 95")
    .Attr("progressive: bool = false")
    .Attr("optimize_size: bool = false")
    .Attr("chroma_downsampling: bool = true")
    .Attr("density_unit: {'in', 'cm'} = 'in'")
    .Attr("x_density: int = 300")
    .Attr("y_density: int = 300")
    .Attr("xmp_metadata: string = ''")
    .SetShapeFn(EncodedImageShape);

// [height, width, channels] of uint8 or uint16 out of a PNG stream: channels 0 keeps the
// image's own (1 to 4, palettes expanded), 1 is gray, 3 RGB, 4 RGBA (opaque when the image has
// no alpha). 16-bit samples are cut to their high byte for uint8; 8-bit ones scale by 257 (8-bit
// JPEG and GIF samples by 256, as TensorFlow scales them).
REGISTER_OP("DecodePng")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16} = DT_UINT8")
    .SetShapeFn(DecodedImageShape);

// [height, width, channels] of uint8 out of a JPEG stream. channels 0 keeps the stream's own
// (CMYK read as RGB), 1 gray, 3 RGB; ratio 1, 2, 4 or 8 scales the image down while decoding;
// fancy_upscaling smooths subsampled chroma; try_recover_truncated ends a cut stream where it
// stops (libjpeg fills the rest) instead of failing; acceptable_fraction is the share of rows
// that must decode when a read stops early; dct_method '' and INTEGER_FAST are libjpeg's fast
// integer DCT, INTEGER_ACCURATE its accurate one.
REGISTER_OP("DecodeJpeg")
    .Input("contents: string")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Attr("ratio: int = 1")
    .Attr("fancy_upscaling: bool = true")
    .Attr("try_recover_truncated: bool = false")
    .Attr("acceptable_fraction: float = 1.0")
    .Attr("dct_method: string = ''")
    .SetShapeFn(DecodedImageShape);

// DecodeJpeg of the window crop_window = [y, x, height, width] (in the ratio-scaled image's
// pixels), decoding only the rows and MCU columns it needs.
REGISTER_OP("DecodeAndCropJpeg")
    .Input("contents: string")
    .Input("crop_window: int32")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Attr("ratio: int = 1")
    .Attr("fancy_upscaling: bool = true")
    .Attr("try_recover_truncated: bool = false")
    .Attr("acceptable_fraction: float = 1.0")
    .Attr("dct_method: string = ''")
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(DecodedImageShape(c));
      const PartialShape& window = c->input(1);
      if (!window.unknown_rank() && (window.rank() != 1 || (window.dim(0) != -1 && window.dim(0) != 4))) {
        return c->Error(absl::StrCat("crop_window must be a vector of 4, got ", window.DebugString()));
      }
      const Tensor* crop = c->input_tensor(1);
      if (crop != nullptr && crop->dtype() == DT_INT32 && crop->NumElements() == 4) {
        const int32_t* v = crop->data<int32_t>();
        if (v[2] <= 0 || v[3] <= 0) {
          return c->Error(absl::StrCat("crop_window's height and width must be positive, got ", v[2], " and ", v[3]));
        }
        c->set_output(0, PartialShape(std::vector<int64_t>{v[2], v[3], c->output(0).dim(2)}));
      }
      return absl::OkStatus();
    });

// [height, width, channels] of a JPEG stream's header, as int32 or int64: channels 1 for gray,
// 3 for YCbCr or RGB, 4 for CMYK or YCCK.
REGISTER_OP("ExtractJpegShape")
    .Input("contents: string")
    .Output("image_shape: output_type")
    .Attr("output_type: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(ScalarContents(c));
      c->set_output(0, PartialShape(std::vector<int64_t>{3}));
      return absl::OkStatus();
    });

// [height, width, channels] of uint8 out of a BMP: uncompressed 24-bit (channels 3) or 32-bit
// (4), rows bottom-up or top-down; channels 0 keeps them, 3 drops alpha, 4 adds an opaque one.
// 8-bit BMPs decode as gray when their palette is the gray ramp (TensorFlow reads their
// indexes as gray whatever the palette), and are refused otherwise; channels 1 is refused.
REGISTER_OP("DecodeBmp")
    .Input("contents: string")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .SetShapeFn(DecodedImageShape);

// [frames, height, width, 3] of uint8 RGB out of a GIF, every frame drawn over the one before
// on a canvas as large as the largest frame (JPEG and PNG come back as one frame).
REGISTER_OP("DecodeGif")
    .Input("contents: string")
    .Output("image: uint8")
    .SetShapeFn([](InferenceContext* c) {
      SL_RETURN_IF_ERROR(ScalarContents(c));
      c->set_output(0, PartialShape(std::vector<int64_t>{-1, -1, -1, 3}));
      return absl::OkStatus();
    });

// Any of JPEG, PNG, GIF or BMP as [height, width, channels] of dtype, or [frames, height, width,
// 3] for a GIF when expand_animations (its first frame otherwise). uint16 scales 8-bit samples
// by 256 (PNG's by 257); float32 maps them to [0, 1].
REGISTER_OP("DecodeImage")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16, float} = DT_UINT8")
    .Attr("expand_animations: bool = true")
    .SetShapeFn([](InferenceContext* c) {
      bool expand = true;
      GetNodeAttr(c->attrs(), "expand_animations", &expand).IgnoreError();
      if (!expand) return DecodedImageShape(c);
      SL_RETURN_IF_ERROR(ScalarContents(c));
      return shape_fn::Unknown(c);  // 3-D, or 4-D for a GIF.
    });

}  // namespace sluice
