#include "rpc/tensor_coding.h"

#include <grpcpp/grpcpp.h>

#include <unistd.h>

#include <numeric>

#include "absl/strings/str_cat.h"

#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"

namespace sluice {
namespace {

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_OK(buffer.Dump(&slices));
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer FromString(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n / 4, 4}));
  std::iota(t.flat<float>().begin(), t.flat<float>().end(), 0.5f);
  return t;
}

TEST(TensorCodingTest, LargeTensorIsSentFromItsOwnBufferAndParsesWithProtobuf) {
  RecvTensorResponse response;
  response.tensor = Iota(4096);  // 16 KiB: above kZeroCopyMinBytes.
  response.send_start_micros = 1234567;
  grpc::ByteBuffer wire = EncodeRecvTensorResponse(response);

  std::vector<grpc::Slice> slices;
  ASSERT_OK(wire.Dump(&slices));
  bool points_at_tensor = false;
  for (const auto& s : slices) {
    if (s.begin() == static_cast<const uint8_t*>(response.tensor.raw_data())) {
      points_at_tensor = s.size() == response.tensor.AllocatedBytes();
    }
  }
  EXPECT_TRUE(points_at_tensor) << "the tensor's bytes were copied";

  rpc::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.send_start_micros(), 1234567);
  EXPECT_FALSE(parsed.is_dead());
  EXPECT_EQ(parsed.tensor().dtype(), DT_FLOAT);
  ASSERT_EQ(parsed.tensor().tensor_shape().dim_size(), 2);
  EXPECT_EQ(parsed.tensor().tensor_shape().dim(0).size(), 1024);
  EXPECT_EQ(parsed.tensor().tensor_shape().dim(1).size(), 4);
  ASSERT_EQ(parsed.tensor().tensor_content().size(), response.tensor.AllocatedBytes());
  EXPECT_EQ(0, std::memcmp(parsed.tensor().tensor_content().data(), response.tensor.raw_data(),
                           response.tensor.AllocatedBytes()));
  // Same bytes as protobuf's own serializer writes.
  EXPECT_EQ(Flatten(wire), parsed.SerializeAsString());
}

TEST(TensorCodingTest, EncodingHoldsTheBuffer) {
  RecvTensorResponse response;
  response.tensor = Iota(8192);
  const std::string expected = std::string(static_cast<const char*>(response.tensor.raw_data()),
                                           response.tensor.AllocatedBytes());
  grpc::ByteBuffer wire = EncodeRecvTensorResponse(response);
  response = RecvTensorResponse();  // The last Tensor goes; the slice still refers to the bytes.
  rpc::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.tensor().tensor_content(), expected);
}

TEST(TensorCodingTest, RoundTrips) {
  std::vector<Tensor> tensors = {Iota(4096), Iota(8), Tensor::Scalar<int64_t>(-7),
                                 Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::Scalar<bool>(true)};
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.flat<tstring>()[0] = "hello";
  strings.flat<tstring>()[1] = std::string(5000, 'x');
  tensors.push_back(strings);
  for (const Tensor& t : tensors) {
    RecvTensorResponse response;
    response.tensor = t;
    response.is_dead = false;
    response.send_start_micros = 42;
    RecvTensorResponse back;
    ASSERT_TRUE(DecodeRecvTensorResponse(EncodeRecvTensorResponse(response), &back).ok())
        << t.DebugString();
    EXPECT_EQ(back.send_start_micros, 42);
    EXPECT_EQ(back.tensor.DebugString(100), t.DebugString(100));
    if (t.dtype() != DT_STRING && t.AllocatedBytes() > 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(back.tensor.raw_data()) % kTensorAlignment, 0u);
      EXPECT_EQ(0, std::memcmp(back.tensor.raw_data(), t.raw_data(), t.AllocatedBytes()));
    }
  }
}

