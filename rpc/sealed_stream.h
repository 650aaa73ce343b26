// Big tensors between the tasks of a TLS cluster travel on a side TCP connection, sealed with
// AES-128-GCM under a fresh key per transfer, instead of inside gRPC's TLS frames: gRPC's TLS
// path copies and encrypts every 8 KiB through memory BIOs and fresh buffers, and moves a third
// of what plaintext gRPC does; this path costs the encryption and little else.
//
// The sender answers a RecvTensor call (over TLS, from a peer whose certificate it verified)
// with a token, a key and the port of its SealedStreamServer, all inside the TLS-protected
// answer. The receiver connects to that port on the task's host, sends the token, and reads the
// tensor as sealed chunks, each AES-128-GCM with the chunk's index as nonce and a 16-byte tag,
// decrypting each in place in the tensor's buffer while it is in cache. Whoever reads or
// changes the side connection sees ciphertext or breaks a tag (DATA_LOSS); whoever answers on
// the port without the sender's key can only send what fails its tag. The token only says which
// transfer: the key never crosses the side connection.
//
//   SealedStreamServer server("10.0.0.2", lookup, done);          // sender
//   SealedStreamKeys keys = NewSealedStreamKeys();                // per transfer, sent over TLS
//   ReceiveSealed("10.0.0.2", server.port(), keys, dst, bytes);   // receiver
#ifndef SLUICE_RPC_SEALED_STREAM_H_
#define SLUICE_RPC_SEALED_STREAM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice {

// Tensors smaller than this go inside the gRPC answer: the side connection costs a TCP
// handshake and a thread.
inline constexpr uint64_t kSealedStreamMinBytes = uint64_t{1} << 20;
// Sealed chunk size: small enough to stay in L2 between the socket read and the decryption.
inline constexpr uint64_t kSealedChunkBytes = uint64_t{256} << 10;
inline constexpr size_t kSealedTokenBytes = 16, kSealedKeyBytes = 16, kSealedTagBytes = 16;

// Yes, except where the environment sets SLUICE_SEALED_STREAMS=0.
bool SealedStreamsEnabledByDefault();

struct SealedStreamKeys {
  std::string token;  // Names the transfer; sent on the side connection.
  std::string key;    // AES-128 key; only ever inside a TLS answer.
};
// Fresh random ones.
absl::StatusOr<SealedStreamKeys> NewSealedStreamKeys();

// Seals `bytes` from `data` chunk by chunk and writes them to the socket `fd`.
absl::Status WriteSealed(int fd, const std::string& key, const char* data, uint64_t bytes);
// Reads a sealed stream of `bytes` from `fd` into `dst`, opening each chunk in place;
// DATA_LOSS when a chunk fails its tag, UNAVAILABLE when the stream ends early.
absl::Status ReadSealed(int fd, const std::string& key, char* dst, uint64_t bytes);

// Connects to `host`:`port`, asks for the transfer of `keys.token` and reads it into `dst`.
// `track` is called with (socket, true) once connected, so that another thread may shut it
// down (an aborted step), and with (socket, false) just before it is closed. `timeout` bounds
// the connect and each wait for bytes.
absl::Status ReceiveSealed(const std::string& host, uint32_t port, const SealedStreamKeys& keys,
                           char* dst, uint64_t bytes, absl::Duration timeout,
                           const std::function<void(int fd, bool open)>& track = nullptr);

// What a sender hands out: the bytes of one transfer, kept alive by `hold` while streaming.
struct SealedSource {
  std::string key;
  const char* data = nullptr;
  uint64_t bytes = 0;
  std::shared_ptr<const void> hold;
};

// Listens on `host` (port 0: a free port) and streams the transfer each connection's token
// names. Each connection gets a thread; the destructor shuts every connection down and waits.
class SealedStreamServer {
 public:
  // Finds a token's transfer (false: unknown, and the connection is closed).
  using Lookup = std::function<bool(const std::string& token, SealedSource* source)>;
  // After a transfer's last byte went out.
  using Sent = std::function<void(const std::string& token)>;

  static absl::StatusOr<std::unique_ptr<SealedStreamServer>> Start(const std::string& host, Lookup lookup,
                                                                  Sent sent);
  ~SealedStreamServer();

  uint32_t port() const { return port_; }

 private:
  SealedStreamServer(int listener, uint32_t port, Lookup lookup, Sent sent);
  void AcceptLoop();
  void Serve(int fd);

  const int listener_;
  const uint32_t port_;
  const Lookup lookup_;
  const Sent sent_;
  int wake_[2] = {-1, -1};  // A pipe: written once to stop the accept loop.
  std::thread acceptor_;
  absl::Mutex mu_;
  std::map<int, std::thread> connections_ ABSL_GUARDED_BY(mu_);  // By socket.
  std::vector<std::thread> finished_ ABSL_GUARDED_BY(mu_);       // To join.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sluice

#endif  // SLUICE_RPC_SEALED_STREAM_H_
