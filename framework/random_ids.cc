#include "framework/random_ids.h"

#include <sys/random.h>

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

}  // namespace

std::string NewRandomHandle(absl::string_view prefix) {
  char bits[16];
  FillRandom(bits, sizeof(bits));
  return absl::StrCat(prefix, "_", absl::BytesToHexString(absl::string_view(bits, sizeof(bits))));
}

int64_t NewRandomStepId() {
  uint64_t bits = 0;
  while (bits == 0) {
    FillRandom(&bits, sizeof(bits));
    bits >>= 1;
  }
  return static_cast<int64_t>(bits);
}

}  // namespace sluice
