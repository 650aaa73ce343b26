#include "tools/progress.h"

#include <unistd.h>

namespace sluice {
namespace {

constexpr char kEraseLine[] = "\r\033[K";  // Back to column 0, erase to the end of the line.

}  // namespace

ProgressLine::ProgressLine(FILE* stream) : ProgressLine(stream, isatty(fileno(stream)) == 1) {}

ProgressLine::ProgressLine(FILE* stream, bool active) : stream_(stream), active_(active) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Draw(absl::string_view text) {
  std::fprintf(stream_, "%s%.*s", kEraseLine, static_cast<int>(text.size()), text.data());
  std::fflush(stream_);
  shown_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressLine::Update(absl::string_view text) {
  if (!active_) return;
  if (shown_ && std::chrono::steady_clock::now() - last_draw_ < kMinInterval) return;
  Draw(text);
}

void ProgressLine::Clear() {
  if (!active_ || !shown_) return;
  std::fprintf(stream_, "%s", kEraseLine);
  std::fflush(stream_);
  shown_ = false;
}

void ProgressLine::Finish(absl::string_view text) {
  if (!active_) return;
  Draw(text);
  std::fprintf(stream_, "\n");
  std::fflush(stream_);
  shown_ = false;
}

}  // namespace sluice
