// One status line on a terminal, rewritten in place ("\r", erase to end of line), for verbs
// that run for a while. When the stream is not a terminal it writes nothing, so pipes, files
// and tests see the verb's output unchanged.
//
//   ProgressLine progress;                        // stderr; inactive unless it is a TTY
//   for (...) progress.Update(absl::StrCat("bench: ", i, "/", n, " iterations"));
//   progress.Clear();  std::printf("...\n");      // before other output to the same terminal
//   progress.Done();                              // erases the line
#ifndef SLUICE_TOOLS_PROGRESS_H_
#define SLUICE_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"

namespace sluice {

// Not thread-safe: one verb's main loop drives it.
class ProgressLine {
 public:
  // Active when `stream` (not owned; it must outlive this) is a terminal.
  explicit ProgressLine(FILE* stream = stderr);
  // For tests: active or not regardless of what `stream` is.
  ProgressLine(FILE* stream, bool active);
  // Erases the line if it is still shown.
  ~ProgressLine();

  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool active() const { return active_; }

  // Shows `text` in place of the line. Throttled to kMinInterval between redraws, except
  // when nothing is shown (the first call, or the first after Clear()).
  void Update(absl::string_view text);
  // Erases the line now; the next Update() draws again at once.
  void Clear();
  // Leaves `text` on the terminal as a finished line (with a newline); unthrottled.
  void Finish(absl::string_view text);
  // Erases the line: nothing is left of it.
  void Done() { Clear(); }

  // About ten redraws a second: enough to look alive, few enough to cost nothing.
  static constexpr std::chrono::milliseconds kMinInterval{100};

 private:
  void Draw(absl::string_view text);

  FILE* const stream_;
  const bool active_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace sluice

#endif  // SLUICE_TOOLS_PROGRESS_H_
