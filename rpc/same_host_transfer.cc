#include "rpc/same_host_transfer.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice {

const std::string& SameHostId() {
  static const std::string* id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    struct stat ns;
    if (!std::getline(in, boot_id) || boot_id.empty() || stat("/proc/self/ns/pid", &ns) != 0) {
      return new std::string();
    }
    return new std::string(absl::StrCat(boot_id, "/pid-ns:", ns.st_dev, ":", ns.st_ino));
  }();
  return *id;
}

bool SameHostTransfersEnabledByDefault() {
  const char* env = std::getenv("SLUICE_SAME_HOST_RECV_TENSOR");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

absl::Status ReadFromSameHost(int64_t pid, uint64_t address, void* dst, uint64_t bytes) {
  char* out = static_cast<char*>(dst);
  uint64_t done = 0;
  while (done < bytes) {
    iovec local{out + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(address + done), bytes - done};
    const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    if (n > 0) {
      done += static_cast<uint64_t>(n);
      continue;
    }
    const int err = n == 0 ? EFAULT : errno;
    if (err == EINTR) continue;
    const std::string what = absl::StrCat("reading ", bytes, " bytes of process ", pid, " at byte ",
                                          done, ": ", std::strerror(err));
    switch (err) {
      case EPERM:
      case EACCES:
        return absl::PermissionDeniedError(what);
      case ENOSYS:
        return absl::UnimplementedError(what);
      case ESRCH:
        return absl::UnavailableError(what);
      case ENOMEM:
        return absl::ResourceExhaustedError(what);
      default:
        return absl::DataLossError(what);
    }
  }
  return absl::OkStatus();
}

namespace {

// Socket inodes listening on TCP `port` in this network namespace.
absl::flat_hash_set<uint64_t> ListeningInodes(int port) {
  absl::flat_hash_set<uint64_t> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // The header.
    while (std::getline(in, line)) {
      // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode"
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (f.size() < 10 || f[3] != "0A") continue;  // 0A: LISTEN.
      const size_t colon = f[1].rfind(':');
      int local_port = 0;
      uint64_t inode = 0;
      if (colon == absl::string_view::npos ||
          !absl::SimpleHexAtoi(f[1].substr(colon + 1), &local_port) || local_port != port ||
          !absl::SimpleAtoi(f[9], &inode) || inode == 0) {
        continue;
      }
      inodes.insert(inode);
    }
  }
  return inodes;
}

}  // namespace

absl::Status VerifySameHostListener(int64_t pid, const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port <= 0 || pid <= 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot tell who listens on '", address, "': not reading process ", pid));
  }
  const absl::flat_hash_set<uint64_t> inodes = ListeningInodes(port);
  const std::string fd_dir = absl::StrCat("/proc/", pid, "/fd");
  if (!inodes.empty()) {
    if (DIR* dir = opendir(fd_dir.c_str())) {
      bool found = false;
      while (dirent* e = readdir(dir)) {
        char target[64];
        const std::string link = absl::StrCat(fd_dir, "/", e->d_name);
        const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
        if (n <= 0) continue;
        absl::string_view t(target, static_cast<size_t>(n));
        uint64_t inode = 0;
        if (absl::ConsumePrefix(&t, "socket:[") && absl::ConsumeSuffix(&t, "]") &&
            absl::SimpleAtoi(t, &inode) && inodes.contains(inode)) {
          found = true;
          break;
        }
      }
      closedir(dir);
      if (found) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "process ", pid, " does not listen on ", address, ": not reading its memory"));
}

}  // namespace sluice
