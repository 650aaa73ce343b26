#include "rpc/same_host_transfer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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

// A TCP socket of this process listening on a free loopback port; returns its port.
int ListenOnLoopback(int* fd) {
  *fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (*fd < 0 || bind(*fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(*fd, 1) != 0) return -1;
  socklen_t len = sizeof(addr);
  if (getsockname(*fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

TEST(SameHostTransferTest, OnlyTheListenerIsVerified) {
  int fd = -1;
  const int port = ListenOnLoopback(&fd);
  ASSERT_GT(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  EXPECT_OK(VerifySameHostListenerNow(getpid(), address));
  EXPECT_OK(VerifySameHostListener(getpid(), address));
  EXPECT_OK(VerifySameHostListener(getpid(), address));  // From the kept verdict.

  // Another process (a child that does not listen) is refused, first time and every time.
  // The child holds the listening socket from the fork until it closes it: the parent waits
  // for its word that it has.
  int closed[2];
  ASSERT_EQ(pipe(closed), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fd);
    const char byte = 1;
    if (write(closed[1], &byte, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(closed[0], &byte, 1), 1);
  close(closed[0]);
  close(closed[1]);
  for (int i = 0; i < 2; ++i) {
    absl::Status s = VerifySameHostListener(child, address);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  }
  kill(child, SIGKILL);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);

  // An address without a port, or a bad pid, says so.
  EXPECT_EQ(VerifySameHostListener(getpid(), "127.0.0.1").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(VerifySameHostListener(0, address).code(), absl::StatusCode::kPermissionDenied);

  // Once the socket is closed, the kept verdict lasts at most 250 ms.
  close(fd);
  EXPECT_FALSE(VerifySameHostListenerNow(getpid(), address).ok());
  absl::SleepFor(absl::Milliseconds(300));
  absl::Status s = VerifySameHostListener(getpid(), address);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
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
