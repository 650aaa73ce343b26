// TensorFlow's image decoders (ops/tf_image_codec_ops.cc). As in TensorFlow, DecodeJpeg,
// DecodeAndCropJpeg, DecodePng, DecodeGif, DecodeBmp and DecodeImage are one kernel that tells
// the format by its magic bytes, and each op reads what TensorFlow's does: DecodeJpeg,
// DecodePng and DecodeGif any JPEG, PNG or GIF (a GIF of several frames only through DecodeGif,
// which returns every format as frames); DecodeBmp only BMP; DecodeAndCropJpeg only JPEG;
// DecodeImage all four, with dtype and expand_animations. ExtractJpegShape reads the header.
//
// The codecs are jpeg_decode.h, png_decode.h and gif_decode.h; BMP (uncompressed 24- and 32-bit,
// and 8-bit read as gray, as TensorFlow's decoder reads them) is parsed here.
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/gif_decode.h"
#include "kernels/jpeg_decode.h"
#include "kernels/kernel_registry.h"
#include "kernels/png_decode.h"

namespace sluice {
namespace {

enum class ImageFormat { kUnknown, kJpeg, kPng, kGif, kBmp };

ImageFormat Classify(absl::string_view data) {
  if (absl::StartsWith(data, "\xFF\xD8\xFF")) return ImageFormat::kJpeg;
  if (absl::StartsWith(data, "\x89PNG\r\n\x1A\n")) return ImageFormat::kPng;
  if (absl::StartsWith(data, "GIF8")) return ImageFormat::kGif;
  if (absl::StartsWith(data, "BM")) return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

// Where decoded samples go: straight into the output when the decoder's samples are of the
// output's dtype, else into scratch that Finish() converts. `frames_dim` gives the output a
// leading frames dimension; without one, an image of several frames is an error.
class OutputSink : public PixelSink {
 public:
  OutputSink(OpKernelContext* ctx, absl::string_view op, DataType samples, bool frames_dim)
      : ctx_(ctx), op_(op), samples_(samples), frames_dim_(frames_dim) {}

  uint8_t* Allocate(int64_t frames, int64_t height, int64_t width, int64_t channels) override {
    int64_t pixels = 0;
    if (!CheckedMul(frames, height, &pixels) || !CheckedMul(pixels, width, &pixels) || pixels > kMaxDecodedPixels) {
      status_ = absl::ResourceExhaustedError(absl::StrCat(op_, ": ", frames, " frames of ", width, " x ", height,
                                                          " pixels are above the limit of ", kMaxDecodedPixels));
      return nullptr;
    }
    if (!frames_dim_ && frames != 1) {
      status_ = absl::InvalidArgumentError(absl::StrCat(op_, ": Got ", frames,
                                                        " frames, but animated gifs can only be decoded by "
                                                        "tf.io.decode_gif or tf.io.decode_image"));
      return nullptr;
    }
    const TensorShape shape = frames_dim_ ? TensorShape({frames, height, width, channels})
                                          : TensorShape({height, width, channels});
    status_ = ctx_->allocate_output(0, shape, &output_);
    if (!status_.ok()) return nullptr;
    if (output_->dtype() == samples_) return static_cast<uint8_t*>(output_->raw_data());
    auto scratch = Tensor::Allocate(samples_, shape);
    if (!scratch.ok()) {
      status_ = scratch.status();
      return nullptr;
    }
    scratch_ = *std::move(scratch);
    return static_cast<uint8_t*>(scratch_.raw_data());
  }

  // Converts scratch samples to the output's dtype as TensorFlow scales them: 8-bit ones to
  // uint16 times 256 and to float times 1/255, 16-bit ones to float times 1/65535.
  void Finish() const {
    if (!scratch_.IsInitialized() || output_ == nullptr) return;
    const int64_t n = scratch_.NumElements();
    if (samples_ == DT_UINT8 && output_->dtype() == DT_UINT16) {
      const uint8_t* in = scratch_.data<uint8_t>();
      uint16_t* out = output_->data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint16_t>(in[i] * 256);
    } else if (output_->dtype() == DT_FLOAT) {
      float* out = output_->data<float>();
      if (samples_ == DT_UINT8) {
        const float scale = static_cast<float>(1.0 / 255);
        const uint8_t* in = scratch_.data<uint8_t>();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]) * scale;
      } else {
        const float scale = static_cast<float>(1.0 / 65535);
        const uint16_t* in = scratch_.data<uint16_t>();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]) * scale;
      }
    }
  }

 private:
  OpKernelContext* ctx_;
  absl::string_view op_;
  DataType samples_;
  bool frames_dim_;
  Tensor* output_ = nullptr;
  Tensor scratch_;
};

