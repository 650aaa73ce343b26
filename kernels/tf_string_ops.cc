// TensorFlow's string ops: StringToHashBucketStrong (SipHash-2-4, Aumasson and Bernstein, of
// each string under a 128-bit key, modulo the number of buckets), StringToHashBucketFast
// (FarmHash's 64-bit fingerprint, Pike and Alakuijala, modulo the number of buckets; the
// buckets must match TensorFlow's, so the fingerprint is computed exactly as FarmHash
// specifies) and AsString.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <utility>

#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1; v1 = Rotl(v1, 13); v1 ^= v0; v0 = Rotl(v0, 32);
    v2 += v3; v3 = Rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = Rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = Rotl(v1, 17); v1 ^= v2; v2 = Rotl(v2, 32);
  }
  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

uint64_t SipHash24(uint64_t k0, uint64_t k1, absl::string_view data) {
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  const size_t n = data.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= uint64_t{static_cast<uint8_t>(data[i + b])} << (8 * b);  // Little-endian.
    s.Absorb(m);
  }
  uint64_t last = uint64_t{n & 0xff} << 56;
  for (size_t b = 0; i + b < n; ++b) last |= uint64_t{static_cast<uint8_t>(data[i + b])} << (8 * b);
  s.Absorb(last);
  s.v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

class StringToHashBucketStrongOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("num_buckets", &num_buckets_));
    std::vector<int64_t> key;
    SL_RETURN_IF_ERROR(ctx->GetAttr("key", &key));
    if (key.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("StringToHashBucketStrong: key must have 2 elements, got ", key.size()));
    }
    if (num_buckets_ < 1) return absl::InvalidArgumentError("StringToHashBucketStrong: num_buckets must be >= 1");
    k0_ = static_cast<uint64_t>(key[0]);
    k1_ = static_cast<uint64_t>(key[1]);
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    const auto s = in.flat<tstring>();
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      o[i] = static_cast<int64_t>(SipHash24(k0_, k1_, absl::string_view(s[i])) % static_cast<uint64_t>(num_buckets_));
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_buckets_ = 1;
  uint64_t k0_ = 0, k1_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("StringToHashBucketStrong").Device(DEVICE_CPU), StringToHashBucketStrongOp);

// ---- FarmHash Fingerprint64 (its "na" 64-bit hash with the seedless entry point) ----
namespace farm {

constexpr uint64_t k0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t k1 = 0xb492b66be98f3d0fULL;
constexpr uint64_t k2 = 0x9ae16a3b2f90404fULL;

inline uint64_t Fetch64(const char* p) {
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= uint64_t{static_cast<uint8_t>(p[b])} << (8 * b);
  return v;
}
inline uint32_t Fetch32(const char* p) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= uint32_t{static_cast<uint8_t>(p[b])} << (8 * b);
  return v;
}
inline uint64_t Rotr(uint64_t v, int shift) { return shift == 0 ? v : (v >> shift) | (v << (64 - shift)); }
inline uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

inline uint64_t HashLen16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t HashLen0to16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = k2 + len * 2;
    const uint64_t a = Fetch64(s) + k2;
    const uint64_t b = Fetch64(s + len - 8);
    const uint64_t c = Rotr(b, 37) * mul + a;
    const uint64_t d = (Rotr(a, 25) + b) * mul;
    return HashLen16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = k2 + len * 2;
    const uint64_t a = Fetch32(s);
    return HashLen16(len + (a << 3), Fetch32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t a = static_cast<uint8_t>(s[0]);
    const uint8_t b = static_cast<uint8_t>(s[len >> 1]);
    const uint8_t c = static_cast<uint8_t>(s[len - 1]);
    const uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(c) << 2);
    return ShiftMix(y * k2 ^ z * k0) * k2;
  }
  return k2;
}

uint64_t HashLen17to32(const char* s, size_t len) {
  const uint64_t mul = k2 + len * 2;
  const uint64_t a = Fetch64(s) * k1;
  const uint64_t b = Fetch64(s + 8);
  const uint64_t c = Fetch64(s + len - 8) * mul;
  const uint64_t d = Fetch64(s + len - 16) * k2;
  return HashLen16(Rotr(a + b, 43) + Rotr(c, 30) + d, a + Rotr(b + k2, 18) + c, mul);
}

