// TensorFlow's image encoders and DecodePng, with TensorFlow's names, inputs, attrs and
// defaults, for clients that run TensorFlow ops one at a time (TensorFlow.js's Node backend
// encodes and decodes images with them). Kernels: kernels/tf_image_codec_ops.cc.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
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
// no alpha). 16-bit samples are cut to their high byte for uint8; 8-bit ones scale by 257.
REGISTER_OP("DecodePng")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16} = DT_UINT8")
    .SetShapeFn([](InferenceContext* c) {
      const PartialShape& contents = c->input(0);
      if (!contents.unknown_rank() && contents.rank() != 0) {
        return c->Error(absl::StrCat("contents must be a scalar, got ", contents.DebugString()));
      }
      int64_t channels = 0;
      GetNodeAttr(c->attrs(), "channels", &channels).IgnoreError();
      c->set_output(0, PartialShape(std::vector<int64_t>{-1, -1, channels == 0 ? -1 : channels}));
      return absl::OkStatus();
    });

}  // namespace sluice
