// giflib's record-by-record reader rather than DGifSlurp, so that every frame's declared size
// is checked against the output's limit before its pixels are decoded or stored. The
// compositing is TensorFlow's (gif_io.cc); every index into a frame, the canvas and a color
// table is checked here, not assumed.
#include "kernels/gif_decode.h"

#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"

namespace sluice {
namespace {

struct GifInput {
  const uint8_t* data;
  size_t size, offset;
};

int ReadFromMemory(GifFileType* gif, GifByteType* out, int n) {
  auto* in = static_cast<GifInput*>(gif->UserData);
  if (n <= 0) return 0;
  const size_t take = std::min(static_cast<size_t>(n), in->size - in->offset);
  std::memcpy(out, in->data + in->offset, take);
  in->offset += take;
  return static_cast<int>(take);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = D_GIF_SUCCEEDED;
    DGifCloseFile(gif, &error);  // Frees `gif` whatever it returns.
  }
};

// One stored frame: its rectangle on the canvas, its color table and its pixels' indexes.
struct Frame {
  int left, top, width, height;
  int transparent;  // A color index, or NO_TRANSPARENT_COLOR.
  bool local_colors;
  std::vector<GifColorType> colors;  // Its own table when local_colors.
  size_t raster_offset;              // Of its width x height indexes in the raster.
};

// giflib's interlaced row order: four passes, each starting at a row and stepping by rows.
constexpr int kInterlaceStart[4] = {0, 4, 2, 1};
constexpr int kInterlaceStep[4] = {8, 8, 4, 2};

class GifReader {
 public:
  GifReader(absl::string_view data, absl::string_view op) : data_(data), op_(op) {}

  absl::Status Bad(absl::string_view what, int code = D_GIF_SUCCEEDED) const {
    const char* reason = code == D_GIF_SUCCEEDED ? nullptr : GifErrorString(code);
    return absl::InvalidArgumentError(absl::StrCat(op_, ": Invalid GIF data (size ", data_.size(), "), ", what,
                                                   reason == nullptr ? "" : ": ", reason == nullptr ? "" : reason));
  }

