#include "rpc/same_host_transfer.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

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

// Adds the inodes of the TCP sockets of `family` listening on `port` to `inodes`, asking the
// kernel through sock_diag, which walks only its table of listeners. False when netlink is
// not there or answers with an error.
bool ListenersFromSockDiag(int family, int port, absl::flat_hash_set<uint64_t>* inodes) {
  const int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return false;
  timeval wait{1, 0};  // The kernel answers at once; never wait on it for long.
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask{};
  ask.header.nlmsg_len = sizeof(ask);
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  ask.request.sdiag_family = static_cast<uint8_t>(family);
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = 1u << TCP_LISTEN;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  bool ok = sendto(fd, &ask, sizeof(ask), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) ==
            static_cast<ssize_t>(sizeof(ask));
  alignas(nlmsghdr) char buffer[16384];
  for (bool done = !ok; !done;) {
    sockaddr_nl from{};
    socklen_t from_len = sizeof(from);
    const ssize_t got = recvfrom(fd, buffer, sizeof(buffer), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (got < 0 && errno == EINTR) continue;
    // Only the kernel's answer counts (a privileged process could send to this socket).
    if (got <= 0 || from_len != sizeof(from) || from.nl_pid != 0) {
      ok = false;
      break;
    }
    int left = static_cast<int>(got);
    for (const nlmsghdr* h = reinterpret_cast<const nlmsghdr*>(buffer); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) {
        done = true;
        break;
      }
      if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        ok = false;
        done = true;
        break;
      }
      const auto* m = reinterpret_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (m->idiag_state == TCP_LISTEN && ntohs(m->id.idiag_sport) == port && m->idiag_inode != 0) {
        inodes->insert(m->idiag_inode);
      }
    }
  }
  close(fd);
  return ok;
}

// Socket inodes listening on TCP `port` in this network namespace.
absl::flat_hash_set<uint64_t> ListeningInodes(int port) {
  absl::flat_hash_set<uint64_t> inodes;
  if (ListenersFromSockDiag(AF_INET, port, &inodes) && ListenersFromSockDiag(AF_INET6, port, &inodes)) {
    return inodes;
  }
  // No sock_diag: /proc/net/tcp, which walks every socket of the namespace (and, on newer
  // kernels, every bucket of the kernel's table: milliseconds a read).
  inodes.clear();
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

namespace {

// When process `pid` started (field 22 of /proc/PID/stat, in clock ticks since boot): with the
// pid, it names one process for the machine's uptime. 0 when unreadable.
uint64_t ProcessStartTime(int64_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return 0;
  const size_t paren = line.rfind(')');  // The name before it may hold spaces and parentheses.
  if (paren == std::string::npos) return 0;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::string_view(line).substr(paren + 1), ' ', absl::SkipEmpty());
  uint64_t start = 0;
  // f[0] is field 3 (the state), so field 22 is f[19].
  if (f.size() < 20 || !absl::SimpleAtoi(f[19], &start)) return 0;
  return start;
}

// Listeners verified lately, by (pid, address): their process's start time and when.
struct VerifiedListeners {
  absl::Mutex mu;
  absl::flat_hash_map<std::pair<int64_t, std::string>, std::pair<uint64_t, absl::Time>> entries
      ABSL_GUARDED_BY(mu);
};

VerifiedListeners& Verified() {
  static auto* verified = new VerifiedListeners();
  return *verified;
}

}  // namespace

absl::Status VerifySameHostListener(int64_t pid, const std::string& address) {
  // Each check lists the listeners and reads the process's open files: at one check per
  // transfer, thousands a second in an all-reduce, that adds up. A verdict is kept for 250 ms,
  // and only for the very process (its start time) that was seen listening. Within that time, a
  // process that took over the address from a still living one could make a receiver read the
  // living one's memory: the window is short.
  constexpr absl::Duration kKeptFor = absl::Milliseconds(250);
  const uint64_t start = ProcessStartTime(pid);
  const absl::Time now = absl::Now();
  VerifiedListeners& verified = Verified();
  const std::pair<int64_t, std::string> key(pid, address);
  if (start != 0) {
    absl::MutexLock lock(&verified.mu);
    auto it = verified.entries.find(key);
    if (it != verified.entries.end() && it->second.first == start && now - it->second.second < kKeptFor) {
      return absl::OkStatus();
    }
  }
  absl::Status s = VerifySameHostListenerNow(pid, address);
  if (s.ok() && start != 0 && ProcessStartTime(pid) == start) {
    absl::MutexLock lock(&verified.mu);
    if (verified.entries.size() >= 1024) verified.entries.clear();
    verified.entries[key] = {start, now};
  }
  return s;
}

absl::Status VerifySameHostListenerNow(int64_t pid, const std::string& address) {
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
