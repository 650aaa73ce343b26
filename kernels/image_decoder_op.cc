// ImageDecoder (ONNX 20): a 1-D uint8 tensor holding an encoded image (JPEG, PNG, BMP, TIFF,
// WebP, PNM or JPEG 2000, told apart by their magic bytes) to [H, W, 3] RGB or BGR, or
// [H, W, 1] grayscale, as PIL's Image.open(...).convert(mode) gives them (ONNX's reference
// decodes with PIL). The codecs are Debian's libjpeg-turbo (through jpeg_decode.h, which the
// TensorFlow decoders share), libpng, libtiff, libwebp and OpenJPEG; BMP and PNM are parsed
// here. Every codec decodes to 8-bit RGB first.
//
// The libpng errors longjmp back to their setjmp: the functions that call setjmp hold only C
// structs and pointers, and everything with a destructor lives in the caller.
#include <algorithm>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <openjpeg-2.5/openjpeg.h>
#include <png.h>
#include <tiffio.h>
#include <webp/decode.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "framework/checked_size.h"
#include "kernels/jpeg_decode.h"
#include "kernels/kernel_registry.h"
#include "kernels/pixel_sink.h"

namespace sluice {
namespace {

// Decoded images larger than this are refused (RESOURCE_EXHAUSTED) before any pixel buffer
// is allocated: a few bytes of header can declare billions of pixels. PIL refuses above about
// 179 million pixels (twice its MAX_IMAGE_PIXELS); this allows some more.
constexpr int64_t kMaxPixels = kMaxDecodedPixels;

// 8-bit interleaved RGB, in a tensor so that its size is charged to the step's memory budget.
struct RgbImage {
  int64_t height = 0, width = 0;
  Tensor buffer;
  uint8_t* rgb = nullptr;  // buffer's data.
  int64_t bytes = 0;
};

// Checks the declared size and sizes the buffer.
absl::Status SizeImage(const char* format, int64_t height, int64_t width, RgbImage* image) {
  int64_t pixels = 0, bytes = 0;
  if (height <= 0 || width <= 0 || !CheckedMul(height, width, &pixels) || !CheckedMul(pixels, int64_t{3}, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("ImageDecoder: ", format, " declares ", width, " x ", height,
                                                   " pixels"));
  }
  if (pixels > kMaxPixels) {
    return absl::ResourceExhaustedError(absl::StrCat("ImageDecoder: ", format, " image of ", width, " x ", height,
                                                     " pixels is above the limit of ", kMaxPixels));
  }
  SL_ASSIGN_OR_RETURN(image->buffer, Tensor::Allocate(DT_UINT8, TensorShape({bytes})), "ImageDecoder ", format);
  image->height = height;
  image->width = width;
  image->rgb = image->buffer.data<uint8_t>();
  image->bytes = bytes;
  std::memset(image->rgb, 0, bytes);  // Codecs that stop early leave zeros, not old memory.
  return absl::OkStatus();
}

// ---- JPEG (jpeg_decode.h) ----

// Sizes `image` for the decoder; JPEG is decoded straight into its RGB buffer.
class RgbImageSink : public PixelSink {
 public:
  RgbImageSink(const char* format, RgbImage* image) : format_(format), image_(image) {}
  uint8_t* Allocate(int64_t frames, int64_t height, int64_t width, int64_t channels) override {
    status_ = frames == 1 && channels == 3 ? SizeImage(format_, height, width, image_)
                                          : absl::InternalError("ImageDecoder: decoder output is not one RGB image");
    return status_.ok() ? image_->rgb : nullptr;
  }