// ---- BMP ----

uint32_t Le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }
uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

constexpr int64_t kBmpHeadersBytes = 14 + 40;  // File header and BITMAPINFOHEADER.

// TensorFlow's BMP reading: uncompressed 24-bit BGR and 32-bit BGRA rows (bottom-up, or
// top-down when the height is negative), each padded to 4 bytes, the file exactly as long as
// its pixel offset plus the rows; 8-bit pixels are taken as gray levels. TensorFlow ignores
// the compression field and the palette; here BI_BITFIELDS must have the standard masks, and
// an 8-bit palette must be the gray ramp, else UNIMPLEMENTED rather than wrong pixels.
absl::Status DecodeBmpStream(absl::string_view data, int channels, PixelSink* sink, absl::string_view op) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const int64_t size = static_cast<int64_t>(data.size());
  if (size < kBmpHeadersBytes) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": Incomplete bmp content, requires at least ", kBmpHeadersBytes,
                                                   " bytes of headers, got ", size, " bytes"));
  }
  const int64_t pixel_offset = Le32(p + 10), info_bytes = Le32(p + 14);
  const int64_t width = static_cast<int32_t>(Le32(p + 18)), signed_height = static_cast<int32_t>(Le32(p + 22));
  const int bits = Le16(p + 28);
  const uint32_t compression = Le32(p + 30);
  if (info_bytes < 40) {
    return absl::UnimplementedError(absl::StrCat(op, ": BMP with a ", info_bytes, "-byte info header"));
  }
  if (bits != 8 && bits != 24 && bits != 32) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": Number of channels inherent in the image must be 1, 3 or 4, was ",
                                                   bits / 8, " (", bits, " bits per pixel)"));
  }
  const int own = bits / 8;
  if (width <= 0) return absl::InvalidArgumentError(absl::StrCat(op, ": Width must be positive"));
  if (signed_height == 0) return absl::InvalidArgumentError(absl::StrCat(op, ": Height must be nonzero"));
  if (pixel_offset < 14 + info_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": BMP pixels at offset ", pixel_offset, " overlap its ", 14 + info_bytes, " bytes of headers"));
  }
  const int64_t height = signed_height < 0 ? -signed_height : signed_height;  // |int32| fits in int64.
  if (width * height >= std::numeric_limits<int32_t>::max() / 8) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": Total possible pixel bytes must be less than 2^30"));
  }
  const int64_t row_bytes = (own * width + 3) / 4 * 4;
  const int64_t size_diff = size - pixel_offset - row_bytes * height;  // Each term is below 2^33.
  if (size_diff != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": Input size should match (header_size + row_size * abs_height) but they differ by ", size_diff));
  }
  if (compression == 3 && bits == 32 && pixel_offset >= kBmpHeadersBytes + 12) {
    // BI_BITFIELDS: red, green and blue masks after the 40-byte header (or inside a longer one).
    if (Le32(p + 54) != 0x00FF0000 || Le32(p + 58) != 0x0000FF00 || Le32(p + 62) != 0x000000FF) {
      return absl::UnimplementedError(absl::StrCat(op, ": 32-bit BMP with color masks other than BGRA"));
    }
  } else if (compression != 0) {
    return absl::UnimplementedError(
        absl::StrCat(op, ": BMP compression ", compression, " (only uncompressed BMPs are supported)"));
  }
  if (bits == 8) {
    // The palette sits between the headers and the pixels; count 0 means all 256 entries.
    const int64_t declared = Le32(p + 46) == 0 ? 256 : Le32(p + 46);
    const int64_t entries = std::min<int64_t>(declared, (pixel_offset - 14 - info_bytes) / 4);
    const uint8_t* palette = p + 14 + info_bytes;
    for (int64_t i = 0; i < entries; ++i) {
      const uint8_t* bgr = palette + 4 * i;
      if (bgr[0] != i || bgr[1] != i || bgr[2] != i) {
        return absl::UnimplementedError(absl::StrCat(
            op, ": 8-bit BMP with a color palette (TensorFlow would return its indexes as gray; only a gray "
                "palette is decoded)"));
      }
    }
  }
  const int want = channels == 0 ? own : channels;
  uint8_t* out = sink->Allocate(1, height, width, want);
  if (out == nullptr) return sink->status();
  const bool top_down = signed_height < 0;
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* src = p + pixel_offset + row_bytes * (top_down ? y : height - 1 - y);
    uint8_t* dst = out + y * width * want;
    for (int64_t x = 0; x < width; ++x, src += own, dst += want) {
      if (own == 1) {
        dst[0] = src[0];
        if (want >= 3) dst[1] = dst[2] = src[0];
      } else {  // BGR(A) to RGB(A).
        dst[0] = src[2];
        dst[1] = src[1];
        dst[2] = src[0];
      }
      if (want == 4) dst[3] = own == 4 ? src[3] : 0xFF;
    }
  }
  return absl::OkStatus();
}

