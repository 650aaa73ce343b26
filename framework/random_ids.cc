#include "framework/random_ids.h"

#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// getrandom(2) blocks only before the kernel's pool is first seeded and never fails for 256
// bytes or fewer but on EINTR; without it nothing here is safe to hand out.
void FillRandom(void* buf, size_t size) {
  char* p = static_cast<char*>(buf);
  while (size > 0) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::abort();
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Step ids are drawn per run: from a per-thread buffer of the kernel's bytes, refilled 256 at
// a time, rather than a getrandom call each (a tenth of a tiny graph's run went to it). A
// forked child refills first, so parent and child never hand out the same bytes.
std::atomic<uint64_t> fork_generation{0};

void BumpForkGeneration() { fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct RandomBuffer {
  unsigned char bytes[256];
  size_t used = sizeof(bytes);
  uint64_t generation = 0;

  void Take(void* out, size_t size) {
    static const bool registered = (pthread_atfork(nullptr, nullptr, BumpForkGeneration), true);
    (void)registered;
    const uint64_t now = fork_generation.load(std::memory_order_relaxed);
    if (used + size > sizeof(bytes) || generation != now) {
      FillRandom(bytes, sizeof(bytes));
      used = 0;
      generation = now;
    }
    std::memcpy(out, bytes + used, size);
    std::memset(bytes + used, 0, size);  // Handed out once: not kept in memory after.
    used += size;
  }
};

}  // namespace

std::string NewRandomHandle(absl::string_view prefix) {
  char bits[16];
  FillRandom(bits, sizeof(bits));
  return absl::StrCat(prefix, "_", absl::BytesToHexString(absl::string_view(bits, sizeof(bits))));
}

int64_t NewRandomStepId() {
  thread_local RandomBuffer buffer;
  uint64_t bits = 0;
  while (bits == 0) {
    buffer.Take(&bits, sizeof(bits));
    bits >>= 1;
  }
  return static_cast<int64_t>(bits);
}

}  // namespace sluice
