#include "framework/random_ids.h"

#include <sys/wait.h>
#include <unistd.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(RandomIdsTest, HandlesCarry128RandomBitsInHex) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string h = NewRandomHandle("session");
    ASSERT_EQ(h.size(), std::string("session_").size() + 32) << h;
    ASSERT_TRUE(absl::StartsWith(h, "session_"));
    for (char c : h.substr(8)) ASSERT_TRUE(absl::ascii_isxdigit(c)) << h;
    ASSERT_TRUE(seen.insert(h).second) << h;
  }
}

TEST(RandomIdsTest, StepIdsArePositiveAndDoNotRepeat) {
  absl::flat_hash_set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    int64_t id = NewRandomStepId();
    ASSERT_GT(id, 0);
    ASSERT_TRUE(seen.insert(id).second);
  }
}

// Step ids come from a per-thread buffer of random bytes: a forked child must not hand out
// the ids its parent will (both would otherwise read the same buffered bytes).
TEST(RandomIdsTest, AForkedChildDrawsOtherStepIdsThanItsParent) {
  NewRandomStepId();  // The buffer now holds bytes for later ids.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int64_t ids[8];
    for (int64_t& id : ids) id = NewRandomStepId();
    const ssize_t n = write(fds[1], ids, sizeof(ids));
    _exit(n == sizeof(ids) ? 0 : 1);
  }
  close(fds[1]);
  int64_t child[8];
  size_t got = 0;
  while (got < sizeof(child)) {
    const ssize_t n = read(fds[0], reinterpret_cast<char*>(child) + got, sizeof(child) - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(got, sizeof(child));
  absl::flat_hash_set<int64_t> parent;
  for (int i = 0; i < 8; ++i) parent.insert(NewRandomStepId());
  for (int64_t id : child) EXPECT_FALSE(parent.contains(id)) << id;
}

}  // namespace
}  // namespace sluice