TEST(TensorCodingTest, BoolBytesFromThePeerAreCanonical) {
  Tensor flags(DT_BOOL, TensorShape({3}));
  auto* bytes = static_cast<unsigned char*>(flags.raw_data());
  bytes[0] = 0, bytes[1] = 0x53, bytes[2] = 1;  // A peer's byte that is not a bool.
  RecvTensorResponse response;
  response.tensor = flags;
  RecvTensorResponse back;
  ASSERT_TRUE(DecodeRecvTensorResponse(EncodeRecvTensorResponse(response), &back).ok());
  const auto* got = static_cast<const unsigned char*>(back.tensor.raw_data());
  EXPECT_EQ(std::vector<int>(got, got + 3), std::vector<int>({0, 1, 1}));
}

TEST(TensorCodingTest, BigTensorsGoInChunks) {
  RecvTensorResponse response;
  response.tensor = Iota(4096);  // 16384 bytes: chunks of 5000, 5000, 5000 and 1384.
  response.send_start_micros = 5;
  RecvTensorDecoder decoder;
  int chunks = 0;
  while (!decoder.done()) {
    const uint64_t offset = decoder.received_bytes();
    grpc::ByteBuffer wire = EncodeRecvTensorResponse(response, offset, 5000);
    // Each chunk is a RecvTensorResponse to protobuf, its piece sent from the tensor's buffer.
    rpc::RecvTensorResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
    EXPECT_EQ(parsed.content_total_bytes(), 16384);
    EXPECT_EQ(parsed.content_offset(), static_cast<int64_t>(offset));
    EXPECT_EQ(parsed.tensor().tensor_content(),
              std::string(static_cast<const char*>(response.tensor.raw_data()) + offset,
                          std::min<uint64_t>(5000, 16384 - offset)));
    std::vector<grpc::Slice> slices;
    ASSERT_OK(wire.Dump(&slices));
    if (16384 - offset >= kZeroCopyMinBytes) {  // The last piece is small enough to copy.
      ASSERT_GE(slices.size(), 2u);
      EXPECT_EQ(slices[1].begin(), static_cast<const uint8_t*>(response.tensor.raw_data()) + offset);
    }
    absl::Status s = decoder.Add(wire);
    ASSERT_OK(s);
    ASSERT_LT(++chunks, 10);
  }
  EXPECT_EQ(chunks, 4);
  EXPECT_EQ(decoder.response().send_start_micros, 5);
  EXPECT_EQ(decoder.response().tensor.DebugString(100), response.tensor.DebugString(100));
  EXPECT_EQ(0, std::memcmp(decoder.response().tensor.raw_data(), response.tensor.raw_data(), 16384));
}

TEST(TensorCodingTest, ChunksMustComeInOrder) {
  RecvTensorResponse response;
  response.tensor = Iota(4096);
  RecvTensorResponse whole;
  absl::Status s = DecodeRecvTensorResponse(EncodeRecvTensorResponse(response, 0, 5000), &whole);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "a first chunk alone is not a tensor";
  RecvTensorDecoder decoder;
  ASSERT_OK(decoder.Add(EncodeRecvTensorResponse(response, 0, 5000)));
  s = decoder.Add(EncodeRecvTensorResponse(response, 10000, 5000));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("a chunk at byte 10000 where 5000 was expected"), std::string::npos) << s;
  RecvTensorDecoder fresh;
  EXPECT_FALSE(fresh.Add(EncodeRecvTensorResponse(response, 5000, 5000)).ok());
}

TEST(TensorCodingTest, DecodesWhatProtobufWrites) {
  // Typed values instead of tensor_content, fields in another order, an unknown field.
  rpc::RecvTensorResponse proto;
  proto.set_send_start_micros(9);
  proto.mutable_tensor()->set_dtype(DT_INT32);
  proto.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  proto.mutable_tensor()->add_int_val(5);
  proto.set_require_ack(true);
  RecvTensorResponse back;
  ASSERT_OK(DecodeRecvTensorResponse(FromString(proto.SerializeAsString()), &back));
  EXPECT_EQ(back.tensor.DebugString(), "Tensor<int32 [3]: 5 5 5>");
  EXPECT_EQ(back.send_start_micros, 9);
}

