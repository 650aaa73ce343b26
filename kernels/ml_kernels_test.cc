// The ai.onnx.ml kernels: ArrayFeatureExtractor, Binarizer, LabelEncoder, TreeEnsemble.
// Expected values are worked out by hand in the comments.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

template <typename T>
Tensor Vec(std::vector<T> v) {
  return Tensor::FromVector<T>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

TEST(ArrayFeatureExtractorTest, PicksColumnsOfTheLastDim) {
  KernelTester t("Onnx>ArrayFeatureExtractor");
  // x = [[0 1 2], [3 4 5]]; columns 2, 0, 2.
  t.Attr("T", DT_FLOAT).Input<float>({2, 3}, {0, 1, 2, 3, 4, 5}).Input<int64_t>({3}, {2, 0, 2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 3}, {2, 0, 2, 5, 3, 5});
}

TEST(ArrayFeatureExtractorTest, VectorInputGivesOneRow) {
  KernelTester t("Onnx>ArrayFeatureExtractor");
  t.Attr("T", DT_INT64).Input<int64_t>({4}, {10, 11, 12, 13}).Input<int64_t>({2}, {3, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {1, 2}, {13, 11});
}

TEST(ArrayFeatureExtractorTest, IndexOutOfRangeFails) {
  KernelTester t("Onnx>ArrayFeatureExtractor");
  t.Attr("T", DT_FLOAT).Input<float>({2, 3}, {0, 1, 2, 3, 4, 5}).Input<int64_t>({2}, {1, 3});
  ExpectInvalid(t, "index 3 at position 1");
}

TEST(BinarizerTest, StrictlyAboveTheThreshold) {
  KernelTester t("Onnx>Binarizer");
  t.Attr("T", DT_FLOAT).Attr("threshold", 0.5f).Input<float>({4}, {0.5f, 0.6f, -1.0f, 2.0f});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {4}, {0, 1, 0, 1});
}

TEST(BinarizerTest, LargeIntegersCompareExactly) {
  // 2^24 + 1 rounds to 2^24 as a float; compared in double it stays above a 2^24 threshold.
  KernelTester t("Onnx>Binarizer");
  t.Attr("T", DT_INT64).Attr("threshold", 16777216.0f).Input<int64_t>({2}, {16777217, 16777216});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {2}, {1, 0});
}

TEST(LabelEncoderTest, StringsToIntsWithDefault) {
  KernelTester t("Onnx>LabelEncoder");
  t.Attr("TK", DT_STRING).Attr("TV", DT_INT64);
  Tensor keys(DT_STRING, TensorShape({2}));
  keys.flat<tstring>()[0] = "cat";
  keys.flat<tstring>()[1] = "dog";
  t.Attr("keys", keys).Attr("values", Vec<int64_t>({7, 9})).Attr("default_value", Vec<int64_t>({-5}));
  Tensor x(DT_STRING, TensorShape({3}));
  x.flat<tstring>()[0] = "dog";
  x.flat<tstring>()[1] = "emu";
  x.flat<tstring>()[2] = "cat";
  t.Input(x);
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {3}, {9, -5, 7});
}

TEST(LabelEncoderTest, FloatKeysMatchNegativeZeroAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelTester t("Onnx>LabelEncoder");
  t.Attr("TK", DT_FLOAT).Attr("TV", DT_INT32);
  t.Attr("keys", Vec<float>({0.0f, nan, 2.5f})).Attr("values", Vec<int32_t>({1, 2, 3}));
  t.Attr("default_value", Vec<int32_t>({0}));
  t.Input<float>({4}, {-0.0f, -nan, 2.5f, 3.0f});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {4}, {1, 2, 3, 0});
}

TEST(LabelEncoderTest, MismatchedKeysAndValuesFail) {
  KernelTester t("Onnx>LabelEncoder");
  t.Attr("TK", DT_INT64).Attr("TV", DT_INT64);
  t.Attr("keys", Vec<int64_t>({1, 2})).Attr("values", Vec<int64_t>({1})).Attr("default_value", Vec<int64_t>({0}));
  t.Input<int64_t>({1}, {1});
  ExpectInvalid(t, "2 keys but 1 values");
}

// One tree over feature 0 and a second, single-leaf tree:
//   node 0: x0 <= 1 ? node 1 : leaf 2        leaves: 0 -> (target 0, 10)
//   node 1: x0 <  0 ? leaf 0 : leaf 1                1 -> (target 1, 20)
//   node 2: a leaf tree, leaf 3                      2 -> (target 1, 30)
//                                                    3 -> (target 0, 1)
KernelTester Trees(int64_t aggregate, int64_t post) {
  KernelTester t("Onnx>TreeEnsemble");
  t.Attr("T", DT_FLOAT).Attr("aggregate_function", aggregate).Attr("post_transform", post).Attr("n_targets", 2);
  t.Attr("nodes_modes", std::vector<int64_t>{0, 1, 0});
  t.Attr("nodes_featureids", std::vector<int64_t>{0, 0, 0});
  t.Attr("nodes_splits", Vec<float>({1, 0, 0}));
  t.Attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 3});
  t.Attr("nodes_trueleafs", std::vector<int64_t>{0, 1, 1});
  t.Attr("nodes_falsenodeids", std::vector<int64_t>{2, 1, 3});
  t.Attr("nodes_falseleafs", std::vector<int64_t>{1, 1, 1});
  t.Attr("leaf_targetids", std::vector<int64_t>{0, 1, 1, 0});
  t.Attr("leaf_weights", Vec<float>({10, 20, 30, 1}));
  t.Attr("membership_values", Vec<float>({}));
  t.Attr("tree_roots", std::vector<int64_t>{0, 2});
  return t;
}

