// Einsum equations (explicit and implicit outputs, diagonals, ellipsis broadcasting, in-place
// transposed GEMM operands) and Det. Expected values are worked out by hand.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// [[1, 2, 3], [4, 5, 6]] and [[1, 2], [3, 4], [5, 6]].
const std::vector<float> kA23 = {1, 2, 3, 4, 5, 6};
const std::vector<float> kB32 = {1, 2, 3, 4, 5, 6};

// Integer products and sums wrap as numpy's do (int64 overflow was undefined behaviour).
TEST(EinsumTest, IntegerOverflowWraps) {
  constexpr int64_t kBig = int64_t{1} << 62;
  KernelTester t("Onnx>Einsum");
  // [2^62, 2^62] . [4, 1] = 2^64 + 2^62, which wraps to 2^62.
  t.Attr("equation", std::string("i,i->")).Input<int64_t>({2}, {kBig, kBig}).Input<int64_t>({2}, {4, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {}, {kBig});
}

TEST(EinsumTest, MatMulExplicitAndImplicit) {
  // [1 + 6 + 15, 2 + 8 + 18; 4 + 15 + 30, 8 + 20 + 36]
  for (const char* eq : {"ij,jk->ik", "ij,jk", " i j , j k -> i k "}) {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string(eq)).Input<float>({2, 3}, kA23).Input<float>({3, 2}, kB32);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {22, 28, 49, 64});
  }
  {
    // Implicit output letters are sorted: "ij,jk" gives ik, but "kj,ji" gives ik too, i.e.
    // (B^T A^T)^T... here with k from the first operand: out[i][k] = sum_j x[k][j] y[j][i].
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("kj,ji")).Input<float>({2, 3}, kA23).Input<float>({3, 2}, kB32);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {22, 49, 28, 64});
  }
}

TEST(EinsumTest, TransposeSumsAndOuterProduct) {
  {
    KernelTester t("Onnx>Einsum");  // Implicit "ba" -> "ab": a transpose.
    t.Attr("equation", std::string("ba")).Input<float>({2, 3}, kA23);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3, 2}, {1, 4, 2, 5, 3, 6});
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij->j")).Input<float>({2, 3}, kA23);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {5, 7, 9});
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij->")).Input<float>({2, 3}, kA23);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {}, {21});
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("i,j->ij")).Input<float>({2}, {1, 2}).Input<float>({3}, {1, 10, 100});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, {1, 10, 100, 2, 20, 200});
  }
}

TEST(EinsumTest, RepeatedLabelsTakeDiagonals) {
  const std::vector<float> m33 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ii->i")).Input<float>({3, 3}, m33);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {1, 5, 9});
  }
  {
    KernelTester t("Onnx>Einsum");  // Implicit: i is used twice, so the output is the trace.
    t.Attr("equation", std::string("ii")).Input<float>({3, 3}, m33);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {}, {15});
  }
  {
    // x[i][i][j] for i < 2: rows [1, 2] and [7, 8] of a [2, 2, 2] counting 1..8; summed over i.
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("iij->j")).Input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {8, 10});
  }
  {
    // Diagonal times a vector: sum_i x[i][i] * v[i] = 1*1 + 5*2 + 9*3.
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ii,i->")).Input<float>({3, 3}, m33).Input<float>({3}, {1, 2, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {}, {38});
  }
}

TEST(EinsumTest, EllipsisBroadcastsBatchDims) {
  {
    // [2, 1, 2] x [2, 1] with no batch dims on the right: [1*5 + 2*6], [3*5 + 4*6].
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("...ij,...jk->...ik"))
        .Input<float>({2, 1, 2}, {1, 2, 3, 4})
        .Input<float>({2, 1}, {5, 6});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 1, 1}, {17, 39});
  }
  {
    // Batch dim of size 1 against 3: the [1, 2] row times each of three [2] columns.
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("...j,...j->..."))
        .Input<float>({1, 2}, {1, 2})
        .Input<float>({3, 2}, {1, 1, 2, 0, 0, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {3, 2, 6});
  }
  {
    // Explicit output without the ellipsis sums the ellipsis dims: column sums of [2, 3].
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("...i->i")).Input<float>({2, 3}, kA23);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {5, 7, 9});
  }
  {
    // Batch diagonal, as in ONNX's test: [2, 2, 2] -> [2, 2].
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("...ii->...i")).Input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {1, 4, 5, 8});
  }
}

TEST(EinsumTest, BatchMatMulWithTransposedOperands) {
  // b=2 batches; y is stored [b, k, j], so it is read transposed. Batch 0: [1, 2] . [1, 0] = 1 and
  // [1, 2] . [0, 1] = 2; batch 1: [3, 4] . [1, 1] = 7 and [3, 4] . [2, -1] = 2.
  KernelTester t("Onnx>Einsum");
  t.Attr("equation", std::string("bij,bkj->bik"))
      .Input<float>({2, 1, 2}, {1, 2, 3, 4})
      .Input<float>({2, 2, 2}, {1, 0, 0, 1, 1, 1, 2, -1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 1, 2}, {1, 2, 7, 2});
}

TEST(EinsumTest, ThreeOperandsAndIntegers) {
  {
    // [1, 2] A [1, 1]^T over A = [[1, 2], [3, 4]]: 1 + 2 + 6 + 8 = 17.
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("i,ij,j->"))
        .Input<int32_t>({2}, {1, 2})
        .Input<int32_t>({2, 2}, {1, 2, 3, 4})
        .Input<int32_t>({2}, {1, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {}, {17});
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("i,i")).Input<int64_t>({3}, {1, -2, 3}).Input<int64_t>({3}, {4, 5, 6});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {}, {12});
  }
  {
    KernelTester t("Onnx>Einsum");  // double through dgemm.
    t.Attr("equation", std::string("ij,jk->ki")).Input<double>({1, 2}, {1, 2}).Input<double>({2, 2}, {1, 2, 3, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2, 1}, {7, 10});
  }
}

TEST(EinsumTest, RejectsBadEquationsAndShapes) {
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij,jk->ik")).Input<float>({2, 3}, kA23).Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "a label has sizes 3 and 2");
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("i1->i")).Input<float>({2}, {1, 2});
    ExpectInvalid(t, "unexpected '1'");
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij->ii")).Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "output label repeats");
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij->k")).Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "in no input");
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ijk->i")).Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "its term has 3 letters");
  }
  {
    KernelTester t("Onnx>Einsum");
    t.Attr("equation", std::string("ij,jk->ik")).Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "2 terms for 1 inputs");
  }
}

TEST(DetTest, PivotsAndBatches) {
  {
    // det [[1, 2], [3, 4]] = -2; [[0, 1], [1, 0]] needs a row swap: -1.
    KernelTester t("Onnx>Det");
    t.Input<float>({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {-2, -1});
  }
  {
    // 2 * (3*2 - 2*1) - 0 + 1 * (1*1 - 3*1) = 8 - 2.
    KernelTester t("Onnx>Det");
    t.Input<double>({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {}, {6});
  }
  {
    KernelTester t("Onnx>Det");  // Singular.
    t.Input<float>({2, 2}, {1, 2, 2, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {}, {0});
  }
  {
    KernelTester t("Onnx>Det");
    t.Input<float>({2, 3}, kA23);
    ExpectInvalid(t, "square matrices");
  }
}

}  // namespace
}  // namespace sluice
