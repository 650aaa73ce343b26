// libjpeg-turbo from memory, as TensorFlow's jpeg_mem.cc drives it: its own memory source (a
// stream that ends early is an error unless truncated streams are recovered with a fake EOI
// marker), CMYK converted by hand, and a crop window through jpeg_crop_scanline and
// jpeg_skip_scanlines.
//
// libjpeg's errors longjmp back to the setjmp in DecodeWithLibjpeg and ReadHeader: those hold
// only C structs and pointers (scratch rows come from libjpeg's own pools), and everything with
// a destructor lives in their callers.
#include "kernels/jpeg_decode.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>
#include <jerror.h>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// libjpeg's own allocations (progressive streams keep every coefficient of the full-size
// image, whatever the ratio) fail cleanly above this instead of touching gigabytes for a tiny
// hostile header. A 2^28-pixel three-channel progressive image needs 1.5 GiB.
constexpr long kMaxLibjpegMemory = long{1} << 31;

struct JpegError {
  jpeg_error_mgr mgr;  // First: libjpeg passes &mgr as cinfo->err.
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

void Silence(j_common_ptr, int) {}

// ---- The memory source ----

struct JpegSource {
  jpeg_source_mgr pub;  // First: libjpeg passes &pub as cinfo->src.
  const JOCTET* data;
  size_t size;
  bool try_recover;
};

const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};

void InitSource(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  src->pub.next_input_byte = src->data;
  src->pub.bytes_in_buffer = src->size;
}

// libjpeg asks for more only when everything given is consumed.
boolean FillInputBuffer(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (src->pub.next_input_byte == src->data && src->pub.bytes_in_buffer == 0) ERREXIT(cinfo, JERR_INPUT_EMPTY);
  if (!src->try_recover) ERREXIT(cinfo, JERR_FILE_READ);
  WARNMS(cinfo, JWRN_JPEG_EOF);
  src->pub.next_input_byte = kFakeEoi;
  src->pub.bytes_in_buffer = sizeof(kFakeEoi);
  return TRUE;
}

void SkipInputData(j_decompress_ptr cinfo, long count) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (count <= 0) return;
  if (static_cast<unsigned long>(count) > src->pub.bytes_in_buffer) {
    src->pub.bytes_in_buffer = 0;
    FillInputBuffer(cinfo);  // An error, or the fake EOI.
    return;
  }
  src->pub.next_input_byte += count;
  src->pub.bytes_in_buffer -= count;
}

void TermSource(j_decompress_ptr) {}

void SetSource(j_decompress_ptr cinfo, JpegSource* src, const JOCTET* data, size_t size, bool try_recover) {
  src->pub.init_source = InitSource;
  src->pub.fill_input_buffer = FillInputBuffer;
  src->pub.skip_input_data = SkipInputData;
  src->pub.resync_to_restart = jpeg_resync_to_restart;
  src->pub.term_source = TermSource;
  src->pub.next_input_byte = nullptr;
  src->pub.bytes_in_buffer = 0;
  src->data = data;
  src->size = size;
  src->try_recover = try_recover;
  cinfo->src = &src->pub;
}

// ---- Decoding ----

enum class Outcome { kOk, kLibjpegError, kTooLarge, kBadCrop, kSinkFailed };

struct JpegRun {
  JpegError error;
  const JpegDecodeOptions* options;
  PixelSink* sink;
  Outcome outcome;
  int64_t full_height, full_width;  // The scaled image's, before any crop.
  int64_t rows, rows_read;          // Of the output.
  uint8_t* out;
  int64_t row_bytes;
};