TEST(TreeEnsembleTest, SumAverageAndMax) {
  // Rows -1, 0.5, 5 reach leaves 0, 1, 2 in tree 0; tree 1 always adds leaf 3 (target 0, 1).
  {
    KernelTester t = Trees(/*sum*/ 1, 0);
    t.Input<float>({3, 1}, {-1, 0.5f, 5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3, 2}, {11, 0, 1, 20, 1, 30});
  }
  {
    KernelTester t = Trees(/*average*/ 0, 0);  // Each contribution halved (two trees).
    t.Input<float>({3, 1}, {-1, 0.5f, 5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3, 2}, {5.5f, 0, 0.5f, 10, 0.5f, 15});
  }
  {
    KernelTester t = Trees(/*max*/ 3, 0);  // Untouched targets keep the lowest float.
    t.Input<float>({1, 1}, {-1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2}, {10, std::numeric_limits<float>::lowest()});
  }
}

TEST(TreeEnsembleTest, LogisticAndSoftmax) {
  {
    // Row 0.5: scores (1, 20) -> 1 / (1 + e^-s).
    KernelTester t = Trees(1, /*logistic*/ 2);
    t.Input<float>({1, 1}, {0.5f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2}, {static_cast<float>(1 / (1 + std::exp(-1.0))), static_cast<float>(1 / (1 + std::exp(-20.0)))});
  }
  {
    // Row -1: scores (11, 0) -> softmax e^11 / (e^11 + 1), 1 / (e^11 + 1).
    KernelTester t = Trees(1, /*softmax*/ 1);
    t.Input<float>({1, 1}, {-1});
    ASSERT_OK(t.Run());
    const double e = std::exp(11.0);
    t.ExpectOutput<float>(0, {1, 2}, {static_cast<float>(e / (e + 1)), static_cast<float>(1 / (e + 1))});
  }
}

TEST(TreeEnsembleTest, MembershipAndMissingValues) {
  // One node: x0 in {2, 4} ? leaf 0 (target 0, 1) : leaf 1 (target 0, 2); NaN tracks true.
  KernelTester t("Onnx>TreeEnsemble");
  t.Attr("T", DT_FLOAT).Attr("n_targets", 1);
  t.Attr("nodes_modes", std::vector<int64_t>{6}).Attr("nodes_featureids", std::vector<int64_t>{0});
  t.Attr("nodes_splits", Vec<float>({0})).Attr("membership_values", Vec<float>({4, 2, std::nanf("")}));
  t.Attr("nodes_truenodeids", std::vector<int64_t>{0}).Attr("nodes_trueleafs", std::vector<int64_t>{1});
  t.Attr("nodes_falsenodeids", std::vector<int64_t>{1}).Attr("nodes_falseleafs", std::vector<int64_t>{1});
  t.Attr("nodes_missing_value_tracks_true", std::vector<int64_t>{1});
  t.Attr("leaf_targetids", std::vector<int64_t>{0, 0}).Attr("leaf_weights", Vec<float>({1, 2}));
  t.Attr("tree_roots", std::vector<int64_t>{0});
  t.Input<float>({4, 1}, {2, 3, 4, std::nanf("")});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {4, 1}, {1, 2, 1, 1});
}

TEST(TreeEnsembleTest, MalformedEnsemblesFailByName) {
  {
    KernelTester t = Trees(1, 0);
    t.Attr("nodes_falsenodeids", std::vector<int64_t>{9, 1, 3});  // Leaf 9 of 4.
    t.Input<float>({1, 1}, {5});
    ExpectInvalid(t, "node 0's false branch goes to leaf 9");
  }
  {
    // Node 1's false branch back to node 0 and node 0's true branch to node 1: x0 = 0.5 loops.
    KernelTester t = Trees(1, 0);
    t.Attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 3}).Attr("nodes_falseleafs", std::vector<int64_t>{1, 0, 1});
    t.Input<float>({1, 1}, {0.5f});
    ExpectInvalid(t, "loops");
  }
  {
    KernelTester t = Trees(1, 0);
    t.Input<float>({1, 0}, {});  // Feature 0 missing.
    ExpectInvalid(t, "reads feature 0 but x has 0 features");
  }
}

}  // namespace
}  // namespace sluice
