// TensorFlow's EncodePng and EncodeJpeg (an [height, width, channels] image to a scalar string
// holding the encoded bytes), through the system's libpng and libjpeg-turbo (the codecs
// ImageDecoder and the TensorFlow decoders read with: image_decoder_op.cc,
// tf_image_decode_ops.cc).
//
// The codecs' errors longjmp back to their setjmp: the functions that call setjmp hold only C
// structs and pointers, and everything with a destructor lives in the caller.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <png.h>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

struct ImageDims {
  int64_t height, width, channels;
};

// The image's dims, checked: rank 3, channels allowed by `ok_channels`, and every row's bytes
// and the row count within what the codecs' int and size_t fields hold.
absl::StatusOr<ImageDims> CheckImage(const char* op, const Tensor& image, int64_t sample_bytes,
                                     bool (*ok_channels)(int64_t), const char* channels_text) {
  if (image.dims() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": image must be 3-dimensional [height, width, channels], got ", image.shape().DebugString()));
  }
  const ImageDims d{image.dim_size(0), image.dim_size(1), image.dim_size(2)};
  if (!ok_channels(d.channels)) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": image must have ", channels_text, " channels, got ", image.shape().DebugString()));
  }
  int64_t row_bytes = 0;
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (!CheckedMul(d.width, d.channels * sample_bytes, &row_bytes) || row_bytes > kIntMax || d.height > kIntMax ||
      image.NumElements() >= kIntMax) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": image ", image.shape().DebugString(), " is too large to encode"));
  }
  if (d.height == 0 || d.width == 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": image ", image.shape().DebugString(), " has no pixels"));
  }
  return d;
}

absl::Status SetScalarString(OpKernelContext* ctx, std::string bytes) {
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({}), &out));
  out->data<tstring>()[0] = std::move(bytes);
  return absl::OkStatus();
}

// ---- PNG (libpng) ----

struct PngWriter {
  std::string* out;  // Owned by the caller.
  char message[256];
};

void PngWrite(png_structp png, png_bytep data, png_size_t n) {
  auto* w = static_cast<PngWriter*>(png_get_io_ptr(png));
  try {
    w->out->append(reinterpret_cast<const char*>(data), n);
  } catch (...) {  // No C++ exception may cross libpng's frames; its error path unwinds them.
    png_error(png, "out of memory for the encoded image");
  }
}

void PngFlush(png_structp) {}

