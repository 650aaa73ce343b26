// libpng from memory. Its errors longjmp back to the setjmp in ReadPng: that function holds
// only C structs and pointers, and everything with a destructor lives in its caller.
#include "kernels/png_decode.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <png.h>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// One stream's reading, in C structs only.
struct PngDecode {
  const uint8_t* data;
  size_t size, offset;
  int channels;  // Asked for; 0: the image's own.
  int depth;     // Of the output's samples: 8 or 16.
  PixelSink* sink;
  char message[256];
};

void PngReadFromMemory(png_structp png, png_bytep out, png_size_t n) {
  auto* d = static_cast<PngDecode*>(png_get_io_ptr(png));
  if (n > d->size - d->offset) png_error(png, "truncated stream");
  std::memcpy(out, d->data + d->offset, n);
  d->offset += n;
}

void PngReadErrorFn(png_structp png, png_const_charp message) {
  auto* d = static_cast<PngDecode*>(png_get_error_ptr(png));
  std::snprintf(d->message, sizeof(d->message), "%s", message);
  png_longjmp(png, 1);
}

void PngReadWarningFn(png_structp, png_const_charp) {}

// Decodes into what d->sink allocates. Returns false with d->message set (empty when the sink
// failed and says why).
bool ReadPng(PngDecode* d) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, PngReadErrorFn, PngReadWarningFn);
  if (png == nullptr) {
    std::snprintf(d->message, sizeof(d->message), "cannot create the PNG reader");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    if (info == nullptr) std::snprintf(d->message, sizeof(d->message), "cannot create the PNG header");
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, d, PngReadFromMemory);
  png_read_info(png, info);
  const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  const bool transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  // The image's own channels once palettes, low-depth gray and tRNS are expanded.
  const bool gray = (color & PNG_COLOR_MASK_COLOR) == 0;
  const bool alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || transparency;
  const int own = (gray ? 1 : 3) + (alpha ? 1 : 0);
  const int want = d->channels == 0 ? own : d->channels;
  const bool want_gray = want <= 2, want_alpha = want == 2 || want == 4;
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (gray && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (transparency) png_set_tRNS_to_alpha(png);
  if (depth == 16 && d->depth == 8) png_set_strip_16(png);
  if (depth < 16 && d->depth == 16) png_set_expand_16(png);
  // TensorFlow's weights (ITU-R 601, as JPEG's luma), in libpng's fixed point: not libpng's
  // default sRGB ones.
  if (!gray && want_gray) png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);
  if (gray && !want_gray) png_set_gray_to_rgb(png);
  if (alpha && !want_alpha) png_set_strip_alpha(png);
  if (!alpha && want_alpha) png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);  // Opaque.
  if (d->depth == 16) png_set_swap(png);  // To the host's (little-endian) order.
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int64_t height = png_get_image_height(png, info), width = png_get_image_width(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  if (row_bytes != static_cast<size_t>(width) * want * (d->depth / 8)) {
    std::snprintf(d->message, sizeof(d->message), "rows of %zu bytes are not %d channels of %d bits", row_bytes,
                  want, d->depth);
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  uint8_t* out = d->sink->Allocate(1, height, width, want);
  if (out == nullptr) {
    d->message[0] = '\0';
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t y = 0; y < height; ++y) png_read_row(png, out + y * row_bytes, nullptr);
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

absl::Status DecodePngStream(absl::string_view data, int channels, int depth, PixelSink* sink, absl::string_view op) {
  if (channels < 0 || channels > 4 || (depth != 8 && depth != 16)) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": PNG decodes to 0 to 4 channels of 8 or 16 bits, not ", channels, " of ", depth));
  }
  PngDecode d{reinterpret_cast<const uint8_t*>(data.data()), data.size(), 0, channels, depth, sink, {}};
  if (!ReadPng(&d)) {
    if (!sink->status().ok()) return sink->status();
    return absl::InvalidArgumentError(absl::StrCat(op, ": invalid PNG data of ", data.size(), " bytes: ", d.message));
  }
  return absl::OkStatus();
}

}  // namespace sluice
