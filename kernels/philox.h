// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3") as TensorFlow
// seeds and advances it, so a stateful TensorFlow random op given the same seed and seed2
// draws TensorFlow's stream: the key is seed's two 32-bit halves, counter words 2 and 3 are
// seed2's, and each call returns 4 words and steps the 128-bit counter by one.
#ifndef SLUICE_KERNELS_PHILOX_H_
#define SLUICE_KERNELS_PHILOX_H_

#include <array>
#include <cstdint>
#include <cstring>

namespace sluice {

class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;

  Philox4x32(uint64_t seed, uint64_t seed2) {
    key_ = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    counter_ = {0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)};
  }
  Philox4x32(const Block& counter, uint32_t k0, uint32_t k1) : counter_(counter), key_{k0, k1} {}

  // The block for the current counter; then the counter moves on by one.
  Block Next() {
    Block c = counter_;
    std::array<uint32_t, 2> k = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
      }
      const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    }
    Skip(1);
    return c;
  }

  // Moves the 128-bit counter on by `blocks`.
  void Skip(uint64_t blocks) {
    const uint32_t lo = static_cast<uint32_t>(blocks);
    uint32_t hi = static_cast<uint32_t>(blocks >> 32);
    counter_[0] += lo;
    if (counter_[0] < lo) ++hi;
    counter_[1] += hi;
    if (counter_[1] < hi && ++counter_[2] == 0) ++counter_[3];
  }

 private:
  Block counter_;
  std::array<uint32_t, 2> key_;
};

// Single 32-bit words out of a Philox4x32, in block order.
class PhiloxWords {
 public:
  explicit PhiloxWords(Philox4x32 gen) : gen_(gen) {}
  uint32_t Next() {
    if (used_ == 4) {
      block_ = gen_.Next();
      used_ = 0;
    }
    return block_[used_++];
  }
  // A double in [0, 1) from 52 bits of two words, as TensorFlow's SimplePhilox::RandDouble.
  double NextDouble() {
    const uint32_t hi = Next(), lo = Next();
    const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{hi & 0xfffffu} << 32) | lo;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d - 1.0;
  }

 private:
  Philox4x32 gen_;
  Philox4x32::Block block_{};
  int used_ = 4;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_PHILOX_H_
