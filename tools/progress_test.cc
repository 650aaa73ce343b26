#include "tools/progress.h"

#include <cstdio>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string Contents(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) s.append(buf, n);
  return s;
}

TEST(ProgressLineTest, WritesNothingWhenNotATerminal) {
  FILE* f = std::tmpfile();
  {
    ProgressLine progress(f);  // A regular file is not a terminal.
    EXPECT_FALSE(progress.active());
    progress.Update("1/2");
    progress.Finish("done");
    progress.Done();
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(ProgressLineTest, RewritesInPlaceThrottledAndErasesAtTheEnd) {
  FILE* f = std::tmpfile();
  {
    ProgressLine progress(f, /*active=*/true);
    progress.Update("1/3");
    progress.Update("2/3");  // Within kMinInterval of the first: skipped.
    progress.Clear();
    progress.Update("3/3");  // Nothing shown: drawn at once.
    progress.Done();
  }
  EXPECT_EQ(Contents(f), "\r\033[K1/3\r\033[K\r\033[K3/3\r\033[K");
  std::fclose(f);
}

TEST(ProgressLineTest, RedrawsAfterTheInterval) {
  FILE* f = std::tmpfile();
  ProgressLine progress(f, /*active=*/true);
  progress.Update("a");
  std::this_thread::sleep_for(ProgressLine::kMinInterval + std::chrono::milliseconds(20));
  progress.Update("b");
  progress.Finish("c");  // Kept, with a newline; the destructor has nothing to erase.
  EXPECT_EQ(Contents(f), "\r\033[Ka\r\033[Kb\r\033[Kc\n");
  std::fclose(f);
}

}  // namespace
}  // namespace sluice
