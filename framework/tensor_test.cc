#include "framework/tensor.h"

#include <cmath>
#include <cstring>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// Distinct, exactly representable values for element i of each type.
template <typename T>
T ValueAt(int i) {
  if constexpr (std::is_same_v<T, tstring>) {
    return tstring(i, 'a' + i);
  } else if constexpr (std::is_same_v<T, bool>) {
    return i % 2 == 1;
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return T(i + 1, -i);
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || kIsFloat8<T>) {
    return T(static_cast<float>(i) - 2.5f);
  } else if constexpr (kIsInt4<T>) {
    return T(std::is_same_v<T, int4> ? i * 3 - 8 : i * 3);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(i) * T(0.25) - T(1);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(i * 3 - 7);
  } else {
    return static_cast<T>(i * 3 + 200);
  }
}

template <typename T>
bool Same(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || kIsFloat8<T>) {
    return a.bits == b.bits;
  } else if constexpr (kIsInt4<T>) {
    return a.value == b.value;
  } else {
    return a == b;
  }
}

constexpr DataType kAllTypes[] = {DT_FLOAT,  DT_DOUBLE, DT_INT32,     DT_UINT32,    DT_UINT16,
                                  DT_UINT8,  DT_INT16,  DT_INT8,      DT_STRING,    DT_COMPLEX64,
                                  DT_COMPLEX128, DT_INT64, DT_UINT64, DT_BOOL, DT_HALF,
                                  DT_BFLOAT16, DT_FLOAT8_E5M2, DT_FLOAT8_E4M3FN, DT_FLOAT8_E4M3FNUZ,
                                  DT_FLOAT8_E5M2FNUZ, DT_INT4, DT_UINT4};

class TensorProtoRoundTrip : public ::testing::TestWithParam<DataType> {};

TEST_P(TensorProtoRoundTrip, ContentAndTypedFieldsBothRoundTrip) {
  const DataType dt = GetParam();
  bool visited = VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor t(dt, TensorShape({2, 3}));
    auto v = t.flat<T>();
    for (int i = 0; i < 6; ++i) v[i] = ValueAt<T>(i);

    for (bool content : {true, false}) {
      TensorProto p;
      if (content) {
        t.AsProtoTensorContent(&p);
      } else {
        t.AsProtoField(&p);
        EXPECT_TRUE(p.tensor_content().empty());
      }
      // Through the wire, to prove the encoding is what protobuf parses.
      TensorProto parsed;
      ASSERT_TRUE(parsed.ParseFromString(p.SerializeAsString()));
      auto back = Tensor::FromProto(parsed);
      ASSERT_OK(back);
      EXPECT_EQ(back->dtype(), dt);
      EXPECT_EQ(back->shape(), TensorShape({2, 3}));
      auto b = back->flat<T>();
      for (int i = 0; i < 6; ++i) {
        EXPECT_TRUE(Same(b[i], ValueAt<T>(i))) << DataTypeString(dt) << " element " << i
                                               << (content ? " (content)" : " (field)");
      }
    }
  });
  EXPECT_TRUE(visited);
}

TEST_P(TensorProtoRoundTrip, OneValueFillsTheShape) {
  const DataType dt = GetParam();
  VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor one(dt, TensorShape({1}));
    one.flat<T>()[0] = ValueAt<T>(3);
    TensorProto p;
    one.AsProtoField(&p);
    TensorShape({2, 2}).AsProto(p.mutable_tensor_shape());
    auto filled = Tensor::FromProto(p);
    ASSERT_OK(filled);
    for (const T& x : filled->flat<T>()) EXPECT_TRUE(Same(x, ValueAt<T>(3)));
  });
}

INSTANTIATE_TEST_SUITE_P(AllTypes, TensorProtoRoundTrip, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return DataTypeString(info.param); });

// Bytes other than 0 and 1 are not bools (reading one is undefined behaviour; UBSan, the
// tensor_proto fuzzer): they arrive as true.
TEST(TensorTest, BoolTensorContentIsCanonical) {
  TensorProto p;
  p.set_dtype(DT_BOOL);
  p.mutable_tensor_shape()->add_dim()->set_size(4);
  p.set_tensor_content(std::string("\x00\x53\x01\xff", 4));
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto* bytes = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(std::vector<int>(bytes, bytes + 4), std::vector<int>({0, 1, 1, 1}));
  TensorProto fields;
  t->AsProtoField(&fields);
  ASSERT_EQ(fields.bool_val_size(), 4);
  EXPECT_FALSE(fields.bool_val(0));
  EXPECT_TRUE(fields.bool_val(1));
}

