#include "framework/tensor_sequence.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(TensorSequenceTest, HoldsElementsInOrderAndSharesTheirBuffers) {
  Tensor a = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  Tensor b = Tensor::Scalar<float>(3);
  Tensor seq = MakeSequence(DT_FLOAT, {a, b});
  EXPECT_EQ(seq.dtype(), DT_VARIANT);
  EXPECT_EQ(seq.dims(), 0);
  auto s = GetSequence(seq, "seq");
  ASSERT_OK(s);
  EXPECT_EQ((*s)->element_dtype(), DT_FLOAT);
  ASSERT_EQ((*s)->size(), 2);
  EXPECT_EQ((*s)->elements()[0].raw_data(), a.raw_data());
  EXPECT_EQ((*s)->elements()[1].flat<float>()[0], 3.0f);
}

TEST(TensorSequenceTest, CopiesShareTheValueAndOutliveTheOriginal) {
  Tensor copy;
  {
    Tensor seq = MakeSequence(DT_INT64, {Tensor::Scalar<int64_t>(7)});
    copy = seq.DeepCopy();
  }
  auto s = GetSequence(copy, "copy");
  ASSERT_OK(s);
  EXPECT_EQ((*s)->elements()[0].flat<int64_t>()[0], 7);
  EXPECT_NE(copy.DebugString().find("sequence<int64>"), std::string::npos) << copy.DebugString();
}

TEST(TensorSequenceTest, OptionalsHoldATensorOrNothing) {
  Tensor one = MakeOptional(Tensor::Scalar<float>(1));
  auto some = GetOptional(one, "x");
  ASSERT_OK(some);
  EXPECT_TRUE((*some)->has_value());
  Tensor none = MakeOptional(std::nullopt);
  auto n = GetOptional(none, "x");
  ASSERT_OK(n);
  EXPECT_FALSE((*n)->has_value());
  EXPECT_EQ(none.DebugString(), "Tensor<variant []: optional(none)>");
}

TEST(TensorSequenceTest, WrongValuesAreErrorsNamingThem) {
  auto s = GetSequence(Tensor::Scalar<float>(1), "input_sequence");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("input_sequence must be a sequence"), std::string::npos) << s.status();
  auto o = GetOptional(MakeSequence(DT_FLOAT, {}), "input");
  EXPECT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("must be an optional"), std::string::npos) << o.status();
  auto e = GetSequence(Tensor(DT_VARIANT, TensorShape()), "x");
  EXPECT_NE(e.status().message().find("holds no value"), std::string::npos) << e.status();
}

TEST(TensorSequenceTest, SequencesAndOptionalsRoundTripThroughTensorProto) {
  Tensor seq = MakeSequence(DT_FLOAT, {Tensor::FromVector<float>({1, 2}, TensorShape({2})),
                                      Tensor::FromVector<float>({3}, TensorShape({1}))});
  TensorProto proto;
  seq.AsProtoTensorContent(&proto);
  auto back = Tensor::FromWireProto(proto);
  ASSERT_OK(back);
  auto s = GetSequence(*back, "back");
  ASSERT_OK(s);
  EXPECT_EQ((*s)->element_dtype(), DT_FLOAT);
  ASSERT_EQ((*s)->size(), 2);
  EXPECT_EQ((*s)->elements()[0].flat<float>()[1], 2);
  EXPECT_EQ((*s)->elements()[1].shape(), TensorShape({1}));

  for (const Tensor& opt : {MakeOptional(std::nullopt), MakeOptional(Tensor::FromVector<int64_t>({7}, TensorShape({})))}) {
    TensorProto p;
    opt.AsProtoField(&p);
    auto o = Tensor::FromProto(p);
    ASSERT_OK(o);
    auto got = GetOptional(*o, "o");
    ASSERT_OK(got);
    EXPECT_EQ((*got)->has_value(), (*GetOptional(opt, "opt"))->has_value());
    if ((*got)->has_value()) {
      EXPECT_EQ((*got)->value().flat<int64_t>()[0], 7);
    }
  }
}

TEST(TensorSequenceTest, InconsistentVariantProtosAreErrors) {
  Tensor seq = MakeSequence(DT_FLOAT, {Tensor::FromVector<float>({1}, TensorShape({1}))});
  TensorProto proto;
  seq.AsProtoTensorContent(&proto);
  TensorProto wrong_type = proto;
  wrong_type.mutable_variant_val(0)->set_metadata("int64");
  EXPECT_THAT(std::string(Tensor::FromProto(wrong_type).status().message()),
              ::testing::HasSubstr("holds a float tensor"));
  TensorProto unknown = proto;
  unknown.mutable_variant_val(0)->set_type_name("tensorflow::TensorList");
  EXPECT_EQ(Tensor::FromProto(unknown).status().code(), absl::StatusCode::kUnimplemented);
  TensorProto missing = proto;
  missing.clear_variant_val();
  EXPECT_FALSE(Tensor::FromWireProto(missing).ok());
}

}  // namespace
}  // namespace sluice
