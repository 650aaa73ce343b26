// Sealed streams: what the receiver gets is what the sender holds, for sizes around the chunk
// size; a wrong key or a changed byte is DATA_LOSS, never silent garbage; an unknown token
// gets nothing; and what crosses the socket holds no run of the plaintext.
#include "rpc/sealed_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

// A server holding one transfer per token.
struct Fixture {
  absl::Mutex mu;
  std::map<std::string, std::pair<std::string, std::shared_ptr<std::string>>> transfers;  // key, bytes
  std::vector<std::string> sent;
  std::unique_ptr<SealedStreamServer> server;

  Fixture() {
    auto s = SealedStreamServer::Start(
        "127.0.0.1",
        [this](const std::string& token, SealedSource* source) {
          absl::MutexLock lock(&mu);
          auto it = transfers.find(token);
          if (it == transfers.end()) return false;
          source->key = it->second.first;
          source->data = it->second.second->data();
          source->bytes = it->second.second->size();
          source->hold = it->second.second;
          return true;
        },
        [this](const std::string& token) {
          absl::MutexLock lock(&mu);
          sent.push_back(token);
        });
    EXPECT_OK(s.status());
    server = *std::move(s);
  }
  SealedStreamKeys Offer(const std::string& bytes) {
    SealedStreamKeys keys = *NewSealedStreamKeys();
    absl::MutexLock lock(&mu);
    transfers[keys.token] = {keys.key, std::make_shared<std::string>(bytes)};
    return keys;
  }
};

TEST(SealedStreamTest, TheReceiverGetsTheSendersBytes) {
  Fixture f;
  for (size_t n : {size_t{1}, size_t{1000}, size_t(kSealedChunkBytes) - 1, size_t(kSealedChunkBytes),
                   size_t(kSealedChunkBytes) + 1, size_t(3 * kSealedChunkBytes + 17), size_t{5} << 20}) {
    const std::string bytes = RandomBytes(n, static_cast<uint32_t>(n));
    SealedStreamKeys keys = f.Offer(bytes);
    std::string got(n, '\0');
    ASSERT_OK(ReceiveSealed("127.0.0.1", f.server->port(), keys, got.data(), n, absl::Seconds(10)));
    EXPECT_EQ(got, bytes) << n << " bytes";
  }
  absl::MutexLock lock(&f.mu);
  EXPECT_EQ(f.sent.size(), 7u);
}

TEST(SealedStreamTest, AWrongKeyIsDataLossAndAnUnknownTokenGetsNothing) {
  Fixture f;
  const std::string bytes = RandomBytes(3 * kSealedChunkBytes, 7);
  SealedStreamKeys keys = f.Offer(bytes);
  SealedStreamKeys wrong = keys;
  wrong.key[0] ^= 1;
  std::string got(bytes.size(), '\0');
  absl::Status s = ReceiveSealed("127.0.0.1", f.server->port(), wrong, got.data(), got.size(), absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("authentication tag"));
  EXPECT_EQ(got.find(bytes.substr(0, 64)), std::string::npos);  // Nothing of it kept.

  SealedStreamKeys unknown = *NewSealedStreamKeys();
  s = ReceiveSealed("127.0.0.1", f.server->port(), unknown, got.data(), got.size(), absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("ended at byte 0"));
}

// Seals into a socket pair, flips one byte of what crossed, and opens it.
TEST(SealedStreamTest, AChangedByteFailsItsChunkAndTheWireHoldsNoPlaintext) {
  const std::string bytes = RandomBytes(2 * kSealedChunkBytes + 100, 11);
  const SealedStreamKeys keys = *NewSealedStreamKeys();
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  std::string wire;
  std::thread writer([&] { EXPECT_OK(WriteSealed(pair[0], keys.key, bytes.data(), bytes.size())); close(pair[0]); });
  char buffer[65536];
  ssize_t n;
  while ((n = read(pair[1], buffer, sizeof(buffer))) > 0) wire.append(buffer, n);
  writer.join();
  close(pair[1]);
  ASSERT_EQ(wire.size(), bytes.size() + 3 * kSealedTagBytes);
  for (size_t i = 0; i + 64 <= bytes.size(); i += 4096) {
    EXPECT_EQ(wire.find(bytes.substr(i, 64)), std::string::npos) << i;
  }
  auto open = [&](const std::string& w) {
    int p[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
    // The reader may stop at a bad chunk: the rest of the write then fails, as it should.
    std::thread feed([&] {
      send(p[0], w.data(), w.size(), MSG_NOSIGNAL);
      close(p[0]);
    });
    std::string got(bytes.size(), '\0');
    absl::Status s = ReadSealed(p[1], keys.key, got.data(), got.size());
    close(p[1]);
    feed.join();
    if (s.ok() && got != bytes) return absl::InternalError("opened to other bytes");
    return s;
  };
  EXPECT_OK(open(wire));
  for (size_t at : {size_t{0}, size_t(kSealedChunkBytes) + 5, wire.size() - 1}) {
    std::string changed = wire;
    changed[at] ^= 0x20;
    EXPECT_EQ(open(changed).code(), absl::StatusCode::kDataLoss) << "byte " << at;
  }
  // Chunks swapped: each fails its nonce.
  std::string swapped = wire.substr(kSealedChunkBytes + kSealedTagBytes, kSealedChunkBytes + kSealedTagBytes) +
                        wire.substr(0, kSealedChunkBytes + kSealedTagBytes) +
                        wire.substr(2 * (kSealedChunkBytes + kSealedTagBytes));
  EXPECT_EQ(open(swapped).code(), absl::StatusCode::kDataLoss);
  // Cut short: UNAVAILABLE, not a short tensor.
  EXPECT_EQ(open(wire.substr(0, wire.size() - 1)).code(), absl::StatusCode::kUnavailable);
}

TEST(SealedStreamTest, TheServerStopsWithConnectionsOpen) {
  auto f = std::make_unique<Fixture>();
  // A client that connects and never sends its token, and one that never reads.
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(f->server->port());
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    idle.push_back(fd);
  }
  SealedStreamKeys keys = f->Offer(RandomBytes(64 << 20, 3));
  ASSERT_EQ(write(idle[2], keys.token.data(), keys.token.size()), 16);
  absl::SleepFor(absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  f.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (int fd : idle) close(fd);
}

TEST(SealedStreamTest, ConnectingToNothingIsUnavailable) {
  uint32_t port;
  {
    Fixture f;
    port = f.server->port();
  }
  std::string got(10, '\0');
  absl::Status s = ReceiveSealed("127.0.0.1", port, *NewSealedStreamKeys(), got.data(), got.size(), absl::Seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
}

}  // namespace
}  // namespace sluice
