// The sequence and optional kernels (kernels/sequence_ops.cc).
#include <limits>

#include "framework/tensor_sequence.h"
#include "kernels/kernel_test_util.h"
#include "framework/status_matchers.h"

namespace sluice {
namespace {

Tensor Floats(std::initializer_list<int64_t> shape, std::vector<float> values) {
  return Tensor::FromVector<float>(values, TensorShape(shape));
}

// The elements of output `i`, which must be a sequence of `dtype` tensors.
std::vector<Tensor> SequenceOutput(const KernelTester& t, int i, DataType dtype) {
  auto seq = GetSequence(t.output(i), "output");
  EXPECT_OK(seq);
  if (!seq.ok()) return {};
  EXPECT_EQ((*seq)->element_dtype(), dtype);
  return (*seq)->elements();
}

void ExpectFloats(const Tensor& got, std::initializer_list<int64_t> shape, std::vector<float> want) {
  ASSERT_EQ(got.dtype(), DT_FLOAT);
  ASSERT_EQ(got.shape(), TensorShape(shape)) << got.DebugString();
  for (size_t j = 0; j < want.size(); ++j) EXPECT_EQ(got.flat<float>()[j], want[j]) << "element " << j;
}

Tensor ThreeFloats() {
  return MakeSequence(DT_FLOAT, {Floats({1}, {1}), Floats({2}, {2, 3}), Floats({1}, {4})});
}

TEST(SequenceKernelsTest, ConstructKeepsInputsInOrder) {
  KernelTester t("Onnx>SequenceConstruct");
  t.Input(Floats({2}, {1, 2})).Input(Floats({}, {3}));
  ASSERT_OK(t.Run());
  auto e = SequenceOutput(t, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 2u);
  ExpectFloats(e[0], {2}, {1, 2});
  ExpectFloats(e[1], {}, {3});
}

TEST(SequenceKernelsTest, EmptyHasTheDtypeAttr) {
  KernelTester t("Onnx>SequenceEmpty");
  t.Attr("dtype", DT_INT64);
  ASSERT_OK(t.Run());
  EXPECT_TRUE(SequenceOutput(t, 0, DT_INT64).empty());
}

TEST(SequenceKernelsTest, InsertAppendsOrGoesBeforePosition) {
  KernelTester back("Onnx>SequenceInsert");
  back.Attr("T", DT_FLOAT).Input(ThreeFloats()).Input(Floats({}, {9})).ArgSizes({1, 1, 0});
  ASSERT_OK(back.Run());
  auto e = SequenceOutput(back, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 4u);
  ExpectFloats(e[3], {}, {9});

  KernelTester front("Onnx>SequenceInsert");
  front.Input(ThreeFloats()).Input(Floats({}, {9})).Input<int64_t>({1}, {-3});
  ASSERT_OK(front.Run());
  e = SequenceOutput(front, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 4u);
  ExpectFloats(e[0], {}, {9});
  ExpectFloats(e[1], {1}, {1});
}

TEST(SequenceKernelsTest, InsertChecksPositionAndDtype) {
  KernelTester far("Onnx>SequenceInsert");
  far.Input(ThreeFloats()).Input(Floats({}, {9})).Input<int32_t>({}, {4});
  ExpectInvalid(far, "position 4 is out of range for a sequence of 3 tensors (valid: [-3, 3])");
  KernelTester ints("Onnx>SequenceInsert");
  ints.Input(ThreeFloats()).Input<int64_t>({}, {9}).ArgSizes({1, 1, 0});
  ExpectInvalid(ints, "cannot put a int64 tensor into a sequence of float tensors");
}

TEST(SequenceKernelsTest, AtCountsNegativePositionsFromTheEnd) {
  KernelTester t("Onnx>SequenceAt");
  t.Attr("T", DT_FLOAT).Input(ThreeFloats()).Input<int64_t>({}, {-2});
  ASSERT_OK(t.Run());
  ExpectFloats(t.output(0), {2}, {2, 3});
}

TEST(SequenceKernelsTest, AtOutOfRangeIsAnError) {
  KernelTester t("Onnx>SequenceAt");
  t.Attr("T", DT_FLOAT).Input(ThreeFloats()).Input<int32_t>({}, {3});
  ExpectInvalid(t, "position 3 is out of range for a sequence of 3 tensors (valid: [-3, 2])");
  KernelTester empty("Onnx>SequenceAt");
  empty.Attr("T", DT_FLOAT).Input(MakeSequence(DT_FLOAT, {})).Input<int64_t>({}, {0});
  ExpectInvalid(empty, "out of range for a sequence of 0 tensors");
  KernelTester not_seq("Onnx>SequenceAt");
  not_seq.Attr("T", DT_FLOAT).Input(MakeOptional(std::nullopt)).Input<int64_t>({}, {0});
  ExpectInvalid(not_seq, "input_sequence must be a sequence");
}

TEST(SequenceKernelsTest, EraseRemovesPositionOrTheLast) {
  KernelTester last("Onnx>SequenceErase");
  last.Input(ThreeFloats()).ArgSizes({1, 0});
  ASSERT_OK(last.Run());
  auto e = SequenceOutput(last, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 2u);
  ExpectFloats(e[1], {2}, {2, 3});

  KernelTester first("Onnx>SequenceErase");
  first.Input(ThreeFloats()).Input<int64_t>({}, {0});
  ASSERT_OK(first.Run());
  e = SequenceOutput(first, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 2u);
  ExpectFloats(e[0], {2}, {2, 3});

  KernelTester empty("Onnx>SequenceErase");
  empty.Input(MakeSequence(DT_FLOAT, {})).ArgSizes({1, 0});
  ExpectInvalid(empty, "position -1 is out of range for a sequence of 0 tensors");
}

TEST(SequenceKernelsTest, Length) {
  KernelTester t("Onnx>SequenceLength");
  t.Input(ThreeFloats());
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {}, {3});
}

TEST(SequenceKernelsTest, SplitIntoOnesDropsTheAxisWithoutKeepdims) {
  KernelTester t("Onnx>SplitToSequence");
  t.Attr("axis", int64_t{1}).Attr("keepdims", int64_t{0}).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})).ArgSizes({1, 0});
  ASSERT_OK(t.Run());
  auto e = SequenceOutput(t, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 3u);
  ExpectFloats(e[0], {2}, {1, 4});
  ExpectFloats(e[2], {2}, {3, 6});
}