// TensorFlow's CMYK to RGB: Adobe's writers store CMYK inverted.
void CmykRowToRgb(const JSAMPLE* cmyk, int64_t width, bool adobe, uint8_t* rgb) {
  for (int64_t i = 0; i < width; ++i) {
    const int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (adobe) {
      rgb[3 * i] = static_cast<uint8_t>(k * c / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>(k * m / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>(k * y / 255);
    } else {
      rgb[3 * i] = static_cast<uint8_t>((255 - k) * (255 - c) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>((255 - k) * (255 - m) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((255 - k) * (255 - y) / 255);
    }
  }
}

void DecodeWithLibjpeg(const JOCTET* data, size_t size, JpegRun* run) {
  const JpegDecodeOptions& o = *run->options;
  jpeg_decompress_struct cinfo;
  JpegSource source;
  cinfo.err = jpeg_std_error(&run->error.mgr);
  run->error.mgr.error_exit = ErrorExit;
  run->error.mgr.emit_message = Silence;
  if (setjmp(run->error.jump)) {
    jpeg_destroy_decompress(&cinfo);
    run->outcome = Outcome::kLibjpegError;
    return;
  }
  jpeg_create_decompress(&cinfo);
  cinfo.mem->max_memory_to_use = kMaxLibjpegMemory;
  SetSource(&cinfo, &source, data, size, o.try_recover_truncated);
  jpeg_read_header(&cinfo, TRUE);

  const int channels = o.channels == 0 ? std::min(cinfo.num_components, 3) : o.channels;
  const bool cmyk =
      channels == 3 && o.convert_cmyk && (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK);
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
  cinfo.do_fancy_upsampling = o.fancy_upscaling ? TRUE : FALSE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned int>(o.ratio);
  cinfo.dct_method = o.accurate_dct ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_calc_output_dimensions(&cinfo);
  run->full_height = cinfo.output_height;
  run->full_width = cinfo.output_width;
  if (run->full_height * run->full_width > kMaxDecodedPixels) {  // Each is below 2^16.
    run->outcome = Outcome::kTooLarge;
    jpeg_destroy_decompress(&cinfo);
    return;
  }
  if (!jpeg_start_decompress(&cinfo)) ERREXIT(&cinfo, JERR_FILE_READ);  // Only a suspending source returns false.

  int64_t height = cinfo.output_height, width = cinfo.output_width, crop_shift = 0;
  if (o.crop != nullptr) {
    const JpegCropWindow& c = *o.crop;
    if (c.width <= 0 || c.height <= 0 || c.x < 0 || c.y < 0 || c.y > height - c.height || c.x > width - c.width) {
      run->outcome = Outcome::kBadCrop;
      jpeg_destroy_decompress(&cinfo);
      return;
    }
    // libjpeg moves the window's left edge back to an iMCU boundary and widens it to match.
    JDIMENSION x = static_cast<JDIMENSION>(c.x), w = static_cast<JDIMENSION>(c.width);
    jpeg_crop_scanline(&cinfo, &x, &w);
    crop_shift = c.x - x;
    if (jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(c.y)) != static_cast<JDIMENSION>(c.y)) {
      ERREXIT(&cinfo, JERR_FILE_READ);
    }
    height = c.height;
    width = c.width;
  }

  run->out = run->sink->Allocate(1, height, width, channels);
  if (run->out == nullptr) {
    run->outcome = Outcome::kSinkFailed;
    jpeg_destroy_decompress(&cinfo);
    return;
  }
  run->row_bytes = width * channels;
  run->rows = run->rows_read = height;
  // Rows that are not the output's as they come (CMYK, or a crop wider than asked) go through
  // a scratch row from libjpeg's pool, freed with cinfo.
  const bool scratch = cmyk || static_cast<int64_t>(cinfo.output_width) != width;
  JSAMPARRAY scratch_row =
      scratch ? (*cinfo.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&cinfo), JPOOL_IMAGE,
                                           cinfo.output_width * cinfo.output_components, 1)
              : nullptr;
  bool complete = true;
  for (int64_t y = 0; y < height; ++y) {
    uint8_t* dst = run->out + y * run->row_bytes;
    JSAMPROW row = scratch ? scratch_row[0] : dst;
    if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) {
      // A suspended read (see acceptable_fraction): recovering repeats the last row (black when
      // there is none), as TensorFlow does; otherwise the caller decides on the rows read.
      complete = false;
      if (!o.try_recover_truncated) {
        run->rows_read = y;
        break;
      }
      for (int64_t r = y; r < height; ++r) {
        uint8_t* line = run->out + r * run->row_bytes;
        if (r == 0) {
          std::memset(line, 0, run->row_bytes);
        } else {
          std::memcpy(line, line - run->row_bytes, run->row_bytes);
        }
      }
      break;
    }
    if (cmyk) {
      CmykRowToRgb(scratch_row[0] + 4 * crop_shift, width, cinfo.saw_Adobe_marker, dst);
    } else if (scratch) {
      std::memcpy(dst, scratch_row[0] + crop_shift * channels, run->row_bytes);
    }
  }
  if (!complete) {
    jpeg_abort_decompress(&cinfo);
  } else {
    if (cinfo.output_scanline < cinfo.output_height) {  // The rows below a crop window.
      jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  run->outcome = Outcome::kOk;
}

bool OutOfMemory(const JpegError& error) {
  return error.mgr.msg_code == JERR_OUT_OF_MEMORY || error.mgr.msg_code == JERR_NO_BACKING_STORE;
}

absl::Status LibjpegError(absl::string_view op, size_t size, const JpegError& error) {
  if (OutOfMemory(error)) {
    return absl::ResourceExhaustedError(absl::StrCat(op, ": decoding the JPEG needs more than ", kMaxLibjpegMemory,
                                                     " bytes: ", error.message));
  }
  return absl::InvalidArgumentError(absl::StrCat(op, ": Invalid JPEG data (", size, " bytes): ", error.message));
}

struct HeaderRun {
  JpegError error;
  bool ok;
  JpegShape shape;
};

void ReadHeader(const JOCTET* data, size_t size, HeaderRun* run) {
  jpeg_decompress_struct cinfo;
  JpegSource source;
  cinfo.err = jpeg_std_error(&run->error.mgr);
  run->error.mgr.error_exit = ErrorExit;
  run->error.mgr.emit_message = Silence;
  if (setjmp(run->error.jump)) {
    jpeg_destroy_decompress(&cinfo);
    run->ok = false;
    return;
  }
  jpeg_create_decompress(&cinfo);
  SetSource(&cinfo, &source, data, size, false);
  jpeg_read_header(&cinfo, TRUE);
  jpeg_calc_output_dimensions(&cinfo);  // The default color conversion's output_components.
  run->shape = JpegShape{cinfo.output_height, cinfo.output_width, cinfo.output_components};
  jpeg_destroy_decompress(&cinfo);
  run->ok = true;
}

}  // namespace

absl::Status DecodeJpegStream(absl::string_view data, const JpegDecodeOptions& options, PixelSink* sink,
                              absl::string_view op) {
  if (options.channels != 0 && options.channels != 1 && options.channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": JPEG decodes to 0 (its own), 1 or 3 channels, not ",
                                                   options.channels));
  }
  if (options.ratio != 1 && options.ratio != 2 && options.ratio != 4 && options.ratio != 8) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ratio must be 1, 2, 4, or 8, got ", options.ratio));
  }
  JpegRun run{};
  run.options = &options;
  run.sink = sink;
  DecodeWithLibjpeg(reinterpret_cast<const JOCTET*>(data.data()), data.size(), &run);
  switch (run.outcome) {
    case Outcome::kOk:
      break;
    case Outcome::kLibjpegError:
      return LibjpegError(op, data.size(), run.error);
    case Outcome::kTooLarge:
      return absl::ResourceExhaustedError(absl::StrCat(op, ": the JPEG's ", run.full_width, " x ", run.full_height,
                                                       " pixels are above the limit of ", kMaxDecodedPixels));
    case Outcome::kBadCrop: {
      const JpegCropWindow& c = *options.crop;
      return absl::InvalidArgumentError(absl::StrCat(op, ": crop window [y ", c.y, ", x ", c.x, ", height ", c.height,
                                                     ", width ", c.width, "] is not inside the ", run.full_width,
                                                     " x ", run.full_height, " image"));
    }
    case Outcome::kSinkFailed:
      return sink->status().ok() ? absl::InternalError(absl::StrCat(op, ": no buffer for the pixels")) : sink->status();
  }
  if (run.rows_read < run.rows) {
    const float fraction = static_cast<float>(run.rows_read) / static_cast<float>(run.rows);
    if (fraction < std::min(1.0f, options.acceptable_fraction)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": Invalid JPEG data: only ", run.rows_read, " of ", run.rows,
                                                     " rows decoded"));
    }
    std::memset(run.out + run.rows_read * run.row_bytes, 0, (run.rows - run.rows_read) * run.row_bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<JpegShape> ReadJpegShape(absl::string_view data, absl::string_view op) {
  HeaderRun run{};
  ReadHeader(reinterpret_cast<const JOCTET*>(data.data()), data.size(), &run);
  if (!run.ok) return LibjpegError(op, data.size(), run.error);
  return run.shape;
}

}  // namespace sluice