TEST(TensorTest, BufferIsAligned) {
  for (int n : {1, 3, 17, 1000}) {
    Tensor t(DT_FLOAT, TensorShape({n}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  }
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a(DT_INT32, TensorShape({4}));
  EXPECT_TRUE(a.RefCountIsOne());
  Tensor b = a;
  EXPECT_FALSE(a.RefCountIsOne());
  b.flat<int32_t>()[0] = 42;
  EXPECT_EQ(a.flat<int32_t>()[0], 42);
  Tensor c = a.DeepCopy();
  c.flat<int32_t>()[0] = 7;
  EXPECT_EQ(a.flat<int32_t>()[0], 42);
}

TEST(TensorTest, WrappedBufferIsReleasedOnce) {
  static int released = 0;
  float storage[4] = {1, 2, 3, 4};
  {
    Tensor t(DT_FLOAT, TensorShape({4}),
             TensorBuffer::Wrap(storage, sizeof(storage), [](void*, size_t) { ++released; }));
    Tensor copy = t;
    EXPECT_EQ(copy.flat<float>()[2], 3.0f);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, MalformedProtosAreRejected) {
  TensorProto short_content;
  short_content.set_dtype(DT_FLOAT);
  TensorShape({2, 2}).AsProto(short_content.mutable_tensor_shape());
  short_content.set_tensor_content(std::string(12, '\0'));
  auto s = Tensor::FromProto(short_content);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("needs 16 bytes"), std::string::npos) << s.status();

  TensorProto too_many;
  too_many.set_dtype(DT_INT32);
  too_many.mutable_tensor_shape()->add_dim()->set_size(2);
  for (int i = 0; i < 3; ++i) too_many.add_int_val(i);
  EXPECT_FALSE(Tensor::FromProto(too_many).ok());

  TensorProto negative;
  negative.set_dtype(DT_FLOAT);
  negative.mutable_tensor_shape()->add_dim()->set_size(-3);
  EXPECT_FALSE(Tensor::FromProto(negative).ok());

  TensorProto bad_type;
  bad_type.set_dtype(DT_RESOURCE);
  EXPECT_FALSE(Tensor::FromProto(bad_type).ok());
}

// One float_val filling 2^62 + 16 elements: the byte count wraps to 64 in 64 bits, and the
// fill loop then ran past a 64-byte buffer.
TEST(TensorTest, ProtoWhoseByteSizeOverflowsIsRefused) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size((int64_t{1} << 62) + 16);
  p.add_float_val(1.0f);
  auto t = Tensor::FromProto(p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();

  // Dims whose product overflows int64.
  TensorProto q;
  q.set_dtype(DT_FLOAT);
  for (int i = 0; i < 2; ++i) q.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  q.add_float_val(1.0f);
  EXPECT_EQ(Tensor::FromProto(q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorTest, HugeAllocationsFailCleanly) {
  EXPECT_EQ(TensorBuffer::Allocate(DT_FLOAT, (int64_t{1} << 62) + 16), nullptr);
  auto t = Tensor::Allocate(DT_FLOAT, TensorShape({int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  EXPECT_EQ(TensorShape({int64_t{1} << 40, int64_t{1} << 40}).num_elements(), INT64_MAX);
  EXPECT_EQ(TensorShape({int64_t{1} << 40, int64_t{1} << 40, 0}).num_elements(), 0);
  auto big = Tensor::Allocate(DT_FLOAT, TensorShape({int64_t{1} << 39}));
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted) << big.status();
  EXPECT_NE(big.status().message().find("[549755813888]"), std::string::npos) << big.status();
}

TEST(TensorTest, HalfAndBfloat16Conversions) {
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(-2.0f).bits, 0xc000);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(1e6f).bits, 0x7c00);             // Overflow to +inf.
  EXPECT_EQ(static_cast<float>(half::FromBits(0x0001)), std::ldexp(1.0f, -24));  // Subnormal.
  EXPECT_TRUE(std::isnan(static_cast<float>(half(NAN))));
  EXPECT_EQ(half(1.0f + 1.0f / 4096).bits, 0x3c00);  // Ties round to even.
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(bfloat16(3.0f)), 3.0f);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80);   // Half-way rounds to even.
}

TEST(TensorTest, ReshapeChecksElementCount) {
  Tensor t(DT_FLOAT, TensorShape({2, 3}));
  EXPECT_OK(t.Reshaped(TensorShape({3, 2})));
  EXPECT_FALSE(t.Reshaped(TensorShape({4})).ok());
}

// A freed big numeric buffer is handed out again for the next tensor of the same byte size
// (last freed first: the memory still in cache); other sizes and string tensors get their own.
TEST(TensorBufferCacheTest, BigBuffersAreReusedBySize) {
  if (TensorBuffer::ReusesFreedBuffers()) {
    const void* first;
    {
      Tensor a(DT_FLOAT, TensorShape({1 << 18}));  // 1 MiB.
      first = a.raw_data();
      a.flat<float>()[0] = 1;
    }
    Tensor b(DT_INT32, TensorShape({1 << 18}));  // The same bytes, another dtype.
    EXPECT_EQ(b.raw_data(), first);
    Tensor c(DT_FLOAT, TensorShape({1 << 18}));  // b holds that one: a different buffer.
    EXPECT_NE(c.raw_data(), first);
    Tensor d(DT_FLOAT, TensorShape({(1 << 18) + 1024}));
    EXPECT_NE(d.raw_data(), first);
    EXPECT_NE(d.raw_data(), c.raw_data());
  }
  // Whatever the cache does, values are the tensor's own.
  Tensor e(DT_FLOAT, TensorShape({1 << 16}));
  for (int i = 0; i < (1 << 16); ++i) e.flat<float>()[i] = static_cast<float>(i);
  EXPECT_EQ(e.flat<float>()[12345], 12345.0f);
}

}  // namespace
}  // namespace sluice