TEST(SequenceKernelsTest, SplitBySizesOrByAScalarChunk) {
  KernelTester sizes("Onnx>SplitToSequence");
  sizes.Input(Floats({5}, {1, 2, 3, 4, 5})).Input<int64_t>({2}, {1, 4});
  ASSERT_OK(sizes.Run());
  auto e = SequenceOutput(sizes, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 2u);
  ExpectFloats(e[1], {4}, {2, 3, 4, 5});

  KernelTester chunk("Onnx>SplitToSequence");
  chunk.Input(Floats({5}, {1, 2, 3, 4, 5})).Input<int32_t>({}, {2});
  ASSERT_OK(chunk.Run());
  e = SequenceOutput(chunk, 0, DT_FLOAT);
  ASSERT_EQ(e.size(), 3u);
  ExpectFloats(e[2], {1}, {5});

  KernelTester bad("Onnx>SplitToSequence");
  bad.Input(Floats({5}, {1, 2, 3, 4, 5})).Input<int64_t>({2}, {1, 2});
  ExpectInvalid(bad, "split sizes [1,2] add up to 3, not to the size 5 of axis 0");

  // Found by fuzzing Split: sizes whose sum wraps to the axis size.
  KernelTester wraps("Onnx>SplitToSequence");
  const int64_t big = std::numeric_limits<int64_t>::max();
  wraps.Input(Floats({1}, {1})).Input<int64_t>({3}, {big, big, 3});
  ExpectInvalid(wraps, "overflow int64");
}

TEST(SequenceKernelsTest, ConcatAlongAnAxisOrANewOne) {
  Tensor seq = MakeSequence(DT_FLOAT, {Floats({2, 1}, {1, 2}), Floats({2, 2}, {3, 4, 5, 6})});
  KernelTester concat("Onnx>ConcatFromSequence");
  concat.Attr("T", DT_FLOAT).Attr("axis", int64_t{-1}).Input(seq);
  ASSERT_OK(concat.Run());
  concat.ExpectOutput<float>(0, {2, 3}, {1, 3, 4, 2, 5, 6});

  Tensor pair = MakeSequence(DT_FLOAT, {Floats({2}, {1, 2}), Floats({2}, {3, 4})});
  KernelTester stack("Onnx>ConcatFromSequence");
  stack.Attr("T", DT_FLOAT).Attr("axis", int64_t{-1}).Attr("new_axis", int64_t{1}).Input(pair);
  ASSERT_OK(stack.Run());
  stack.ExpectOutput<float>(0, {2, 2}, {1, 3, 2, 4});

  KernelTester mismatch("Onnx>ConcatFromSequence");
  mismatch.Attr("T", DT_FLOAT).Attr("axis", int64_t{0}).Input(seq);
  ExpectInvalid(mismatch, "element 1 has shape [2,2], which does not match element 0's [2,1]");
}

TEST(SequenceKernelsTest, OptionalsHoldOneValueOrNone) {
  KernelTester some("Onnx>Optional");
  some.Input(Floats({}, {7}));
  ASSERT_OK(some.Run());
  KernelTester has("Onnx>OptionalHasElement");
  has.Input(some.output(0));
  ASSERT_OK(has.Run());
  has.ExpectOutput<bool>(0, {}, {true});
  KernelTester get("Onnx>OptionalGetElement");
  get.Attr("T", DT_FLOAT).Input(some.output(0));
  ASSERT_OK(get.Run());
  get.ExpectOutput<float>(0, {}, {7});

  KernelTester none("Onnx>Optional");
  none.ArgSizes({0});
  ASSERT_OK(none.Run());
  KernelTester has_none("Onnx>OptionalHasElement");
  has_none.Input(none.output(0));
  ASSERT_OK(has_none.Run());
  has_none.ExpectOutput<bool>(0, {}, {false});
  KernelTester get_none("Onnx>OptionalGetElement");
  get_none.Attr("T", DT_FLOAT).Input(none.output(0));
  ExpectInvalid(get_none, "the optional input holds no value");
}

TEST(SequenceKernelsTest, ASequenceStandsForAnOptionalHoldingIt) {
  KernelTester has("Onnx>OptionalHasElement");
  has.Input(ThreeFloats());
  ASSERT_OK(has.Run());
  has.ExpectOutput<bool>(0, {}, {true});
  KernelTester get("Onnx>OptionalGetElement");
  get.Attr("T", DT_VARIANT).Input(ThreeFloats());
  ASSERT_OK(get.Run());
  EXPECT_EQ(SequenceOutput(get, 0, DT_FLOAT).size(), 3u);
  KernelTester tensor("Onnx>OptionalHasElement");
  tensor.Input(Floats({}, {1}));
  ExpectInvalid(tensor, "expects variant but got float");
}

}  // namespace
}  // namespace sluice