 private:
  const char* format_;
  RgbImage* image_;
};

absl::Status DecodeJpeg(absl::string_view data, RgbImage* image) {
  // As PIL decodes: libjpeg's accurate integer DCT; a stream cut short padded by libjpeg (PIL
  // fails on it instead; a warning here); CMYK refused (libjpeg makes no RGB of it).
  JpegDecodeOptions options;
  options.channels = 3;
  options.accurate_dct = true;
  options.try_recover_truncated = true;
  options.convert_cmyk = false;
  RgbImageSink sink("JPEG", image);
  return DecodeJpegStream(data, options, &sink, "ImageDecoder");
}

// ---- PNG (libpng) ----

struct PngReader {
  const uint8_t* data;
  size_t size, offset;
  char message[256];
  std::vector<png_bytep>* rows;  // Owned by the caller.
};

void PngRead(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > r->size - r->offset) png_error(png, "truncated stream");
  std::memcpy(out, r->data + r->offset, n);
  r->offset += n;
}

void PngErrorFn(png_structp png, png_const_charp message) {
  auto* r = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof(r->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWarningFn(png_structp, png_const_charp) {}

bool PngDecode(PngReader* reader, RgbImage* image, absl::Status* size_status) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, PngErrorFn, PngWarningFn);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, reader, PngRead);
  png_read_info(png, info);
  // As PIL's convert("RGB"): palettes and low bit depths expanded, 16 bits cut to 8, gray
  // copied to every channel, alpha dropped (not composited).
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *size_status = SizeImage("PNG", png_get_image_height(png, info), png_get_image_width(png, info), image);
  if (!size_status->ok() || png_get_rowbytes(png, info) != static_cast<size_t>(image->width) * 3) {
    if (size_status->ok()) *size_status = absl::InternalError("ImageDecoder: PNG rows are not 8-bit RGB");
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
  }
  reader->rows->resize(image->height);
  for (int64_t y = 0; y < image->height; ++y) (*reader->rows)[y] = image->rgb + y * image->width * 3;
  png_read_image(png, reader->rows->data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

absl::Status DecodePng(absl::string_view data, RgbImage* image) {
  std::vector<png_bytep> rows;
  PngReader reader{reinterpret_cast<const uint8_t*>(data.data()), data.size(), 0, "out of memory", &rows};
  absl::Status size_status;
  if (!PngDecode(&reader, image, &size_status)) {
    return absl::InvalidArgumentError(absl::StrCat("ImageDecoder: bad PNG: ", reader.message));
  }
  return size_status;
}

// ---- TIFF (libtiff, from memory) ----

struct TiffMemory {
  const uint8_t* data;
  uint64_t size, offset;
  std::string error;
};

tmsize_t TiffRead(thandle_t h, void* out, tmsize_t n) {
  auto* m = static_cast<TiffMemory*>(h);
  if (n < 0) return -1;
  const uint64_t left = m->offset < m->size ? m->size - m->offset : 0;
  const uint64_t take = std::min<uint64_t>(left, static_cast<uint64_t>(n));
  std::memcpy(out, m->data + m->offset, take);
  m->offset += take;
  return static_cast<tmsize_t>(take);
}
tmsize_t TiffWrite(thandle_t, void*, tmsize_t) { return -1; }
toff_t TiffSeek(thandle_t h, toff_t off, int whence) {
  auto* m = static_cast<TiffMemory*>(h);
  uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->offset : m->size;
  uint64_t to = 0;
  if (__builtin_add_overflow(base, off, &to)) return static_cast<toff_t>(-1);
  m->offset = to;  // Reads past the end return nothing.
  return to;
}
int TiffClose(thandle_t) { return 0; }
toff_t TiffSize(thandle_t h) { return static_cast<TiffMemory*>(h)->size; }
int TiffMap(thandle_t, void**, toff_t*) { return 0; }
void TiffUnmap(thandle_t, void*, toff_t) {}
int TiffError(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  auto* m = static_cast<TiffMemory*>(user);
  if (m->error.empty()) m->error = absl::StrCat(module == nullptr ? "" : module, ": ", buf);
  return 1;
}
int TiffWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

absl::Status DecodeTiff(absl::string_view data, RgbImage* image) {
  TiffMemory m{reinterpret_cast<const uint8_t*>(data.data()), data.size(), 0, ""};
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(opts, TiffError, &m);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, TiffWarning, &m);
  TIFF* tif = TIFFClientOpenExt("memory", "rm", &m, TiffRead, TiffWrite, TiffSeek, TiffClose, TiffSize, TiffMap,
                                TiffUnmap, opts);
  TIFFOpenOptionsFree(opts);
  if (tif == nullptr) return absl::InvalidArgumentError(absl::StrCat("ImageDecoder: bad TIFF: ", m.error));
  uint32_t width = 0, height = 0;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
  absl::Status status = SizeImage("TIFF", height, width, image);
  if (status.ok()) {
    auto raster_tensor = Tensor::Allocate(DT_UINT32, TensorShape({static_cast<int64_t>(width) * height}));
    uint32_t* raster = raster_tensor.ok() ? raster_tensor->data<uint32_t>() : nullptr;
    if (!raster_tensor.ok()) {
      status = raster_tensor.status();
    } else if (!TIFFReadRGBAImageOriented(tif, width, height, raster, ORIENTATION_TOPLEFT, 0)) {
      status = absl::InvalidArgumentError(absl::StrCat("ImageDecoder: bad TIFF: ", m.error));
    } else {
      for (int64_t i = 0; i < image->height * image->width; ++i) {
        image->rgb[3 * i] = TIFFGetR(raster[i]);
        image->rgb[3 * i + 1] = TIFFGetG(raster[i]);
        image->rgb[3 * i + 2] = TIFFGetB(raster[i]);
      }
    }
  }
  TIFFClose(tif);
  return status;
}

// ---- WebP (libwebp) ----

absl::Status DecodeWebp(absl::string_view data, RgbImage* image) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  int width = 0, height = 0;
  if (!WebPGetInfo(p, data.size(), &width, &height)) return absl::InvalidArgumentError("ImageDecoder: bad WebP header");
  SL_RETURN_IF_ERROR(SizeImage("WebP", height, width, image));
  if (WebPDecodeRGBInto(p, data.size(), image->rgb, image->bytes, width * 3) == nullptr) {
    return absl::InvalidArgumentError("ImageDecoder: bad WebP stream");
  }
  return absl::OkStatus();
}