  // Reads every record; keeps the frames the output shows (all, or the first) and the size of
  // the largest frame, which is the canvas's.
  absl::Status Read(bool all_frames) {
    GifInput input{reinterpret_cast<const uint8_t*>(data_.data()), data_.size(), 0};
    int error = D_GIF_SUCCEEDED;
    std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&input, ReadFromMemory, &error));
    if (gif == nullptr) return Bad("failed to open gif file", error);
    if (gif->SColorMap != nullptr) {
      global_colors_.assign(gif->SColorMap->Colors, gif->SColorMap->Colors + gif->SColorMap->ColorCount);
    }
    // The first graphics control extension since the last frame belongs to the next one.
    int transparent = NO_TRANSPARENT_COLOR;
    bool have_control = false;
    std::vector<GifPixelType> discard;  // One row of a frame decoded only to be checked.
    for (;;) {
      GifRecordType type = UNDEFINED_RECORD_TYPE;
      if (DGifGetRecordType(gif.get(), &type) == GIF_ERROR) return Bad("failed to read gif file", gif->Error);
      if (type == TERMINATE_RECORD_TYPE) break;
      if (type == EXTENSION_RECORD_TYPE) {
        int code = 0;
        GifByteType* block = nullptr;
        if (DGifGetExtension(gif.get(), &code, &block) == GIF_ERROR) return Bad("bad extension", gif->Error);
        if (block != nullptr && code == GRAPHICS_EXT_FUNC_CODE && !have_control) {
          have_control = true;
          GraphicsControlBlock control;
          transparent = DGifExtensionToGCB(block[0], block + 1, &control) == GIF_OK ? control.TransparentColor
                                                                                     : NO_TRANSPARENT_COLOR;
        }
        while (block != nullptr) {
          if (DGifGetExtensionNext(gif.get(), &block) == GIF_ERROR) return Bad("bad extension", gif->Error);
        }
        continue;
      }
      if (type != IMAGE_DESC_RECORD_TYPE) continue;
      if (DGifGetImageDesc(gif.get()) == GIF_ERROR) return Bad("bad image descriptor", gif->Error);
      const GifImageDesc& desc = gif->Image;  // Left, top, width and height are 16-bit.
      if (desc.Width <= 0 || desc.Height <= 0) {
        return Bad(absl::StrCat("frame ", num_frames_, " is ", desc.Width, " x ", desc.Height, " pixels"));
      }
      ++num_frames_;
      width_ = std::max<int64_t>(width_, desc.Width);
      height_ = std::max<int64_t>(height_, desc.Height);
      // The output will hold at least this many pixels; refuse before decoding more.
      const int64_t shown = all_frames ? num_frames_ : 1;
      if (shown * width_ * height_ > kMaxDecodedPixels) {
        return absl::ResourceExhaustedError(absl::StrCat(op_, ": the GIF's ", shown, " frames of ", width_, " x ",
                                                         height_, " pixels are above the limit of ",
                                                         kMaxDecodedPixels));
      }
      const bool keep = all_frames || frames_.empty();
      const size_t pixels = static_cast<size_t>(desc.Width) * desc.Height;
      GifPixelType* rows = nullptr;
      if (keep) {
        Frame frame{desc.Left, desc.Top, desc.Width, desc.Height, transparent, desc.ColorMap != nullptr, {},
                    raster_.size()};
        if (frame.local_colors) {
          frame.colors.assign(desc.ColorMap->Colors, desc.ColorMap->Colors + desc.ColorMap->ColorCount);
        }
        frames_.push_back(std::move(frame));
        raster_.resize(raster_.size() + pixels);
        rows = raster_.data() + frames_.back().raster_offset;
      } else {
        discard.resize(desc.Width);
      }
      // A kept frame's rows go to their place (interlaced ones in giflib's pass order); the rest
      // are decoded one row at a time into `discard`, as TensorFlow decodes every frame.
      for (int pass = 0; pass < (desc.Interlace ? 4 : 1); ++pass) {
        const int start = desc.Interlace ? kInterlaceStart[pass] : 0, step = desc.Interlace ? kInterlaceStep[pass] : 1;
        for (int y = start; y < desc.Height; y += step) {
          GifPixelType* row = keep ? rows + static_cast<size_t>(y) * desc.Width : discard.data();
          if (DGifGetLine(gif.get(), row, desc.Width) == GIF_ERROR) return Bad("bad image data", gif->Error);
        }
      }
      transparent = NO_TRANSPARENT_COLOR;
      have_control = false;
    }
    if (num_frames_ == 0) return Bad("gif file does not contain any image");
    return absl::OkStatus();
  }

  // Draws the kept frames, each over the one before, into what `sink` allocates.
  absl::Status Composite(PixelSink* sink) const {
    const int64_t count = static_cast<int64_t>(frames_.size());
    uint8_t* out = sink->Allocate(count, height_, width_, 3);
    if (out == nullptr) {
      return sink->status().ok() ? absl::InternalError(absl::StrCat(op_, ": no buffer for the pixels")) : sink->status();
    }
    const int64_t frame_bytes = height_ * width_ * 3;
    for (int64_t k = 0; k < count; ++k) {
      const Frame& f = frames_[k];
      uint8_t* canvas = out + k * frame_bytes;
      if (k > 0) std::memcpy(canvas, canvas - frame_bytes, frame_bytes);
      const bool covers = f.left == 0 && f.top == 0 && f.width == width_ && f.height == height_;
      if (k == 0 && !covers) std::memset(canvas, 0, frame_bytes);
      const std::vector<GifColorType>& colors = f.local_colors ? f.colors : global_colors_;
      if (colors.empty()) return Bad(absl::StrCat("frame ", k, " has no color map"));
      // The frame's rectangle clipped to the canvas (left and top are never negative).
      const int64_t right = std::min<int64_t>(int64_t{f.left} + f.width, width_);
      const int64_t bottom = std::min<int64_t>(int64_t{f.top} + f.height, height_);
      for (int64_t y = f.top; y < bottom; ++y) {
        const GifPixelType* row = raster_.data() + f.raster_offset + (y - f.top) * f.width;
        uint8_t* dst = canvas + y * width_ * 3;
        for (int64_t x = f.left; x < right; ++x) {
          const int index = row[x - f.left];
          if (index >= static_cast<int>(colors.size())) {
            return Bad(absl::StrCat("found color index ", index, " outside of color map range ", colors.size()));
          }
          uint8_t* px = dst + x * 3;
          if (index == f.transparent) {
            if (k == 0) px[0] = px[1] = px[2] = 0;
            continue;
          }
          px[0] = colors[index].Red;
          px[1] = colors[index].Green;
          px[2] = colors[index].Blue;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::string_view data_, op_;
  std::vector<GifColorType> global_colors_;
  std::vector<Frame> frames_;
  std::vector<GifPixelType> raster_;  // Every kept frame's indexes, one after another.
  int64_t num_frames_ = 0, width_ = 0, height_ = 0;
};

}  // namespace

absl::Status DecodeGifStream(absl::string_view data, bool all_frames, PixelSink* sink, absl::string_view op) {
  GifReader reader(data, op);
  SL_RETURN_IF_ERROR(reader.Read(all_frames));
  return reader.Composite(sink);
}

}  // namespace sluice