void PngWriteErrorFn(png_structp png, png_const_charp message) {
  auto* w = static_cast<PngWriter*>(png_get_error_ptr(png));
  std::snprintf(w->message, sizeof(w->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWriteWarningFn(png_structp, png_const_charp) {}

// Rows of `depth`-bit samples (16-bit ones in the host's order), `channels` per pixel: gray,
// gray + alpha, RGB, RGBA. Returns false with writer->message set on an error.
bool WritePng(PngWriter* writer, const uint8_t* pixels, const ImageDims& d, int depth, int compression) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, writer, PngWriteErrorFn, PngWriteWarningFn);
  if (png == nullptr) {
    std::snprintf(writer->message, sizeof(writer->message), "cannot create the PNG writer");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    if (info == nullptr) std::snprintf(writer->message, sizeof(writer->message), "cannot create the PNG header");
    png_destroy_write_struct(&png, &info);
    return false;
  }
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                        PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, writer, PngWrite, PngFlush);
  if (compression >= 0) png_set_compression_level(png, compression);
  png_set_IHDR(png, info, static_cast<png_uint_32>(d.width), static_cast<png_uint_32>(d.height), depth,
               kColorTypes[d.channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (depth == 16) png_set_swap(png);  // PNG stores 16-bit samples big-endian; x86 holds them little.
  const size_t row_bytes = static_cast<size_t>(d.width * d.channels * (depth / 8));
  for (int64_t y = 0; y < d.height; ++y) png_write_row(png, const_cast<png_bytep>(pixels + y * row_bytes));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

bool PngChannels(int64_t c) { return c >= 1 && c <= 4; }

// EncodePng(image: uint8 or uint16 [h, w, c], c in 1..4; compression -1 (zlib's default) to 9).
template <typename T>
class EncodePngOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("compression", &compression_));
    if (compression_ < -1 || compression_ > 9) {
      return absl::InvalidArgumentError(absl::StrCat("EncodePng: compression should be in [-1,9], got ", compression_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& image = ctx->input(0);
    SL_ASSIGN_OR_RETURN(ImageDims d, CheckImage("EncodePng", image, sizeof(T), PngChannels, "1, 2, 3 or 4"));
    std::string bytes;
    PngWriter writer{&bytes, {}};
    if (!WritePng(&writer, static_cast<const uint8_t*>(image.raw_data()), d, 8 * sizeof(T),
                  static_cast<int>(compression_))) {
      return absl::InternalError(absl::StrCat("EncodePng: PNG encoding failed: ", writer.message));
    }
    return SetScalarString(ctx, std::move(bytes));
  }

 private:
  int64_t compression_ = -1;
};

// ---- JPEG (libjpeg) ----

struct JpegWriteError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegWriteErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegWriteError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

void JpegWriteSilence(j_common_ptr, int) {}

struct JpegSettings {
  int quality = 95;
  bool progressive = false, optimize_size = false, chroma_downsampling = true;
  uint8_t density_unit = 1;  // JFIF: 1 dots per inch, 2 per centimetre.
  uint16_t x_density = 300, y_density = 300;
  std::string xmp;  // The APP1 marker's payload: XMP's namespace, a NUL, the metadata.
};

// The encoded bytes in a buffer libjpeg allocates with malloc (the caller frees it, also after
// an error). Returns false with error->message set on an error.
bool WriteJpeg(JpegWriteError* error, const uint8_t* pixels, const ImageDims& d, const JpegSettings& s,
               unsigned char** buffer, unsigned long* size) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&error->mgr);
  error->mgr.error_exit = JpegWriteErrorExit;
  error->mgr.emit_message = JpegWriteSilence;
  if (setjmp(error->jump)) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, size);
  cinfo.image_width = static_cast<JDIMENSION>(d.width);
  cinfo.image_height = static_cast<JDIMENSION>(d.height);
  cinfo.input_components = static_cast<int>(d.channels);
  cinfo.in_color_space = d.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, s.quality, TRUE);
  if (s.progressive) jpeg_simple_progression(&cinfo);
  cinfo.optimize_coding = s.optimize_size ? TRUE : FALSE;
  if (!s.chroma_downsampling && d.channels == 3) {  // 4:4:4: luma sampled no finer than chroma.
    cinfo.comp_info[0].h_samp_factor = 1;
    cinfo.comp_info[0].v_samp_factor = 1;
  }
  cinfo.write_JFIF_header = TRUE;
  cinfo.density_unit = s.density_unit;
  cinfo.X_density = s.x_density;
  cinfo.Y_density = s.y_density;
  jpeg_start_compress(&cinfo, TRUE);
  if (!s.xmp.empty()) {
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(s.xmp.data()),
                      static_cast<unsigned int>(s.xmp.size()));
  }
  const size_t row_bytes = static_cast<size_t>(d.width * d.channels);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + cinfo.next_scanline * row_bytes);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