TEST(TensorCodingTest, RejectsGarbage) {
  RecvTensorResponse back;
  EXPECT_FALSE(DecodeRecvTensorResponse(FromString("\xff\xff\xff"), &back).ok());
  EXPECT_FALSE(DecodeRecvTensorResponse(FromString(""), &back).ok());
  // Truncated in the middle of tensor_content.
  RecvTensorResponse response;
  response.tensor = Iota(4096);
  std::string bytes = Flatten(EncodeRecvTensorResponse(response));
  absl::Status s = DecodeRecvTensorResponse(FromString(bytes.substr(0, bytes.size() - 10)), &back);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // Content that does not match the shape.
  rpc::RecvTensorResponse proto;
  proto.mutable_tensor()->set_dtype(DT_FLOAT);
  proto.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  proto.mutable_tensor()->set_tensor_content(std::string(8, '\0'));
  s = DecodeRecvTensorResponse(FromString(proto.SerializeAsString()), &back);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("needs 12 bytes but has 8"), std::string::npos) << s;
}

TEST(TensorCodingTest, SameHostAnswersNameTheBufferAndParseWithProtobuf) {
  RecvTensorResponse response;
  response.tensor = Iota(1 << 20);  // 4 MiB.
  response.send_start_micros = 77;
  grpc::ByteBuffer wire = EncodeSameHostAnswer(response, 31);
  rpc::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Flatten(wire)));
  EXPECT_EQ(parsed.content_total_bytes(), 4 << 20);
  EXPECT_EQ(parsed.same_host_source().pid(), getpid());
  EXPECT_EQ(parsed.same_host_source().address(), reinterpret_cast<uint64_t>(response.tensor.raw_data()));
  EXPECT_EQ(parsed.same_host_source().lease(), 31u);
  EXPECT_TRUE(parsed.tensor().tensor_content().empty());
  EXPECT_EQ(parsed.send_start_micros(), 77);

  RecvTensorDecoder decoder;
  ASSERT_OK(decoder.Add(wire));
  ASSERT_NE(decoder.same_host_source(), nullptr);
  EXPECT_EQ(decoder.same_host_source()->lease(), 31u);
  EXPECT_FALSE(decoder.done());
  Tensor& back = decoder.response().tensor;
  ASSERT_EQ(back.AllocatedBytes(), response.tensor.AllocatedBytes());
  EXPECT_EQ(back.shape().DebugString(), response.tensor.shape().DebugString());
  std::memcpy(back.raw_data(), response.tensor.raw_data(), back.AllocatedBytes());
  decoder.SetReceivedFromSameHost();
  EXPECT_TRUE(decoder.done());
  EXPECT_EQ(decoder.response().send_start_micros, 77);
  EXPECT_EQ(back.DebugString(100), response.tensor.DebugString(100));
  // A second answer after a same-host one is refused.
  EXPECT_FALSE(decoder.Add(wire).ok());
}

TEST(TensorCodingTest, RejectsMalformedSameHostAnswers) {
  rpc::RecvTensorResponse proto;
  proto.set_content_total_bytes(12);
  proto.mutable_same_host_source()->set_pid(1);
  proto.mutable_tensor()->set_dtype(DT_FLOAT);
  proto.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  // Protobuf writes `tensor` first, before the fields the decoder needs ahead of it.
  RecvTensorDecoder decoder;
  EXPECT_FALSE(decoder.Add(FromString(proto.SerializeAsString())).ok());
  // A size that does not match the shape: content_total_bytes (field 1001, first) of 1 GiB
  // for a tensor of 64 bytes.
  RecvTensorResponse response;
  response.tensor = Iota(16);
  const std::string bytes = Flatten(EncodeSameHostAnswer(response, 1));
  ASSERT_EQ(bytes.substr(0, 3), "\xc8\x3e\x40");
  RecvTensorDecoder sized;
  absl::Status s = sized.Add(FromString(absl::StrCat("\xc8\x3e\x80\x80\x80\x80\x04", bytes.substr(3))));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("needs 64 bytes but has 1073741824"), std::string::npos) << s;
}

}  // namespace
}  // namespace sluice