uint64_t HashLen33to64(const char* s, size_t len) {
  const uint64_t mul = k2 + len * 2;
  const uint64_t a = Fetch64(s) * k2;
  const uint64_t b = Fetch64(s + 8);
  const uint64_t c = Fetch64(s + len - 8) * mul;
  const uint64_t d = Fetch64(s + len - 16) * k2;
  const uint64_t y = Rotr(a + b, 43) + Rotr(c, 30) + d;
  const uint64_t z = HashLen16(y, a + Rotr(b + k2, 18) + c, mul);
  const uint64_t e = Fetch64(s + 16) * mul;
  const uint64_t f = Fetch64(s + 24);
  const uint64_t g = (y + Fetch64(s + len - 32)) * mul;
  const uint64_t h = (z + Fetch64(s + len - 24)) * mul;
  return HashLen16(Rotr(e + f, 43) + Rotr(g, 30) + h, e + Rotr(f + a, 18) + g, mul);
}

std::pair<uint64_t, uint64_t> WeakHashLen32WithSeeds(const char* s, uint64_t a, uint64_t b) {
  const uint64_t w = Fetch64(s), x = Fetch64(s + 8), y = Fetch64(s + 16), z = Fetch64(s + 24);
  a += w;
  b = Rotr(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += Rotr(a, 44);
  return {a + z, b + c};
}

uint64_t Fingerprint64(absl::string_view str) {
  const char* s = str.data();
  const size_t len = str.size();
  if (len <= 16) return HashLen0to16(s, len);
  if (len <= 32) return HashLen17to32(s, len);
  if (len <= 64) return HashLen33to64(s, len);
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed;
  uint64_t y = kSeed * k1 + 113;
  uint64_t z = ShiftMix(y * k2 + 113) * k2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  x = x * k2 + Fetch64(s);
  const char* end = s + ((len - 1) / 64) * 64;
  const char* last64 = end + ((len - 1) & 63) - 63;
  do {
    x = Rotr(x + y + v.first + Fetch64(s + 8), 37) * k1;
    y = Rotr(y + v.second + Fetch64(s + 48), 42) * k1;
    x ^= w.second;
    y += v.first + Fetch64(s + 40);
    z = Rotr(z + w.first, 33) * k1;
    v = WeakHashLen32WithSeeds(s, v.second * k1, x + w.first);
    w = WeakHashLen32WithSeeds(s + 32, z + w.second, y + Fetch64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = k1 + ((z & 0xff) << 1);
  s = last64;
  w.first += ((len - 1) & 63);
  v.first += w.first;
  w.first += v.first;
  x = Rotr(x + y + v.first + Fetch64(s + 8), 37) * mul;
  y = Rotr(y + v.second + Fetch64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + Fetch64(s + 40);
  z = Rotr(z + w.first, 33) * mul;
  v = WeakHashLen32WithSeeds(s, v.second * mul, x + w.first);
  w = WeakHashLen32WithSeeds(s + 32, z + w.second, y + Fetch64(s + 16));
  std::swap(z, x);
  return HashLen16(HashLen16(v.first, w.first, mul) + ShiftMix(y) * k0 + z,
                   HashLen16(v.second, w.second, mul) + x, mul);
}

}  // namespace farm

class StringToHashBucketFastOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("num_buckets", &num_buckets_));
    if (num_buckets_ < 1) return absl::InvalidArgumentError("StringToHashBucketFast: num_buckets must be >= 1");
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    const auto s = in.flat<tstring>();
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      o[i] = static_cast<int64_t>(farm::Fingerprint64(s[i]) % static_cast<uint64_t>(num_buckets_));
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_buckets_ = 1;
};

// AsString: each number (or bool) as text, with printf's conversions: integers in decimal,
// floats with %f, %e (scientific) or %g (shortest) at `precision`, padded to `width` with
// `fill` (one of ' ', '0', or none).
class AsStringOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t precision, width;
    bool scientific, shortest;
    std::string fill;
    SL_RETURN_IF_ERROR(ctx->GetAttr("precision", &precision));
    SL_RETURN_IF_ERROR(ctx->GetAttr("scientific", &scientific));
    SL_RETURN_IF_ERROR(ctx->GetAttr("shortest", &shortest));
    SL_RETURN_IF_ERROR(ctx->GetAttr("width", &width));
    SL_RETURN_IF_ERROR(ctx->GetAttr("fill", &fill));
    if (scientific && shortest) return absl::InvalidArgumentError("AsString: scientific and shortest are exclusive");
    if (fill.size() > 1) return absl::InvalidArgumentError("AsString: fill must be at most one character");
    if (!fill.empty() && fill != " " && fill != "0" && fill != "-" && fill != "+" && fill != "#") {
      return absl::InvalidArgumentError(absl::StrCat("AsString: fill '", fill, "' is not a printf flag"));
    }
    if (precision > 1000 || width > 1000) return absl::InvalidArgumentError("AsString: precision and width must be at most 1000");
    std::string spec = "%" + fill;
    if (width > -1) absl::StrAppend(&spec, width);
    float_format_ = spec;
    if (precision > -1) absl::StrAppend(&float_format_, ".", precision);
    float_format_ += scientific ? "e" : shortest ? "g" : "f";
    int_format_ = spec + "lld";
    uint_format_ = spec + "llu";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    auto o = out->flat<tstring>();
    absl::Status status = absl::InvalidArgumentError(
        absl::StrCat("AsString does not support ", DataTypeString(in.dtype())));
    VisitDataType(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        const bool* p = in.data<bool>();
        for (int64_t i = 0; i < in.NumElements(); ++i) o[i] = p[i] ? "true" : "false";
        status = absl::OkStatus();
      } else if constexpr (std::is_integral_v<T>) {
        const T* p = in.data<T>();
        for (int64_t i = 0; i < in.NumElements(); ++i) {
          o[i] = std::is_signed_v<T> ? Format(int_format_, static_cast<long long>(p[i]))
                                     : Format(uint_format_, static_cast<unsigned long long>(p[i]));
        }
        status = absl::OkStatus();
      } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        const T* p = in.data<T>();
        for (int64_t i = 0; i < in.NumElements(); ++i) o[i] = Format(float_format_, static_cast<double>(p[i]));
        status = absl::OkStatus();
      }
    });
    return status;
  }

 private:
  template <typename V>
  static std::string Format(const std::string& format, V value) {
    char buf[2100];  // Width and precision are at most 1000 each.
    int n = std::snprintf(buf, sizeof(buf), format.c_str(), value);
    return std::string(buf, n < 0 ? 0 : std::min<size_t>(n, sizeof(buf) - 1));
  }

  std::string float_format_, int_format_, uint_format_;
};

