#include "rpc/sealed_stream.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// At most this many side connections at once; more are closed at once (their receivers fall
// back to gRPC).
constexpr size_t kMaxConnections = 256;
// How long a new connection may take to send its token.
constexpr int kTokenTimeoutSeconds = 10;
// How long a write may wait for a receiver that stopped reading.
constexpr int kSendTimeoutSeconds = 120;

struct CipherCtx {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ~CipherCtx() { EVP_CIPHER_CTX_free(ctx); }
};

// The nonce of chunk `index`: 4 zero bytes and the index, big-endian. Each key seals one
// transfer, so (key, nonce) never repeats.
void Nonce(uint64_t index, unsigned char iv[12]) {
  std::memset(iv, 0, 12);
  for (int i = 0; i < 8; ++i) iv[11 - i] = static_cast<unsigned char>(index >> (8 * i));
}

void SetTimeout(int fd, int option, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

absl::Status WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t wrote = send(fd, data, n, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      return absl::UnavailableError(absl::StrCat("writing a sealed stream: ", std::strerror(errno)));
    }
    data += wrote;
    n -= static_cast<size_t>(wrote);
  }
  return absl::OkStatus();
}

// `at` and `total` are for the message.
absl::Status ReadAll(int fd, char* data, size_t n, uint64_t at, uint64_t total) {
  while (n > 0) {
    const ssize_t got = recv(fd, data, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return absl::DeadlineExceededError(
          absl::StrCat("the sender of a sealed stream went silent at byte ", at, " of ", total));
    }
    if (got <= 0) {
      return absl::UnavailableError(absl::StrCat("the sealed stream ended at byte ", at, " of ", total,
                                                 got < 0 ? absl::StrCat(": ", std::strerror(errno)) : ""));
    }
    data += got;
    n -= static_cast<size_t>(got);
    at += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

// The first socket to `host`:`port` (each of its addresses in turn) that `use` gets working:
// `use` connects, or binds and listens, and returns 0 or an errno. `what` names the failure.
absl::StatusOr<int> OpenSocket(const std::string& host, uint32_t port, bool passive,
                               const std::function<int(int fd, const addrinfo& a)>& use,
                               absl::string_view what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const char* node = passive && host.empty() ? nullptr : host.c_str();
  if (const int e = getaddrinfo(node, std::to_string(port).c_str(), &hints, &found); e != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(e)));
  }
  int fd = -1;
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (const int e = use(fd, *a); e != 0) {
      error = std::strerror(e);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(what, " ", host, ":", port, ": ", error));
  return fd;
}

absl::Status CryptoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat("AES-128-GCM failed ", what));
}

}  // namespace

bool SealedStreamsEnabledByDefault() {
  const char* env = std::getenv("SLUICE_SEALED_STREAMS");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

absl::StatusOr<SealedStreamKeys> NewSealedStreamKeys() {
  SealedStreamKeys keys;
  keys.token.resize(kSealedTokenBytes);
  keys.key.resize(kSealedKeyBytes);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(keys.token.data()), kSealedTokenBytes) != 1 ||
      RAND_bytes(reinterpret_cast<unsigned char*>(keys.key.data()), kSealedKeyBytes) != 1) {
    return absl::InternalError("no random bytes for a sealed stream's key");
  }
  return keys;
}

absl::Status WriteSealed(int fd, const std::string& key, const char* data, uint64_t bytes) {
  if (key.size() != kSealedKeyBytes) return absl::InvalidArgumentError("a sealed stream key of the wrong size");
  CipherCtx c;
  if (c.ctx == nullptr ||
      EVP_EncryptInit_ex(c.ctx, EVP_aes_128_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()), nullptr) != 1) {
    return CryptoError("to start");
  }
  std::vector<unsigned char> out(std::min(bytes, kSealedChunkBytes) + kSealedTagBytes);
  for (uint64_t offset = 0, index = 0; offset < bytes; offset += kSealedChunkBytes, ++index) {
    const int n = static_cast<int>(std::min(kSealedChunkBytes, bytes - offset));
    unsigned char iv[12];
    Nonce(index, iv);
    int len = 0, tail = 0;
    if (EVP_EncryptInit_ex(c.ctx, nullptr, nullptr, nullptr, iv) != 1 ||
        EVP_EncryptUpdate(c.ctx, out.data(), &len, reinterpret_cast<const unsigned char*>(data + offset), n) != 1 ||
        EVP_EncryptFinal_ex(c.ctx, out.data() + len, &tail) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, kSealedTagBytes, out.data() + n) != 1) {
      return CryptoError("sealing a chunk");
    }
    if (absl::Status s = WriteAll(fd, reinterpret_cast<const char*>(out.data()), n + kSealedTagBytes); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadSealed(int fd, const std::string& key, char* dst, uint64_t bytes) {
  if (key.size() != kSealedKeyBytes) return absl::InvalidArgumentError("a sealed stream key of the wrong size");
  CipherCtx c;
  if (c.ctx == nullptr ||
      EVP_DecryptInit_ex(c.ctx, EVP_aes_128_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()), nullptr) != 1) {
    return CryptoError("to start");
  }
  for (uint64_t offset = 0, index = 0; offset < bytes; offset += kSealedChunkBytes, ++index) {
    const int n = static_cast<int>(std::min(kSealedChunkBytes, bytes - offset));
    unsigned char* chunk = reinterpret_cast<unsigned char*>(dst + offset);
    unsigned char tag[kSealedTagBytes];
    if (absl::Status s = ReadAll(fd, dst + offset, n, offset, bytes); !s.ok()) return s;
    if (absl::Status s = ReadAll(fd, reinterpret_cast<char*>(tag), sizeof(tag), offset + n, bytes); !s.ok()) {
      return s;
    }
    unsigned char iv[12];
    Nonce(index, iv);
    int len = 0, tail = 0;
    // In place: the chunk was just written by the socket read and is still in cache.
    if (EVP_DecryptInit_ex(c.ctx, nullptr, nullptr, nullptr, iv) != 1 ||
        EVP_DecryptUpdate(c.ctx, chunk, &len, chunk, n) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, sizeof(tag), tag) != 1) {
      return CryptoError("opening a chunk");
    }
    if (EVP_DecryptFinal_ex(c.ctx, chunk + len, &tail) != 1) {
      std::memset(dst, 0, offset + n);  // Nothing of a forged stream stays behind.
      return absl::DataLossError(absl::StrCat("chunk ", index, " of a sealed stream of ", bytes,
                                              " bytes failed its authentication tag: changed on the "
                                              "way, or not from the sender that holds the key"));
    }
  }
  return absl::OkStatus();
}

