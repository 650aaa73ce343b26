#include "framework/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(ReadRegularFileTest, ReadsAWholeFile) {
  const std::string path = TempPath("plain.bin");
  std::ofstream(path, std::ios::binary) << std::string("ab\0cd", 5);
  SL_ASSERT_OK_AND_ASSIGN(std::string data, ReadRegularFile(path, "test file"));
  EXPECT_EQ(data, std::string("ab\0cd", 5));
}

TEST(ReadRegularFileTest, RefusesAFifoWithoutBlocking) {
  // Before: std::ifstream on a FIFO waited for a writer forever.
  const std::string path = TempPath("pipe");
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  absl::StatusOr<std::string> data = ReadRegularFile(path, "ONNX model");
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(data.status().message(), HasSubstr("ONNX model '" + path + "' is not a regular file"));
}

TEST(ReadRegularFileTest, RefusesADirectoryAndNamesAMissingFile) {
  EXPECT_EQ(ReadRegularFile(TempPath(""), "input").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> missing = ReadRegularFile(TempPath("missing"), "input");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("missing"));
}

TEST(ReadRegularFileTest, RefusesAFileLargerThanTheLimit) {
  const std::string path = TempPath("big.bin");
  std::ofstream(path, std::ios::binary) << std::string(100, 'x');
  EXPECT_EQ(ReadRegularFile(path, "input", 99).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_OK(ReadRegularFile(path, "input", 100).status());
}

TEST(RegularFileTest, CountsHardLinks) {
  const std::string path = TempPath("linked.bin"), other = TempPath("linked2.bin");
  std::ofstream(path, std::ios::binary) << "x";
  unlink(other.c_str());
  SL_ASSERT_OK_AND_ASSIGN(RegularFile once, RegularFile::Open(path, "file"));
  EXPECT_EQ(once.links(), 1u);
  ASSERT_EQ(link(path.c_str(), other.c_str()), 0);
  SL_ASSERT_OK_AND_ASSIGN(RegularFile twice, RegularFile::Open(path, "file"));
  EXPECT_EQ(twice.links(), 2u);
}

}  // namespace
}  // namespace sluice