// StringJoin(inputs...): element-wise joins with `separator`; scalar inputs broadcast, the
// others must share one shape.
class StringJoinOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("separator", &separator_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor* shaped = nullptr;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) continue;
      if (shaped != nullptr && t.shape() != shaped->shape()) {
        return absl::InvalidArgumentError(absl::StrCat("StringJoin: input ", i, " has shape ", t.shape().DebugString(),
                                                       ", which is neither a scalar nor the other inputs' ",
                                                       shaped->shape().DebugString()));
      }
      shaped = &t;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shaped != nullptr ? shaped->shape() : TensorShape(), &out));
    tstring* o = out->data<tstring>();
    for (int64_t e = 0; e < out->NumElements(); ++e) {
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        if (i > 0) o[e] += separator_;
        o[e] += t.data<tstring>()[t.dims() == 0 ? 0 : e];
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string separator_;
};

REGISTER_KERNEL_BUILDER(Name("StringToHashBucketFast").Device(DEVICE_CPU), StringToHashBucketFastOp);
REGISTER_KERNEL_BUILDER(Name("StringJoin").Device(DEVICE_CPU), StringJoinOp);
REGISTER_KERNEL_BUILDER(Name("AsString").Device(DEVICE_CPU), AsStringOp);

}  // namespace
}  // namespace sluice
