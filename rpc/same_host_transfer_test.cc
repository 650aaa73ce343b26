#include "rpc/same_host_transfer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(SameHostTransferTest, IdNamesThisMachineAndPidNamespace) {
  EXPECT_FALSE(SameHostId().empty());
  EXPECT_EQ(SameHostId(), SameHostId());
  EXPECT_NE(SameHostId().find("/pid-ns:"), std::string::npos) << SameHostId();
}

TEST(SameHostTransferTest, ReadsThisProcess) {
  std::vector<char> src(3 << 20), dst(src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  ASSERT_OK(ReadFromSameHost(getpid(), reinterpret_cast<uint64_t>(src.data()), dst.data(), src.size()));
  EXPECT_EQ(src, dst);
}

TEST(SameHostTransferTest, ReadsAnotherProcess) {
  int to_parent[2], to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  constexpr size_t kBytes = 5 << 20;
  std::vector<char> pattern(kBytes);
  for (size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<char>(i % 251);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // Holds a copy of the pattern at a fresh address until told to go.
    char* copy = new char[kBytes];
    std::memcpy(copy, pattern.data(), kBytes);
    const uint64_t address = reinterpret_cast<uint64_t>(copy);
    char c;
    if (write(to_parent[1], &address, sizeof(address)) != sizeof(address)) _exit(1);
    if (read(to_child[0], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  uint64_t address = 0;
  ASSERT_EQ(read(to_parent[0], &address, sizeof(address)), static_cast<ssize_t>(sizeof(address)));
  std::vector<char> dst(kBytes);
  absl::Status s = ReadFromSameHost(child, address, dst.data(), kBytes);
  EXPECT_OK(s);
  EXPECT_EQ(dst, pattern);
  ASSERT_EQ(write(to_child[1], "x", 1), 1);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The process is gone: its pid names nothing (or, reused, not that range).
  s = ReadFromSameHost(child, address, dst.data(), kBytes);
  EXPECT_FALSE(s.ok());
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
}

TEST(SameHostTransferTest, AnUnmappedRangeIsDataLoss) {
  std::vector<char> dst(4096);
  absl::Status s = ReadFromSameHost(getpid(), 4096, dst.data(), dst.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST(SameHostTransferTest, TheEnvironmentTurnsItOff) {
  setenv("SLUICE_SAME_HOST_RECV_TENSOR", "0", 1);
  EXPECT_FALSE(SameHostTransfersEnabledByDefault());
  setenv("SLUICE_SAME_HOST_RECV_TENSOR", "1", 1);
  EXPECT_TRUE(SameHostTransfersEnabledByDefault());
  unsetenv("SLUICE_SAME_HOST_RECV_TENSOR");
  EXPECT_TRUE(SameHostTransfersEnabledByDefault());
}

}  // namespace
}  // namespace sluice
