#include "frontend/onnx/onnx_tensor.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(OnnxTensorTest, RawDataRoundTripsEveryType) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                      DT_INT64, DT_UINT32, DT_UINT64, DT_BOOL, DT_HALF, DT_BFLOAT16,
                      DT_COMPLEX64, DT_COMPLEX128, DT_STRING}) {
    Tensor t(dt, TensorShape({2, 2}));
    if (dt == DT_STRING) {
      for (int i = 0; i < 4; ++i) t.flat<tstring>()[i] = std::string(i, 'x');
    } else {
      auto* bytes = static_cast<unsigned char*>(t.raw_data());
      for (size_t i = 0; i < t.AllocatedBytes(); ++i) bytes[i] = static_cast<unsigned char>(i % 2);
    }
    onnx::TensorProto p;
    ASSERT_OK(TensorToOnnx(t, "t", &p)) << DataTypeString(dt);
    onnx::TensorProto parsed;
    ASSERT_TRUE(parsed.ParseFromString(p.SerializeAsString()));
    auto back = TensorFromOnnx(parsed);
    ASSERT_OK(back);
    EXPECT_EQ(back->dtype(), dt);
    EXPECT_EQ(back->shape(), TensorShape({2, 2}));
    if (dt == DT_STRING) {
      EXPECT_EQ(back->flat<tstring>()[3], "xxx");
    } else {
      EXPECT_EQ(0, memcmp(back->raw_data(), t.raw_data(), t.AllocatedBytes())) << DataTypeString(dt);
    }
  }
}

TEST(OnnxTensorTest, BoolRawDataIsCanonical) {
  onnx::TensorProto p;
  p.set_name("flags");
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(3);
  p.set_raw_data(std::string("\x00\x02\x01", 3));
  auto t = TensorFromOnnx(p);
  ASSERT_OK(t);
  const auto* bytes = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(std::vector<int>(bytes, bytes + 3), std::vector<int>({0, 1, 1}));
}

TEST(OnnxTensorTest, TypedFields) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(3);
  for (int64_t v : {5, -6, 7}) p.add_int64_data(v);
  auto t = TensorFromOnnx(p);
  ASSERT_OK(t);
  EXPECT_EQ(t->flat<int64_t>()[1], -6);

  onnx::TensorProto h;
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_dims(1);
  h.add_int32_data(0x3c00);  // 1.0
  auto ht = TensorFromOnnx(h);
  ASSERT_OK(ht);
  EXPECT_EQ(static_cast<float>(ht->flat<half>()[0]), 1.0f);
}

// ONNX 1.17's float8 types: one byte per element in raw_data, one per entry in int32_data.
TEST(OnnxTensorTest, Float8TensorsReadAndWriteTheirBits) {
  for (auto [type, dt] : std::vector<std::pair<onnx::TensorProto::DataType, DataType>>{
           {onnx::TensorProto::FLOAT8E4M3FN, DT_FLOAT8_E4M3FN},
           {onnx::TensorProto::FLOAT8E4M3FNUZ, DT_FLOAT8_E4M3FNUZ},
           {onnx::TensorProto::FLOAT8E5M2, DT_FLOAT8_E5M2},
           {onnx::TensorProto::FLOAT8E5M2FNUZ, DT_FLOAT8_E5M2FNUZ}}) {
    onnx::TensorProto p;
    p.set_name("scale");
    p.set_data_type(type);
    p.add_dims(3);
    p.set_raw_data(std::string("\x38\x40\x01", 3));
    auto t = TensorFromOnnx(p);
    ASSERT_OK(t);
    EXPECT_EQ(t->dtype(), dt);
    EXPECT_EQ(static_cast<const uint8_t*>(t->raw_data())[1], 0x40);
    onnx::TensorProto back;
    ASSERT_OK(TensorToOnnx(*t, "scale", &back));
    EXPECT_EQ(back.data_type(), type);
    EXPECT_EQ(back.raw_data(), p.raw_data());

    onnx::TensorProto fields;
    fields.set_data_type(type);
    fields.add_dims(2);
    fields.add_int32_data(0x38);
    fields.add_int32_data(0x40);
    auto f = TensorFromOnnx(fields);
    ASSERT_OK(f);
    EXPECT_EQ(static_cast<const uint8_t*>(f->raw_data())[0], 0x38);
  }
  EXPECT_EQ(DataTypeFromOnnx(99).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DataTypeFromOnnx(onnx::TensorProto::UNDEFINED).status().code(), absl::StatusCode::kInvalidArgument);
}