absl::Status ReceiveSealed(const std::string& host, uint32_t port, const SealedStreamKeys& keys,
                           char* dst, uint64_t bytes, absl::Duration timeout,
                           const std::function<void(int fd, bool open)>& track) {
  absl::StatusOr<int> opened = OpenSocket(
      host, port, /*passive=*/false,
      [&](int fd, const addrinfo& a) {
        SetTimeout(fd, SO_SNDTIMEO, timeout);  // Bounds connect() too.
        SetTimeout(fd, SO_RCVTIMEO, timeout);
        return connect(fd, a.ai_addr, a.ai_addrlen) == 0 ? 0 : errno;
      },
      "cannot connect to the sealed stream port");
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  if (track) track(fd, true);
  absl::Status s = WriteAll(fd, keys.token.data(), keys.token.size());
  if (s.ok()) s = ReadSealed(fd, keys.key, dst, bytes);
  if (track) track(fd, false);
  close(fd);
  return s;
}

absl::StatusOr<std::unique_ptr<SealedStreamServer>> SealedStreamServer::Start(const std::string& host,
                                                                            Lookup lookup, Sent sent) {
  absl::StatusOr<int> opened = OpenSocket(
      host, 0, /*passive=*/true,
      [](int fd, const addrinfo& a) {
        return bind(fd, a.ai_addr, a.ai_addrlen) == 0 && listen(fd, 64) == 0 ? 0 : errno;
      },
      "cannot listen for sealed streams on");
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint32_t port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  std::unique_ptr<SealedStreamServer> server(new SealedStreamServer(fd, port, std::move(lookup), std::move(sent)));
  if (pipe2(server->wake_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

SealedStreamServer::SealedStreamServer(int listener, uint32_t port, Lookup lookup, Sent sent)
    : listener_(listener), port_(port), lookup_(std::move(lookup)), sent_(std::move(sent)) {}

SealedStreamServer::~SealedStreamServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (acceptor_.joinable()) {
    const char byte = 0;
    while (write(wake_[1], &byte, 1) < 0 && errno == EINTR) {
    }
    acceptor_.join();
  }
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [fd, thread] : connections_) shutdown(fd, SHUT_RDWR);  // Their threads end soon.
    mu_.Await(absl::Condition(+[](std::map<int, std::thread>* c) { return c->empty(); }, &connections_));
    done.swap(finished_);
  }
  for (std::thread& t : done) t.join();
  close(listener_);
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

void SealedStreamServer::AcceptLoop() {
  for (;;) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    std::vector<std::thread> done;
    {
      absl::MutexLock lock(&mu_);
      done.swap(finished_);
      if (fd >= 0 && (stopping_ || connections_.size() >= kMaxConnections)) {
        close(fd);
      } else if (fd >= 0) {
        connections_[fd] = std::thread([this, fd] { Serve(fd); });
      }
    }
    for (std::thread& t : done) t.join();
  }
}

void SealedStreamServer::Serve(int fd) {
  SetTimeout(fd, SO_RCVTIMEO, absl::Seconds(kTokenTimeoutSeconds));
  SetTimeout(fd, SO_SNDTIMEO, absl::Seconds(kSendTimeoutSeconds));
  std::string token(kSealedTokenBytes, '\0');
  SealedSource source;
  if (ReadAll(fd, token.data(), token.size(), 0, token.size()).ok() && lookup_(token, &source) &&
      WriteSealed(fd, source.key, source.data, source.bytes).ok()) {
    sent_(token);
  }
  source = SealedSource();  // Lets the tensor go before the thread is joined.
  absl::MutexLock lock(&mu_);
  auto it = connections_.find(fd);
  // Out of the map before the socket closes: its number may be reused at once.
  if (it != connections_.end()) {
    finished_.push_back(std::move(it->second));
    connections_.erase(it);
  }
  close(fd);
}

}  // namespace sluice