// EncodeJpeg(image: uint8 [h, w, c]): c is 1 (grayscale) or 3 (RGB), and must be what
// `format` names when it names one.
class EncodeJpegOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t quality = 95, x_density = 300, y_density = 300;
    std::string unit, xmp;
    SL_RETURN_IF_ERROR(ctx->GetAttr("format", &format_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("quality", &quality));
    SL_RETURN_IF_ERROR(ctx->GetAttr("progressive", &s_.progressive));
    SL_RETURN_IF_ERROR(ctx->GetAttr("optimize_size", &s_.optimize_size));
    SL_RETURN_IF_ERROR(ctx->GetAttr("chroma_downsampling", &s_.chroma_downsampling));
    SL_RETURN_IF_ERROR(ctx->GetAttr("density_unit", &unit));
    SL_RETURN_IF_ERROR(ctx->GetAttr("x_density", &x_density));
    SL_RETURN_IF_ERROR(ctx->GetAttr("y_density", &y_density));
    SL_RETURN_IF_ERROR(ctx->GetAttr("xmp_metadata", &xmp));
    if (format_ != "" && format_ != "grayscale" && format_ != "rgb") {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: format '", format_, "' is not '', grayscale or rgb"));
    }
    if (quality < 0 || quality > 100) {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: quality must be in [0,100], got ", quality));
    }
    s_.quality = static_cast<int>(quality);
    if (unit != "in" && unit != "cm") {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: density_unit must be 'in' or 'cm', got '", unit, "'"));
    }
    s_.density_unit = unit == "in" ? 1 : 2;
    if (x_density < 0 || x_density > 65535 || y_density < 0 || y_density > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: x_density and y_density must be in [0,65535], got ",
                                                     x_density, " and ", y_density));
    }
    s_.x_density = static_cast<uint16_t>(x_density);
    s_.y_density = static_cast<uint16_t>(y_density);
    if (!xmp.empty()) {
      static constexpr char kXmpNamespace[] = "http://ns.adobe.com/xap/1.0/";
      s_.xmp = std::string(kXmpNamespace, sizeof(kXmpNamespace));  // With its NUL.
      s_.xmp += xmp;
      constexpr size_t kMaxMarkerPayload = 65533;  // A marker's 16-bit length counts itself.
      if (s_.xmp.size() > kMaxMarkerPayload) {
        return absl::InvalidArgumentError(
            absl::StrCat("EncodeJpeg: xmp_metadata of ", xmp.size(), " bytes does not fit in a JPEG marker"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& image = ctx->input(0);
    SL_ASSIGN_OR_RETURN(ImageDims d,
                        CheckImage("EncodeJpeg", image, 1, [](int64_t c) { return c == 1 || c == 3; }, "1 or 3"));
    if ((format_ == "grayscale" && d.channels != 1) || (format_ == "rgb" && d.channels != 3)) {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: format ", format_, " needs ",
                                                     format_ == "rgb" ? 3 : 1, " channels, got ",
                                                     image.shape().DebugString()));
    }
    constexpr int64_t kMaxJpegSide = JPEG_MAX_DIMENSION;
    if (d.height > kMaxJpegSide || d.width > kMaxJpegSide) {
      return absl::InvalidArgumentError(absl::StrCat("EncodeJpeg: image ", image.shape().DebugString(),
                                                     " is larger than JPEG's ", kMaxJpegSide, " pixels a side"));
    }
    JpegWriteError error;
    unsigned char* buffer = nullptr;
    unsigned long size = 0;
    const bool ok = WriteJpeg(&error, image.data<uint8_t>(), d, s_, &buffer, &size);
    const std::unique_ptr<unsigned char, decltype(&std::free)> owned(buffer, &std::free);
    if (!ok) return absl::InternalError(absl::StrCat("EncodeJpeg: JPEG encoding failed: ", error.message));
    return SetScalarString(ctx, std::string(reinterpret_cast<const char*>(buffer), size));
  }

 private:
  std::string format_;
  JpegSettings s_;
};

REGISTER_KERNEL_BUILDER(Name("EncodePng").Device(DEVICE_CPU).TypeConstraint<uint8_t>("T"), EncodePngOp<uint8_t>);
REGISTER_KERNEL_BUILDER(Name("EncodePng").Device(DEVICE_CPU).TypeConstraint<uint16_t>("T"), EncodePngOp<uint16_t>);
REGISTER_KERNEL_BUILDER(Name("EncodeJpeg").Device(DEVICE_CPU), EncodeJpegOp);

}  // namespace
}  // namespace sluice