// ---- JPEG 2000 (OpenJPEG) ----

struct OpjMemory {
  const uint8_t* data;
  uint64_t size, offset;
};

OPJ_SIZE_T OpjRead(void* out, OPJ_SIZE_T n, void* user) {
  auto* m = static_cast<OpjMemory*>(user);
  if (m->offset >= m->size) return static_cast<OPJ_SIZE_T>(-1);
  const uint64_t take = std::min<uint64_t>(m->size - m->offset, n);
  std::memcpy(out, m->data + m->offset, take);
  m->offset += take;
  return take;
}
OPJ_OFF_T OpjSkip(OPJ_OFF_T n, void* user) {
  auto* m = static_cast<OpjMemory*>(user);
  if (n < 0 || static_cast<uint64_t>(n) > m->size - std::min(m->offset, m->size)) return -1;
  m->offset += n;
  return n;
}
OPJ_BOOL OpjSeek(OPJ_OFF_T to, void* user) {
  auto* m = static_cast<OpjMemory*>(user);
  if (to < 0 || static_cast<uint64_t>(to) > m->size) return OPJ_FALSE;
  m->offset = to;
  return OPJ_TRUE;
}
void OpjQuiet(const char*, void*) {}

absl::Status DecodeJpeg2000(absl::string_view data, bool codestream, RgbImage* image) {
  OpjMemory m{reinterpret_cast<const uint8_t*>(data.data()), data.size(), 0};
  opj_stream_t* stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
  if (stream == nullptr) return absl::ResourceExhaustedError("ImageDecoder: no memory for a JPEG 2000 stream");
  opj_stream_set_user_data(stream, &m, nullptr);
  opj_stream_set_user_data_length(stream, data.size());
  opj_stream_set_read_function(stream, OpjRead);
  opj_stream_set_skip_function(stream, OpjSkip);
  opj_stream_set_seek_function(stream, OpjSeek);
  opj_codec_t* codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  opj_set_error_handler(codec, OpjQuiet, nullptr);
  opj_set_warning_handler(codec, OpjQuiet, nullptr);
  opj_set_info_handler(codec, OpjQuiet, nullptr);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  opj_image_t* img = nullptr;
  absl::Status status;
  if (!opj_setup_decoder(codec, &params) || !opj_read_header(stream, codec, &img) || img == nullptr) {
    status = absl::InvalidArgumentError("ImageDecoder: bad JPEG 2000 header");
  } else {
    // The header's size, checked before decoding allocates the components.
    status = SizeImage("JPEG 2000", static_cast<int64_t>(img->y1) - img->y0, static_cast<int64_t>(img->x1) - img->x0,
                       image);
    if (status.ok() && (!opj_decode(codec, stream, img) || !opj_end_decompress(codec, stream))) {
      status = absl::InvalidArgumentError("ImageDecoder: bad JPEG 2000 stream");
    }
  }
  if (status.ok()) {
    const uint32_t n = img->numcomps;
    bool plain = (n == 1 || n == 3 || n == 4) && img->color_space != OPJ_CLRSPC_SYCC &&
                 img->color_space != OPJ_CLRSPC_CMYK && img->color_space != OPJ_CLRSPC_EYCC;
    for (uint32_t c = 0; plain && c < n; ++c) {
      const opj_image_comp_t& comp = img->comps[c];
      plain = comp.w == image->width && comp.h == image->height && comp.prec == 8 && !comp.sgnd && comp.data != nullptr;
    }
    if (!plain) {
      status = absl::UnimplementedError(
          "ImageDecoder: JPEG 2000 other than 8-bit unsigned gray, RGB or RGBA at full resolution");
    } else {
      const int64_t pixels = image->height * image->width;
      for (int64_t i = 0; i < pixels; ++i) {
        for (int c = 0; c < 3; ++c) {
          const OPJ_INT32 v = img->comps[n == 1 ? 0 : c].data[i];
          image->rgb[3 * i + c] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
        }
      }
    }
  }
  if (img != nullptr) opj_image_destroy(img);
  opj_destroy_codec(codec);
  opj_stream_destroy(stream);
  return status;
}