// ---- The decode ops ----

enum class DecodeOp { kJpeg, kAndCropJpeg, kPng, kGif, kBmp, kImage };

class DecodeImageOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    op_name_ = ctx->def().op();
    if (op_name_ == "DecodeJpeg") {
      op_ = DecodeOp::kJpeg;
    } else if (op_name_ == "DecodeAndCropJpeg") {
      op_ = DecodeOp::kAndCropJpeg;
    } else if (op_name_ == "DecodePng") {
      op_ = DecodeOp::kPng;
    } else if (op_name_ == "DecodeGif") {
      op_ = DecodeOp::kGif;
    } else if (op_name_ == "DecodeBmp") {
      op_ = DecodeOp::kBmp;
    } else if (op_name_ == "DecodeImage") {
      op_ = DecodeOp::kImage;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("image decoder kernel built for op ", op_name_));
    }
    if (op_ == DecodeOp::kJpeg || op_ == DecodeOp::kAndCropJpeg) {
      int64_t ratio = 1;
      std::string dct;
      SL_RETURN_IF_ERROR(ctx->GetAttr("ratio", &ratio));
      SL_RETURN_IF_ERROR(ctx->GetAttr("fancy_upscaling", &jpeg_.fancy_upscaling));
      SL_RETURN_IF_ERROR(ctx->GetAttr("try_recover_truncated", &jpeg_.try_recover_truncated));
      SL_RETURN_IF_ERROR(ctx->GetAttr("acceptable_fraction", &jpeg_.acceptable_fraction));
      SL_RETURN_IF_ERROR(ctx->GetAttr("dct_method", &dct));
      if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
        return absl::InvalidArgumentError(absl::StrCat(op_name_, ": ratio must be 1, 2, 4, or 8, got ", ratio));
      }
      jpeg_.ratio = static_cast<int>(ratio);
      if (dct != "" && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE") {
        return absl::InvalidArgumentError(
            absl::StrCat(op_name_, ": dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}, got '", dct,
                         "'"));
      }
      jpeg_.accurate_dct = dct == "INTEGER_ACCURATE";  // '' is TensorFlow's INTEGER_FAST.
    }
    if (op_ == DecodeOp::kPng || op_ == DecodeOp::kImage) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype_));
      if (dtype_ != DT_UINT8 && dtype_ != DT_UINT16 && (op_ == DecodeOp::kPng || dtype_ != DT_FLOAT)) {
        return absl::InvalidArgumentError(absl::StrCat(op_name_, ": dtype must be uint8, uint16",
                                                       op_ == DecodeOp::kImage ? " or float" : "", ", got ",
                                                       DataTypeString(dtype_)));
      }
    }
    if (op_ == DecodeOp::kImage) SL_RETURN_IF_ERROR(ctx->GetAttr("expand_animations", &expand_animations_));
    if (op_ == DecodeOp::kGif) {
      channels_ = 3;  // DecodeGif has no channels attr: RGB, whatever the format.
    } else {
      int64_t channels = 0;
      SL_RETURN_IF_ERROR(ctx->GetAttr("channels", &channels));
      if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
        return absl::InvalidArgumentError(absl::StrCat(op_name_, ": channels must be 0, 1, 3, or 4, got ", channels));
      }
      channels_ = static_cast<int>(channels);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& contents = ctx->input(0);
    if (contents.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name_, ": contents must be scalar, got shape ", contents.shape().DebugString()));
    }
    const tstring& bytes = contents.data<tstring>()[0];
    const absl::string_view data(bytes.data(), bytes.size());
    if (data.empty()) return absl::InvalidArgumentError(absl::StrCat(op_name_, ": Input is empty."));
    if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name_, ": Input contents are too large for int: ", data.size()));
    }
    switch (Classify(data)) {
      case ImageFormat::kJpeg:
        return DecodeJpeg(ctx, data);
      case ImageFormat::kPng:
        return DecodePng(ctx, data);
      case ImageFormat::kGif:
        return DecodeGif(ctx, data);
      case ImageFormat::kBmp:
        return DecodeBmp(ctx, data);
      case ImageFormat::kUnknown:
        break;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(op_name_, ": Unknown image file format. One of JPEG, PNG, GIF, BMP required."));
  }

 private:
  // DecodeGif returns every format as frames; DecodeImage GIFs when expanding animations.
  bool FramesDim(ImageFormat format) const {
    return op_ == DecodeOp::kGif || (op_ == DecodeOp::kImage && format == ImageFormat::kGif && expand_animations_);
  }

  absl::Status OnlyJpeg(const char* format) const {
    return absl::InvalidArgumentError(
        absl::StrCat(op_name_, ": DecodeAndCropJpeg operation can run on JPEG only, but detected ", format, "."));
  }

  absl::Status DecodeJpeg(OpKernelContext* ctx, absl::string_view data) const {
    if (channels_ == 4) return absl::InvalidArgumentError(absl::StrCat(op_name_, ": JPEG does not support 4 channels"));
    if (op_ == DecodeOp::kBmp) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name_, ": Trying to decode JPEG format using DecodeBmp op. Use `decode_jpeg` or `decode_image` instead."));
    }
    JpegDecodeOptions options = jpeg_;
    options.channels = channels_;
    JpegCropWindow crop;
    if (op_ == DecodeOp::kAndCropJpeg) {
      const Tensor& window = ctx->input(1);
      if (window.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(op_name_, ": crop_window must be 1-D, got shape ", window.shape().DebugString()));
      }
      if (window.dim_size(0) != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat(op_name_, ": crop_size must have four elements ", window.shape().DebugString()));
      }
      const int32_t* w = window.data<int32_t>();
      crop = JpegCropWindow{w[0], w[1], w[2], w[3]};
      options.crop = &crop;
    }
    OutputSink sink(ctx, op_name_, DT_UINT8, FramesDim(ImageFormat::kJpeg));
    SL_RETURN_IF_ERROR(DecodeJpegStream(data, options, &sink, op_name_));
    sink.Finish();
    return absl::OkStatus();
  }

  absl::Status DecodePng(OpKernelContext* ctx, absl::string_view data) const {
    if (op_ == DecodeOp::kBmp) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name_, ": Trying to decode PNG format using DecodeBmp op. Use `decode_png` or `decode_image` instead."));
    }
    if (op_ == DecodeOp::kAndCropJpeg) return OnlyJpeg("PNG");
    const bool wide = dtype_ != DT_UINT8;  // uint16 and float outputs decode 16-bit samples.
    OutputSink sink(ctx, op_name_, wide ? DT_UINT16 : DT_UINT8, FramesDim(ImageFormat::kPng));
    SL_RETURN_IF_ERROR(DecodePngStream(data, channels_, wide ? 16 : 8, &sink, op_name_));
    sink.Finish();
    return absl::OkStatus();
  }

  absl::Status DecodeGif(OpKernelContext* ctx, absl::string_view data) const {
    if (channels_ != 0 && channels_ != 3) {
      return absl::InvalidArgumentError(absl::StrCat(op_name_, ": channels must be 0 or 3 for GIF, got ", channels_));
    }
    if (op_ == DecodeOp::kBmp) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name_, ": Trying to decode GIF format using DecodeBmp op. Use `decode_gif` or `decode_image` instead."));
    }
    if (op_ == DecodeOp::kAndCropJpeg) return OnlyJpeg("GIF");
    // DecodeImage without expand_animations shows the first frame; the others are 3-D and
    // refuse several frames.
    const bool all_frames = !(op_ == DecodeOp::kImage && !expand_animations_);
    OutputSink sink(ctx, op_name_, DT_UINT8, FramesDim(ImageFormat::kGif));
    SL_RETURN_IF_ERROR(DecodeGifStream(data, all_frames, &sink, op_name_));
    sink.Finish();
    return absl::OkStatus();
  }

  absl::Status DecodeBmp(OpKernelContext* ctx, absl::string_view data) const {
    if (channels_ == 1) {
      return absl::InvalidArgumentError(absl::StrCat(op_name_, ": `channels` must be 0, 3 or 4 for BMP, but got 1"));
    }
    if (op_ == DecodeOp::kAndCropJpeg) return OnlyJpeg("BMP");
    if (op_ != DecodeOp::kBmp && op_ != DecodeOp::kImage) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name_, ": Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` "
                                 "instead. Op used: ",
                       op_name_));
    }
    OutputSink sink(ctx, op_name_, DT_UINT8, FramesDim(ImageFormat::kBmp));
    SL_RETURN_IF_ERROR(DecodeBmpStream(data, channels_, &sink, op_name_));
    sink.Finish();
    return absl::OkStatus();
  }

  std::string op_name_;
  DecodeOp op_ = DecodeOp::kImage;
  int channels_ = 0;
  DataType dtype_ = DT_UINT8;  // Of the output; DecodePng's and DecodeImage's attr.
  bool expand_animations_ = true;
  JpegDecodeOptions jpeg_;  // DecodeJpeg's attrs; TensorFlow's defaults for the other ops.
};

// ExtractJpegShape(contents) to [height, width, channels] of int32 or int64.
template <typename T>
class ExtractJpegShapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& contents = ctx->input(0);
    if (contents.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExtractJpegShape: contents must be scalar, got shape ", contents.shape().DebugString()));
    }
    const tstring& bytes = contents.data<tstring>()[0];
    SL_ASSIGN_OR_RETURN(JpegShape shape, ReadJpegShape(absl::string_view(bytes.data(), bytes.size()), "ExtractJpegShape"));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({3}), &out));
    T* v = out->data<T>();
    v[0] = static_cast<T>(shape.height);
    v[1] = static_cast<T>(shape.width);
    v[2] = static_cast<T>(shape.channels);
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("DecodeJpeg").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeAndCropJpeg").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodePng").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeGif").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeBmp").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeImage").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("ExtractJpegShape").Device(DEVICE_CPU).TypeConstraint<int32_t>("output_type"),
                        ExtractJpegShapeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("ExtractJpegShape").Device(DEVICE_CPU).TypeConstraint<int64_t>("output_type"),
                        ExtractJpegShapeOp<int64_t>);

}  // namespace
}  // namespace sluice
