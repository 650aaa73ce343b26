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

// ONNX 1.17's element types without a Sluice dtype: UNIMPLEMENTED, naming the type and the
// tensor; a number that is no ONNX type at all is INVALID_ARGUMENT.
TEST(OnnxTensorTest, NewOnnxElementTypesAreUnimplementedByName) {
  for (auto [type, name] : std::vector<std::pair<onnx::TensorProto::DataType, std::string>>{
           {onnx::TensorProto::FLOAT8E4M3FN, "FLOAT8E4M3FN"},
           {onnx::TensorProto::FLOAT8E4M3FNUZ, "FLOAT8E4M3FNUZ"},
           {onnx::TensorProto::FLOAT8E5M2, "FLOAT8E5M2"},
           {onnx::TensorProto::FLOAT8E5M2FNUZ, "FLOAT8E5M2FNUZ"},
           {onnx::TensorProto::UINT4, "UINT4"},
           {onnx::TensorProto::INT4, "INT4"}}) {
    onnx::TensorProto p;
    p.set_name("scale");
    p.set_data_type(type);
    p.add_dims(2);
    p.set_raw_data(std::string(type == onnx::TensorProto::UINT4 || type == onnx::TensorProto::INT4 ? 1 : 2, '\0'));
    absl::Status s = TensorFromOnnx(p).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << name;
    EXPECT_THAT(s.message(), ::testing::AllOf(::testing::HasSubstr("tensor 'scale'"), ::testing::HasSubstr(name),
                                              ::testing::HasSubstr("no Sluice dtype")));
  }
  EXPECT_EQ(DataTypeFromOnnx(99).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DataTypeFromOnnx(onnx::TensorProto::UNDEFINED).status().code(), absl::StatusCode::kInvalidArgument);
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