// ---- BMP (uncompressed 24- and 32-bit, and 8-bit paletted) ----

uint32_t Le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }
uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

absl::Status DecodeBmp(absl::string_view data, RgbImage* image) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint64_t size = data.size();
  if (size < 54) return absl::InvalidArgumentError("ImageDecoder: BMP shorter than its headers");
  const uint64_t pixel_offset = Le32(p + 10), dib_size = Le32(p + 14);
  if (dib_size < 40 || 14 + dib_size > size) {
    return absl::UnimplementedError(absl::StrCat("ImageDecoder: BMP with a ", dib_size, "-byte info header"));
  }
  const int64_t width = static_cast<int32_t>(Le32(p + 18));
  const int64_t signed_height = static_cast<int32_t>(Le32(p + 22));
  const uint16_t bpp = Le16(p + 28);
  const uint32_t compression = Le32(p + 30);
  if (compression != 0 || (bpp != 24 && bpp != 32 && bpp != 8)) {
    return absl::UnimplementedError(absl::StrCat("ImageDecoder: BMP of ", bpp, " bits per pixel, compression ",
                                                 compression, " (only uncompressed 8, 24 and 32 bits)"));
  }
  const bool top_down = signed_height < 0;
  const int64_t height = top_down ? -signed_height : signed_height;
  SL_RETURN_IF_ERROR(SizeImage("BMP", height, width, image));
  // Rows are padded to 4 bytes. width < 2^31, so these products fit.
  const uint64_t stride = ((static_cast<uint64_t>(width) * bpp + 31) / 32) * 4;
  uint64_t needed = 0;
  if (__builtin_mul_overflow(stride, static_cast<uint64_t>(height), &needed) ||
      __builtin_add_overflow(needed, pixel_offset, &needed) || needed > size) {
    return absl::InvalidArgumentError("ImageDecoder: BMP pixel data runs past the stream");
  }
  uint32_t colors = 0;
  const uint8_t* palette = p + 14 + dib_size;
  if (bpp == 8) {
    colors = Le32(p + 46);
    if (colors == 0 || colors > 256) colors = 256;
    if (14 + dib_size + 4ull * colors > size) return absl::InvalidArgumentError("ImageDecoder: BMP palette runs past the stream");
  }
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = p + pixel_offset + stride * (top_down ? y : height - 1 - y);
    uint8_t* out = image->rgb + y * width * 3;
    for (int64_t x = 0; x < width; ++x) {
      const uint8_t* bgr;
      if (bpp == 8) {
        const uint32_t index = row[x];
        // Indexes past the palette read black, as PIL does.
        static const uint8_t kBlack[3] = {0, 0, 0};
        bgr = index < colors ? palette + 4 * index : kBlack;
      } else {
        bgr = row + x * (bpp / 8);
      }
      out[3 * x] = bgr[2];
      out[3 * x + 1] = bgr[1];
      out[3 * x + 2] = bgr[0];
    }
  }
  return absl::OkStatus();
}

// ---- PNM (binary P5 gray and P6 RGB, maxval 255) ----