// INT4 and UINT4 come packed two to a byte, the first element in the low nibble; Sluice holds
// one per byte. Odd counts leave the last high nibble unused.
TEST(OnnxTensorTest, FourBitTensorsUnpackAndPackWithOddCounts) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::INT4);
  p.add_dims(3);
  p.set_raw_data(std::string("\x78\x0f", 2));  // -8 (0x8), 7 (0x7); -1 (0xf)
  auto t = TensorFromOnnx(p);
  ASSERT_OK(t);
  ASSERT_EQ(t->dtype(), DT_INT4);
  EXPECT_EQ(static_cast<int>(t->flat<int4>()[0]), -8);
  EXPECT_EQ(static_cast<int>(t->flat<int4>()[1]), 7);
  EXPECT_EQ(static_cast<int>(t->flat<int4>()[2]), -1);
  onnx::TensorProto back;
  ASSERT_OK(TensorToOnnx(*t, "w", &back));
  EXPECT_EQ(back.raw_data(), std::string("\x78\x0f", 2));

  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT4);
  u.add_dims(5);
  u.add_int32_data(0xf1);  // 1, 15
  u.add_int32_data(0x32);  // 2, 3
  u.add_int32_data(0x09);  // 9
  auto ut = TensorFromOnnx(u);
  ASSERT_OK(ut);
  ASSERT_EQ(ut->dtype(), DT_UINT4);
  std::vector<int> values;
  for (uint4 v : ut->flat<uint4>()) values.push_back(v);
  EXPECT_THAT(values, ::testing::ElementsAre(1, 15, 2, 3, 9));
  ASSERT_OK(TensorToOnnx(*ut, "u", &back));
  EXPECT_EQ(back.raw_data(), std::string("\xf1\x32\x09", 3));
}

TEST(OnnxTensorTest, ShortNewTypeTensorsAreRejectedByName) {
  onnx::TensorProto p;
  p.set_name("packed");
  p.set_data_type(onnx::TensorProto::UINT4);
  p.add_dims(5);  // Needs 3 bytes.
  p.set_raw_data(std::string(2, '\0'));
  absl::Status s = TensorFromOnnx(p).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::AllOf(::testing::HasSubstr("tensor 'packed'"), ::testing::HasSubstr("3 bytes")));

  p.clear_raw_data();
  p.add_int32_data(0x11);
  p.add_int32_data(0x11);  // Two entries hold four elements, not five.
  s = TensorFromOnnx(p).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("tensor 'packed'"));

  onnx::TensorProto f;
  f.set_name("f8");
  f.set_data_type(onnx::TensorProto::FLOAT8E5M2);
  f.add_dims(4);
  f.set_raw_data(std::string(3, '\0'));
  s = TensorFromOnnx(f).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("tensor 'f8'"));
}

TEST(OnnxTensorTest, MalformedTensorsAreRejectedByName) {
  onnx::TensorProto p;
  p.set_name("weights");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(4);
  p.set_raw_data(std::string(8, '\0'));  // Half the bytes.
  auto t = TensorFromOnnx(p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), ::testing::HasSubstr("tensor 'weights'"));

  onnx::TensorProto bad_type;
  bad_type.set_name("odd");
  bad_type.set_data_type(99);
  EXPECT_THAT(TensorFromOnnx(bad_type).status().message(), ::testing::HasSubstr("'odd'"));

  onnx::TensorProto few;
  few.set_data_type(onnx::TensorProto::INT32);
  few.add_dims(3);
  few.add_int32_data(1);
  EXPECT_FALSE(TensorFromOnnx(few).ok());
}

TEST(OnnxValueTest, SequencesAndOptionalsRoundTrip) {
  Tensor seq = MakeSequence(DT_INT64, {Tensor::FromVector<int64_t>({1, 2}, TensorShape({2})),
                                       Tensor::Scalar<int64_t>(3)});
  onnx::SequenceProto sp;
  ASSERT_OK(SequenceToOnnx(seq, "s", &sp));
  EXPECT_EQ(sp.elem_type(), onnx::SequenceProto::TENSOR);
  auto back = SequenceFromOnnx(sp, nullptr);
  ASSERT_OK(back);
  auto s = GetSequence(*back, "s");
  ASSERT_OK(s);
  ASSERT_EQ((*s)->size(), 2);
  EXPECT_EQ((*s)->elements()[1].flat<int64_t>()[0], 3);

  onnx::OptionalProto op;
  ASSERT_OK(OptionalToOnnx(MakeOptional(seq), "o", &op));
  EXPECT_EQ(op.elem_type(), onnx::OptionalProto::SEQUENCE);
  auto opt = OptionalFromOnnx(op, nullptr);
  ASSERT_OK(opt);
  auto o = GetOptional(*opt, "o");
  ASSERT_OK(o);
  ASSERT_TRUE((*o)->has_value());
  EXPECT_OK(GetSequence((*o)->value(), "value"));

  ASSERT_OK(OptionalToOnnx(MakeOptional(std::nullopt), "none", &op));
  opt = OptionalFromOnnx(op, nullptr);
  ASSERT_OK(opt);
  EXPECT_FALSE((*GetOptional(*opt, "none"))->has_value());
}

TEST(OnnxValueTest, AnEmptySequenceTakesItsElementTypeFromTheValueType) {
  onnx::SequenceProto empty;
  EXPECT_FALSE(SequenceFromOnnx(empty, nullptr).ok());
  onnx::TypeProto type;
  type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  auto t = SequenceFromOnnx(empty, &type);
  ASSERT_OK(t);
  EXPECT_EQ((*GetSequence(*t, "t"))->element_dtype(), DT_DOUBLE);
}

}  // namespace
}  // namespace sluice