absl::Status DecodePnm(absl::string_view data, RgbImage* image) {
  size_t i = 2;
  auto skip_space = [&] {
    while (i < data.size()) {
      if (data[i] == '#') {
        while (i < data.size() && data[i] != '\n') ++i;
      } else if (data[i] == ' ' || (data[i] >= '\t' && data[i] <= '\r')) {
        ++i;
      } else {
        break;
      }
    }
  };
  auto number = [&](int64_t* out) {
    skip_space();
    int64_t v = 0;
    size_t start = i;
    while (i < data.size() && data[i] >= '0' && data[i] <= '9' && i - start < 10) v = v * 10 + (data[i++] - '0');
    *out = v;
    return i > start;
  };
  int64_t width = 0, height = 0, maxval = 0;
  if (!number(&width) || !number(&height) || !number(&maxval) || i >= data.size()) {
    return absl::InvalidArgumentError("ImageDecoder: bad PNM header");
  }
  ++i;  // The one whitespace byte before the pixels.
  if (maxval != 255) return absl::UnimplementedError(absl::StrCat("ImageDecoder: PNM with maxval ", maxval));
  const bool gray = data[1] == '5';
  SL_RETURN_IF_ERROR(SizeImage("PNM", height, width, image));
  const uint64_t channels = gray ? 1 : 3;
  if ((data.size() - i) < static_cast<uint64_t>(height * width) * channels) {
    return absl::InvalidArgumentError("ImageDecoder: PNM pixel data runs past the stream");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(data.data()) + i;
  for (int64_t k = 0; k < height * width; ++k) {
    for (int c = 0; c < 3; ++c) image->rgb[3 * k + c] = p[k * channels + (gray ? 0 : c)];
  }
  return absl::OkStatus();
}

absl::Status Decode(absl::string_view d, RgbImage* image) {
  auto starts = [&](absl::string_view magic) { return d.size() >= magic.size() && d.substr(0, magic.size()) == magic; };
  if (starts("\xFF\xD8\xFF")) return DecodeJpeg(d, image);
  if (starts("\x89PNG\r\n\x1A\n")) return DecodePng(d, image);
  if (starts("II*\0") || starts(absl::string_view("MM\0*", 4))) return DecodeTiff(d, image);
  if (d.size() >= 12 && starts("RIFF") && d.substr(8, 4) == "WEBP") return DecodeWebp(d, image);
  if (starts(absl::string_view("\0\0\0\x0CjP  \r\n\x87\n", 12))) return DecodeJpeg2000(d, false, image);
  if (starts("\xFF\x4F\xFF\x51")) return DecodeJpeg2000(d, true, image);
  if (starts("BM")) return DecodeBmp(d, image);
  if (starts("P5") || starts("P6")) return DecodePnm(d, image);
  if (d.size() >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '7') {
    return absl::UnimplementedError("ImageDecoder: PNM other than binary P5 and P6");
  }
  return absl::InvalidArgumentError("ImageDecoder: not a JPEG, PNG, BMP, TIFF, WebP, PNM or JPEG 2000 stream");
}

class ImageDecoderOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string format;
    SL_RETURN_IF_ERROR(ctx->GetAttr("pixel_format", &format));
    if (format != "RGB" && format != "BGR" && format != "Grayscale") {
      return absl::InvalidArgumentError(absl::StrCat("ImageDecoder: unknown pixel_format '", format, "'"));
    }
    format_ = format;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("ImageDecoder: the encoded stream must be 1-D, not ",
                                                     x.shape().DebugString()));
    }
    RgbImage image;
    SL_RETURN_IF_ERROR(
        Decode(absl::string_view(reinterpret_cast<const char*>(x.data<uint8_t>()), x.NumElements()), &image));
    const int64_t pixels = image.height * image.width;
    Tensor* y;
    if (format_ == "Grayscale") {
      SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({image.height, image.width, 1}), &y));
      uint8_t* out = y->data<uint8_t>();
      // PIL's RGB to L: ITU-R 601-2 luma in 16-bit fixed point, rounded.
      for (int64_t i = 0; i < pixels; ++i) {
        const uint8_t* px = image.rgb + 3 * i;
        out[i] = static_cast<uint8_t>((px[0] * 19595 + px[1] * 38470 + px[2] * 7471 + 0x8000) >> 16);
      }
      return absl::OkStatus();
    }
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({image.height, image.width, 3}), &y));
    uint8_t* out = y->data<uint8_t>();
    if (format_ == "RGB") {
      std::memcpy(out, image.rgb, image.bytes);
    } else {
      for (int64_t i = 0; i < pixels; ++i) {
        out[3 * i] = image.rgb[3 * i + 2];
        out[3 * i + 1] = image.rgb[3 * i + 1];
        out[3 * i + 2] = image.rgb[3 * i];
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string format_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>ImageDecoder").Device(DEVICE_CPU), ImageDecoderOp);

}  // namespace
}  // namespace sluice
