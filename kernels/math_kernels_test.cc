// Element-wise math, activations, comparisons, Cast, reductions, softmax family, CumSum, TopK.
// Expected values are worked out by hand or from the defining formula written out here.
#include <cmath>
#include <limits>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(UnaryMathTest, AbsNegSignOnSignedAndUnsigned) {
  {
    KernelTester t("Abs");
    t.Input<int32_t>({4}, {-3, 0, 5, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {4}, {3, 0, 5, 1});
  }
  {
    KernelTester t("Abs");
    t.Input<uint64_t>({2}, {7, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint64_t>(0, {2}, {7, 0});
  }
  {
    KernelTester t("Neg");
    t.Input<int8_t>({3}, {-128 + 1, 0, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int8_t>(0, {3}, {127, 0, -4});
  }
  {
    KernelTester t("Sign");
    t.Input<float>({4}, {-2.5f, 0.0f, 3.0f, -0.0f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4}, {-1, 0, 1, 0});
  }
}

TEST(UnaryMathTest, RoundHalvesToEvenAndFloorCeil) {
  {
    KernelTester t("Round");
    t.Input<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {6}, {0, 2, 2, -0.0f, -2, 2});
  }
  {
    KernelTester t("Floor");
    t.Input<double>({2}, {-1.5, 1.5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {-2, 1});
  }
  {
    KernelTester t("Ceil");
    t.Input<double>({2}, {-1.5, 1.5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {-1, 2});
  }
}

TEST(UnaryMathTest, TranscendentalsMatchTheirDefinitions) {
  const std::vector<double> x = {-0.75, 0.1, 0.5};
  struct Case {
    const char* op;
    double (*f)(double);
  };
  const Case cases[] = {
      {"Exp", [](double v) { return std::exp(v); }},
      {"Sin", [](double v) { return std::sin(v); }},
      {"Cos", [](double v) { return std::cos(v); }},
      {"Tan", [](double v) { return std::sin(v) / std::cos(v); }},
      {"Asin", [](double v) { return std::atan(v / std::sqrt(1 - v * v)); }},
      {"Acos", [](double v) { return M_PI / 2 - std::atan(v / std::sqrt(1 - v * v)); }},
      {"Atan", [](double v) { return std::asin(v / std::sqrt(1 + v * v)); }},
      {"Sinh", [](double v) { return (std::exp(v) - std::exp(-v)) / 2; }},
      {"Cosh", [](double v) { return (std::exp(v) + std::exp(-v)) / 2; }},
      {"Tanh", [](double v) { return (std::exp(2 * v) - 1) / (std::exp(2 * v) + 1); }},
      {"Asinh", [](double v) { return std::log(v + std::sqrt(v * v + 1)); }},
      {"Atanh", [](double v) { return 0.5 * std::log((1 + v) / (1 - v)); }},
      {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"Softplus", [](double v) { return std::log(std::exp(v) + 1); }},
      {"Softsign", [](double v) { return v / (1 + std::fabs(v)); }},
      {"Reciprocal", [](double v) { return 1 / v; }},
      {"Onnx>HardSwish", [](double v) { return v * std::max(0.0, std::min(1.0, v / 6 + 0.5)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    KernelTester t(c.op);
    t.Input<double>({3}, x);
    ASSERT_OK(t.Run());
    std::vector<double> want;
    for (double v : x) want.push_back(c.f(v));
    t.ExpectOutput<double>(0, {3}, want);
  }
  {
    KernelTester t("Acosh");
    t.Input<double>({2}, {1.0, 2.0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {0.0, std::log(2.0 + std::sqrt(3.0))});
  }
  {
    KernelTester t("Log");
    t.Input<float>({2}, {1.0f, float(M_E)});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {0, 1});
  }
  {
    KernelTester t("Erf");  // erf(0.5) = 0.5204998778130465, erf(-1) = -0.8427007929497149
    t.Input<float>({2}, {0.5f, -1.0f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {0.52049988f, -0.84270079f});
  }
}

// Exp, Tanh and Sigmoid go through fast_math's vectorized loops for float (float_eltwise.h),
// vectors then a tail; long and short lengths, and the special values must come out as libm
// gives them.
TEST(UnaryMathTest, VectorizedFloatFunctionsMatchLibmEverywhere) {
 for (const int64_t n : {int64_t{3 * 16384 + 1000 + 37}, int64_t{1037}, int64_t{16}}) {
  SCOPED_TRACE(n);
  struct Case {
    const char* op;
    double (*f)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {"Exp", [](double v) { return std::exp(v); }, -80, 80},
      {"Tanh", [](double v) { return std::tanh(v); }, -12, 12},
      {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, -90, 90},
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<float> x(n);
    const bool geometric = c.lo > 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u = double(i) / double(n - 1);
      x[i] = float(geometric ? c.lo * std::pow(c.hi / c.lo, u) : c.lo + (c.hi - c.lo) * u);
    }
    // Special values at both ends: in the first block and in the padded tail.
    const std::vector<float> special = {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f};
    for (size_t k = 0; k < special.size(); ++k) {
      x[k] = special[k];
      x[n - 1 - k] = special[k];
    }
    KernelTester t(c.op);
    t.Input<float>({n}, x);
    ASSERT_OK(t.Run());
    auto y = t.output(0).flat<float>();
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      const float want = float(c.f(double(x[i])));
      const float got = y[i];
      const bool same = (std::isnan(want) && std::isnan(got)) || want == got ||
                        std::fabs(double(got) - double(want)) <=
                            4e-6 * std::fabs(double(want)) + 1e-37;
      if (!same) {
        ++bad;
        ADD_FAILURE() << c.op << "(" << x[i] << ") at " << i << ": got " << got << ", want " << want;
      }
    }
  }
 }
}

TEST(UnaryMathTest, SigmoidAndSoftplusStayFiniteAtExtremes) {
  KernelTester t("Sigmoid");
  t.Input<float>({2}, {-1000.0f, 1000.0f});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2}, {0, 1});
  KernelTester s("Softplus");
  s.Input<float>({2}, {-1000.0f, 1000.0f});
  ASSERT_OK(s.Run());
  s.ExpectOutput<float>(0, {2}, {0, 1000});
}

TEST(UnaryMathTest, HalfComputesThroughFloat) {
  KernelTester t("Sqrt");
  t.Input<half>({2}, {half(4.0f), half(2.25f)});
  ASSERT_OK(t.Run());
  EXPECT_EQ(float(t.output(0).flat<half>()[0]), 2.0f);
  EXPECT_EQ(float(t.output(0).flat<half>()[1]), 1.5f);
}

TEST(ActivationTest, AttrsAndDefaults) {
  {
    KernelTester t("Onnx>LeakyRelu");  // default alpha 0.01
    t.Input<float>({3}, {-2, 0, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {-0.02f, 0, 3});
  }
  {
    KernelTester t("Onnx>Elu");
    t.Attr("alpha", 2.0f).Input<float>({2}, {-1, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {float(2 * (std::exp(-1.0) - 1)), 1});
  }
  {
    KernelTester t("Onnx>Selu");  // defaults alpha 1.6732632, gamma 1.0507010
    t.Input<float>({2}, {-1, 2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {float(1.0507010 * 1.6732632 * (std::exp(-1.0) - 1)), 2 * 1.0507010f});
  }
  {
    KernelTester t("Onnx>Celu");
    t.Attr("alpha", 2.0f).Input<float>({2}, {-1, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {float(2 * (std::exp(-0.5) - 1)), 1});
  }
  {
    // 0.5 x (1 + erf(x / sqrt 2)) and its tanh fit, values from Python's math module.
    KernelTester t("Onnx>Gelu");
    t.Input<double>({5}, {-2, -1, 0, 1, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {5}, {-0.04550026389635842, -0.15865525393145707, 0, 0.8413447460685429,
                                    2.99595030590511});
    KernelTester f("Onnx>Gelu");
    f.Attr("approximate", "tanh").Input<float>({5}, {-2, -1, 0, 1, 3});
    ASSERT_OK(f.Run());
    f.ExpectOutput<float>(0, {5}, {-0.04540230591222494f, -0.15880800939172324f, 0, 0.8411919906082768f,
                                   2.996362607918227f});
  }
  {
    KernelTester t("Onnx>HardSigmoid");  // max(0, min(1, 0.2x + 0.5))
    t.Input<float>({3}, {-5, 1, 5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {0, 0.7f, 1});
  }
  {
    KernelTester t("Onnx>ThresholdedRelu");
    t.Attr("alpha", 2.0f).Input<float>({3}, {1, 2, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {0, 0, 3});
  }
  {
    KernelTester t("Onnx>Shrink");
    t.Attr("lambd", 1.5f).Attr("bias", 1.0f).Input<int32_t>({5}, {-3, -1, 0, 1, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {5}, {-2, 0, 0, 0, 2});
  }
  {
    KernelTester t("Relu");
    t.Input<int64_t>({2}, {-4, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2}, {0, 4});
  }
}

TEST(PredicateTest, IsNaNIsInfNot) {
  {
    KernelTester t("Onnx>IsNaN");
    t.Input<float>({3}, {kNaN, 1, kInf});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {3}, {true, false, false});
  }
  {
    KernelTester t("Onnx>IsInf");
    t.Attr("detect_positive", false).Input<double>({3}, {-kInf, kInf, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {3}, {true, false, false});
  }
  {
    KernelTester t("Onnx>Not");
    t.Input<bool>({2}, {true, false});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {2}, {false, true});
  }
}

TEST(BinaryMathTest, ArithmeticOnUnsigned64AndBroadcast) {
  KernelTester t("Add");
  t.Input<uint64_t>({2, 1}, {1, 2}).Input<uint64_t>({3}, {10, 20, 30});
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint64_t>(0, {2, 3}, {11, 21, 31, 12, 22, 32});
}

TEST(BinaryMathTest, LargeBroadcastSplitsAcrossThreads) {
  // [256, 512] - [512]: enough elements for ParallelFor, with a row-wise pattern to check.
  std::vector<float> a(256 * 512), b(512), want(256 * 512);
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 512; ++j) a[i * 512 + j] = float(i);
  }
  for (int j = 0; j < 512; ++j) b[j] = float(j);
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 512; ++j) want[i * 512 + j] = float(i - j);
  }
  KernelTester t("Sub");
  t.Input<float>({256, 512}, a).Input<float>({512}, b);
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {256, 512}, want);
}

TEST(BinaryMathTest, BroadcastWritesIntoAnOperandOfTheOutputsShapeOnlyWhenNothingElseHoldsIt) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  {  // x * scalar, x held by the kernel alone (as the executor hands a last use): in place.
    Tensor x = Tensor::FromVector<float>(values, TensorShape({2, 3}));
    const void* where = x.raw_data();
    KernelTester t("Mul");
    t.Input(std::move(x)).Input<float>({}, {0.5f});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).raw_data(), where);
    t.ExpectOutput<float>(0, {2, 3}, {0.5f, 1, 1.5f, 2, 2.5f, 3});
  }
  {  // A row minus a [2, 3] held only by the kernel: the second operand's buffer.
    Tensor y = Tensor::FromVector<float>(values, TensorShape({2, 3}));
    const void* where = y.raw_data();
    KernelTester t("Sub");
    t.Input<float>({3}, {10, 20, 30}).Input(std::move(y));
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).raw_data(), where);
    t.ExpectOutput<float>(0, {2, 3}, {9, 18, 27, 6, 15, 24});
  }
  {  // Held elsewhere too: a new buffer, and the operand keeps its values.
    Tensor x = Tensor::FromVector<float>(values, TensorShape({2, 3}));
    KernelTester t("Mul");
    t.Input(x).Input<float>({}, {0.5f});
    ASSERT_OK(t.Run());
    EXPECT_NE(t.output(0).raw_data(), x.raw_data());
    EXPECT_EQ(std::vector<float>(x.flat<float>().begin(), x.flat<float>().end()), values);
    t.ExpectOutput<float>(0, {2, 3}, {0.5f, 1, 1.5f, 2, 2.5f, 3});
  }
  {  // Neither operand has the output's shape: a new buffer.
    KernelTester t("Add");
    t.Input<float>({2, 1}, {1, 2}).Input<float>({1, 3}, {10, 20, 30});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, {11, 21, 31, 12, 22, 32});
  }
  {  // A comparison's bools never take a float operand's buffer.
    KernelTester t("Less");
    t.Input<float>({2, 3}, values).Input<float>({}, {3.5f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {2, 3}, {true, true, true, false, false, false});
  }
}

TEST(BinaryMathTest, PowWithMixedExponentTypes) {
  {
    KernelTester t("Pow");
    t.Input<float>({3}, {2, 4, 9}).Input<float>({3}, {3, 0.5f, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {8, 2, 1.0f / 9});
  }
  {
    KernelTester t("Pow");  // int32 base, int64 exponent: exact
    t.Input<int32_t>({3}, {3, -2, 7}).Input<int64_t>({3}, {4, 3, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {81, -8, 1});
  }
  {
    KernelTester t("Pow");  // int64 base, float exponent: through double, truncated
    t.Input<int64_t>({2}, {4, 10}).Input<float>({}, {0.5f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2}, {2, 3});
  }
  {
    KernelTester t("Pow");  // float base, int exponent broadcast
    t.Input<float>({2, 2}, {1, 2, 3, 4}).Input<int32_t>({2}, {2, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {1, 8, 9, 64});
  }
}

// A scalar exponent of 2, 1 or -1 is computed with products and a division rather than pow;
// every value, the special ones too, is still pow's (std::pow here is the definition).
TEST(BinaryMathTest, PowBySmallIntegerConstantsIsPows) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {0.0f, -0.0f, 1.5f, -2.25f, 3e-20f, 1.7e19f, 3e38f, -inf, inf,
                                 std::numeric_limits<float>::quiet_NaN(), 1e-45f, 0.1f, -7.0f};
  for (float e : {2.0f, 1.0f, -1.0f, 3.0f}) {
    SCOPED_TRACE(::testing::Message() << "exponent " << e);
    KernelTester t("Pow");
    t.Input<float>({static_cast<int64_t>(xs.size())}, xs).Input<float>({}, {e});
    ASSERT_OK(t.Run());
    auto got = t.output(0).flat<float>();
    ASSERT_EQ(got.size(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = std::pow(xs[i], e);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << xs[i];
      } else {
        EXPECT_EQ(got[i], want) << xs[i];
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << xs[i];
      }
    }
  }
  {  // A double exponent of one element, of shape [1, 1]: the output takes the broadcast shape.
    KernelTester t("Pow");
    t.Input<double>({2}, {3, -0.5}).Input<double>({1, 1}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {1, 2}, {9, 0.25});
  }
}

TEST(BinaryMathTest, ModFollowsDivisorOrDividendSign) {
  {
    KernelTester t("Onnx>Mod");  // Python-style: sign of the divisor
    t.Input<int32_t>({4}, {7, -7, 7, -7}).Input<int32_t>({4}, {3, 3, -3, -3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {4}, {1, 2, -2, -1});
  }
  {
    KernelTester t("Onnx>Mod");  // C-style fmod: sign of the dividend
    t.Attr("fmod", true).Input<float>({4}, {7, -7, 7, -7}).Input<float>({4}, {3, 3, -3, -3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4}, {1, -1, 1, -1});
  }
  // Defined for every input (numpy's answers), never SIGFPE: x % 0 == 0, x % -1 == 0.
  for (bool fmod : {false, true}) {
    KernelTester t("Onnx>Mod");
    t.Attr("fmod", fmod)
        .Input<int64_t>({3}, {5, INT64_MIN, INT64_MIN})
        .Input<int64_t>({3}, {0, -1, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {3}, {0, 0, 0});
  }
  {
    KernelTester t("Onnx>Mod");
    t.Input<int32_t>({2}, {INT32_MIN, 4}).Input<int32_t>({2}, {-1, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2}, {0, 0});
  }
}

// Integer overflow wraps, as numpy's does (found by the structured ONNX fuzzer: UBSan flagged
// INT64_MIN * -1, which is undefined behaviour in C++).
TEST(BinaryMathTest, IntegerOverflowWrapsAround) {
  {
    KernelTester t("Mul");
    t.Input<int64_t>({3}, {INT64_MIN, INT64_MAX, 3}).Input<int64_t>({3}, {-1, 2, -4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {3}, {INT64_MIN, -2, -12});
  }
  {
    KernelTester t("Add");
    t.Input<int32_t>({2}, {INT32_MAX, INT32_MIN}).Input<int32_t>({2}, {1, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2}, {INT32_MIN, INT32_MAX});
  }
  {
    KernelTester t("Sub");
    t.Input<int64_t>({1}, {INT64_MIN}).Input<int64_t>({1}, {1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {1}, {INT64_MAX});
  }
  {
    KernelTester t("Mul");  // 65535 * 65535 = 2^32 - 2^17 + 1: 1 modulo 2^16.
    t.Input<uint16_t>({1}, {65535}).Input<uint16_t>({1}, {65535});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint16_t>(0, {1}, {1});
  }
  {
    KernelTester t("Pow");  // (2^32)^2 wraps to 0 in int64; 3^41 wraps as numpy's does.
    t.Input<int64_t>({2}, {int64_t{1} << 32, 3}).Input<int64_t>({2}, {2, 41});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2}, {0, -420491770248316829});  // 3^41 mod 2^64, as signed.
  }
  {
    KernelTester t("Pow");  // A real power beyond int32: the lowest value, never a bad cast.
    t.Input<int32_t>({2}, {10, 2}).Input<float>({2}, {1e10f, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2}, {INT32_MIN, 8});
  }
}

TEST(BinaryMathTest, BitShiftBothDirections) {
  {
    KernelTester t("Onnx>BitShift");
    t.Attr("direction", std::string("LEFT")).Input<uint8_t>({3}, {1, 3, 255}).Input<uint8_t>({3}, {3, 1, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {3}, {8, 6, 0});
  }
  {
    KernelTester t("Onnx>BitShift");
    t.Attr("direction", std::string("RIGHT")).Input<uint32_t>({2}, {16, 7}).Input<uint32_t>({}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint32_t>(0, {2}, {4, 1});
  }
}

TEST(BinaryMathTest, PReluBroadcastsSlope) {
  KernelTester t("Onnx>PRelu");
  t.Input<float>({2, 2}, {-1, 2, -3, 4}).Input<float>({2}, {0.5f, 0.25f});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 2}, {-0.5f, 2, -1.5f, 4});
}

TEST(LogicTest, ComparisonsGiveBools) {
  const std::vector<int16_t> a = {1, 2, 3};
  struct Case {
    const char* op;
    std::vector<bool> want;
  };
  for (const Case& c : {Case{"Onnx>Equal", {false, true, false}}, Case{"Onnx>Greater", {false, false, true}},
                        Case{"Onnx>Less", {true, false, false}},
                        Case{"Onnx>GreaterOrEqual", {false, true, true}},
                        Case{"Onnx>LessOrEqual", {true, true, false}}}) {
    SCOPED_TRACE(c.op);
    KernelTester t(c.op);
    t.Input<int16_t>({3}, a).Input<int16_t>({}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {3}, c.want);
  }
  for (const Case& c : {Case{"Onnx>And", {true, false, false, false}}, Case{"Onnx>Or", {true, true, true, false}},
                        Case{"Onnx>Xor", {false, true, true, false}}}) {
    SCOPED_TRACE(c.op);
    KernelTester t(c.op);
    t.Input<bool>({2, 2}, {true, true, false, false}).Input<bool>({2, 2}, {true, false, true, false});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {2, 2}, c.want);
  }
}

TEST(VariadicTest, MinMaxSumMeanBroadcastAllInputs) {
  {
    KernelTester t("Onnx>Max");
    t.Input<int32_t>({3}, {1, 5, 3}).Input<int32_t>({2, 1}, {2, 4}).Input<int32_t>({}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 3}, {2, 5, 3, 4, 5, 4});
  }
  {
    KernelTester t("Onnx>Min");
    t.Input<float>({3}, {1, kNaN, 3}).Input<float>({3}, {2, 0, -1});
    ASSERT_OK(t.Run());
    auto got = t.output(0).flat<float>();
    EXPECT_EQ(got[0], 1);
    EXPECT_TRUE(std::isnan(got[1]));
    EXPECT_EQ(got[2], -1);
  }
  {
    KernelTester t("Onnx>Sum");
    t.Input<float>({2}, {1, 2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {1, 2});
  }
  {
    KernelTester t("Onnx>Mean");
    t.Input<double>({2}, {1, 2}).Input<double>({2}, {3, 4}).Input<double>({1}, {5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {3, 11.0 / 3});
  }
}

TEST(WhereTest, BroadcastsConditionAndBranches) {
  KernelTester t("Onnx>Where");
  t.Input<bool>({2, 1}, {true, false}).Input<int64_t>({2}, {1, 2}).Input<int64_t>({}, {9});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {2, 2}, {1, 2, 9, 9});
  KernelTester s("Onnx>Where");
  s.Input<bool>({2}, {false, true});
  s.Input(Tensor::FromVector<tstring>({"a", "b"}, TensorShape({2})));
  s.Input(Tensor::FromVector<tstring>({"c", "d"}, TensorShape({2})));
  ASSERT_OK(s.Run());
  EXPECT_EQ(s.output(0).flat<tstring>()[0], "c");
  EXPECT_EQ(s.output(0).flat<tstring>()[1], "b");
}

TEST(ClipTest, OptionalBounds) {
  {
    KernelTester t("Onnx>Clip");
    t.Input<float>({4}, {-2, 0.5f, 3, kNaN}).Input<float>({}, {-1}).Input<float>({}, {1});
    ASSERT_OK(t.Run());
    auto got = t.output(0).flat<float>();
    EXPECT_EQ(got[0], -1);
    EXPECT_EQ(got[1], 0.5f);
    EXPECT_EQ(got[2], 1);
    EXPECT_TRUE(std::isnan(got[3]));
  }
  {
    KernelTester t("Onnx>Clip");  // No bounds: unchanged.
    t.Input<int8_t>({2}, {-128, 127});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int8_t>(0, {2}, {-128, 127});
  }
  {
    KernelTester t("Onnx>Clip");  // The harness gives a lone second input to the last list: max.
    t.Input<int32_t>({3}, {-5, 5, 50}).Input<int32_t>({}, {10});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {-5, 5, 10});
  }
  {
    KernelTester t("Onnx>Clip");
    t.Input<float>({1}, {1}).Input<float>({2}, {0, 1}).Input<float>({}, {2});
    EXPECT_THAT(t.Run().message(), HasSubstr("min must be a scalar"));
  }
}

TEST(CastTest, NumbersBoolsAndStrings) {
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_INT32).Input<float>({5}, {1.9f, -1.9f, kNaN, 3e10f, -3e10f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {5}, {1, -1, 0, std::numeric_limits<int32_t>::max(),
                                     std::numeric_limits<int32_t>::min()});
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_BOOL).Input<double>({3}, {0.0, -0.5, 2.0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {3}, {false, true, true});
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_HALF).Input<uint8_t>({2}, {3, 255});
    ASSERT_OK(t.Run());
    EXPECT_EQ(float(t.output(0).flat<half>()[0]), 3.0f);
    EXPECT_EQ(float(t.output(0).flat<half>()[1]), 255.0f);
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_STRING).Input<float>({4}, {0.1f, -2.5f, kInf, kNaN});
    ASSERT_OK(t.Run());
    auto s = t.output(0).flat<tstring>();
    EXPECT_EQ(s[0], "0.1");
    EXPECT_EQ(s[1], "-2.5");
    EXPECT_EQ(s[2], "INF");
    EXPECT_EQ(s[3], "NaN");
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_FLOAT).Input(Tensor::FromVector<tstring>({"0.25", "-INF", "+INF", "NaN"},
                                                             TensorShape({4})));
    ASSERT_OK(t.Run());
    auto f = t.output(0).flat<float>();
    EXPECT_EQ(f[0], 0.25f);
    EXPECT_EQ(f[1], -kInf);
    EXPECT_EQ(f[2], kInf);
    EXPECT_TRUE(std::isnan(f[3]));
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_INT64).Input(Tensor::FromVector<tstring>({"12x"}, TensorShape({1})));
    EXPECT_THAT(t.Run().message(), HasSubstr("cannot cast string \"12x\" to int64"));
  }
  {
    KernelTester t("Onnx>CastLike");
    t.Input<int64_t>({2}, {7, -1}).Input<double>({}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {7, -1});
  }
}

// ONNX Cast-19's 8-bit floats: E4M3FN's largest value is 448 (0x7e) and it has no inf, so
// 1000 and inf clamp to it with saturate and become NaN (0x7f) without; E5M2 has inf (0x7c).
TEST(CastTest, Float8SaturatesOrNot) {
  for (bool saturate : {true, false}) {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_FLOAT8_E4M3FN).Attr("saturate", saturate).Input<float>({4}, {1.0f, -1000.0f, kInf, 0.5f});
    ASSERT_OK(t.Run());
    auto y = t.output(0).flat<float8_e4m3fn>();
    EXPECT_EQ(y[0].bits, 0x38);
    EXPECT_EQ(y[1].bits, saturate ? 0xfe : 0xff);
    EXPECT_EQ(y[2].bits, saturate ? 0x7e : 0x7f);
    EXPECT_EQ(y[3].bits, 0x30);
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_FLOAT8_E5M2).Attr("saturate", false).Input<half>({2}, {half(1e5f), half(-2.0f)});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).flat<float8_e5m2>()[0].bits, 0x7c);
    EXPECT_EQ(t.output(0).flat<float8_e5m2>()[1].bits, 0xc0);
  }
  {  // Back: E4M3FNUZ 0x40 is 1.0 (bias 8), 0x80 its NaN.
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_FLOAT).Input<float8_e4m3fnuz>({2}, {float8_e4m3fnuz::FromBits(0x40), float8_e4m3fnuz::FromBits(0x80)});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).flat<float>()[0], 1.0f);
    EXPECT_TRUE(std::isnan(t.output(0).flat<float>()[1]));
  }
}

// ONNX Cast-21's 4-bit integers: floats round half to even and everything clamps.
TEST(CastTest, Int4RoundsAndClamps) {
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_INT4).Input<float>({6}, {2.5f, 3.5f, -9.0f, 100.0f, -0.5f, kNaN});
    ASSERT_OK(t.Run());
    std::vector<int> got;
    for (int4 v : t.output(0).flat<int4>()) got.push_back(v);
    EXPECT_THAT(got, ::testing::ElementsAre(2, 4, -8, 7, 0, 0));
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_UINT4).Input<int64_t>({3}, {-3, 9, 300});
    ASSERT_OK(t.Run());
    std::vector<int> got;
    for (uint4 v : t.output(0).flat<uint4>()) got.push_back(v);
    EXPECT_THAT(got, ::testing::ElementsAre(0, 9, 15));
  }
  {
    KernelTester t("Onnx>Cast");
    t.Attr("to", DT_INT8).Input<int4>({2}, {int4(-8), int4(7)});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int8_t>(0, {2}, {-8, 7});
  }
}

Tensor Axes(std::vector<int64_t> axes) {
  const int64_t n = static_cast<int64_t>(axes.size());
  return Tensor::FromVector<int64_t>(axes, TensorShape({n}));
}

// x = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] (shape [2, 2, 2]).
const std::vector<float> kCube = {1, 2, 3, 4, 5, 6, 7, 8};

TEST(ReduceTest, SumOverEachAxisSet) {
  struct Case {
    std::vector<int64_t> axes;
    bool keepdims;
    TensorShape shape;
    std::vector<float> want;
  };
  const Case cases[] = {
      {{0}, true, TensorShape({1, 2, 2}), {6, 8, 10, 12}},
      {{1}, false, TensorShape({2, 2}), {4, 6, 12, 14}},
      {{-1}, false, TensorShape({2, 2}), {3, 7, 11, 15}},
      {{0, 2}, false, TensorShape({2}), {14, 22}},
      {{2, 0}, true, TensorShape({1, 2, 1}), {14, 22}},
      {{0, 1}, false, TensorShape({2}), {16, 20}},
      {{0, 1, 2}, false, TensorShape({}), {36}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.axes));
    KernelTester t("Onnx>ReduceSum");
    t.Attr("keepdims", c.keepdims).Input<float>({2, 2, 2}, kCube).Input(Axes(c.axes));
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), c.shape);
    for (size_t i = 0; i < c.want.size(); ++i) EXPECT_EQ(t.output(0).flat<float>()[i], c.want[i]);
  }
}

TEST(LogicTest, EqualComparesStrings) {  // Equal-19.
  KernelTester t("Onnx>Equal");
  Tensor a(DT_STRING, TensorShape({3})), b(DT_STRING, TensorShape({}));
  a.flat<tstring>()[0] = "ab";
  a.flat<tstring>()[1] = "a";
  a.flat<tstring>()[2] = "";
  b.flat<tstring>()[0] = "a";
  t.Input(a).Input(b);
  ASSERT_OK(t.Run());
  t.ExpectOutput<bool>(0, {3}, {false, true, false});
}

TEST(ReduceTest, MaxAndMinOfBools) {  // ReduceMax-20 and ReduceMin-20: any and all.
  {
    KernelTester t("Onnx>ReduceMax");
    t.Attr("keepdims", false).Input<bool>({2, 2}, {false, true, false, false}).Input(Axes({1}));
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {2}, {true, false});
  }
  {
    KernelTester t("Onnx>ReduceMin");
    t.Attr("keepdims", false).Input<bool>({2, 2}, {true, true, false, true}).Input(Axes({1}));
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {2}, {true, false});
  }
}

TEST(PoolTest, AveragePoolWithDilations) {  // AveragePool-19.
  // x = 0..8 in one row; kernel 2 dilated by 3 takes (0,3), (1,4), ... with stride 2: (0,3),
  // (2,5), (4,7) -> means 1.5, 3.5, 5.5.
  KernelTester t("Onnx>AveragePool");
  t.Attr("kernel_shape", std::vector<int64_t>{2}).Attr("dilations", std::vector<int64_t>{3});
  t.Attr("strides", std::vector<int64_t>{2});
  t.Input<float>({1, 1, 9}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 3}, {1.5f, 3.5f, 5.5f});
}

TEST(PoolTest, CeilModeDropsAWindowThatStartsPastTheInput) {
  // 2 x 2 pooled by a 1 x 1 window with stride 2: ceil((2 - 1) / 2) + 1 = 2 windows per dim, but
  // the second would start at 2, past the input, so there is 1 (ONNX 1.17 and PyTorch).
  KernelTester t("Onnx>MaxPool");
  t.Attr("kernel_shape", std::vector<int64_t>{1, 1}).Attr("strides", std::vector<int64_t>{2, 2});
  t.Attr("ceil_mode", 1).Attr("produce_indices", false);
  t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 1}, {1});
}

TEST(ReduceTest, NoAxesReducesAllUnlessNoop) {
  {
    KernelTester t("Onnx>ReduceMax");
    t.Input<int32_t>({2, 3}, {4, -1, 9, 2, 8, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {1, 1}, {9});
  }
  {
    KernelTester t("Onnx>ReduceSum");
    t.Attr("noop_with_empty_axes", true).Input<float>({2}, {1, 2}).Input(Axes({}));
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {1, 2});
  }
}

TEST(ReduceTest, EveryReducerOnOneAxis) {
  // Rows [1, -2, 2] and [3, 4, 0.5] reduced over axis 1.
  const std::vector<double> x = {1, -2, 2, 3, 4, 0.5};
  struct Case {
    const char* op;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"Onnx>ReduceSum", {1, 7.5}},
      {"Onnx>ReduceMean", {1.0 / 3, 2.5}},
      {"Onnx>ReduceMax", {2, 4}},
      {"Onnx>ReduceMin", {-2, 0.5}},
      {"Onnx>ReduceProd", {-4, 6}},
      {"Onnx>ReduceL1", {5, 7.5}},
      {"Onnx>ReduceL2", {3, std::sqrt(25.25)}},
      {"Onnx>ReduceSumSquare", {9, 25.25}},
      {"Onnx>ReduceLogSum", {std::log(1.0), std::log(7.5)}},
      {"Onnx>ReduceLogSumExp", {std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(2.0)),
                           std::log(std::exp(3.0) + std::exp(4.0) + std::exp(0.5))}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    KernelTester t(c.op);
    t.Attr("keepdims", false).Input<double>({2, 3}, x).Input(Axes({1}));
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, c.want);
  }
}

TEST(ReduceTest, IntegersAccumulateWide) {
  KernelTester t("Onnx>ReduceSum");
  t.Attr("keepdims", false).Input<int8_t>({4}, {100, 100, -90, -100}).Input(Axes({0}));
  ASSERT_OK(t.Run());
  t.ExpectOutput<int8_t>(0, {}, {10});
}

// Integer reductions wrap around as numpy's do (signed overflow was undefined behaviour), and
// a mean over more elements than the type can count divides correctly.
TEST(ReduceTest, IntegerOverflowWraps) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    const char* op;
    std::vector<int64_t> x;
    int64_t want;
  };
  for (const Case& c : {Case{"Onnx>ReduceSum", {kMax, 1}, kMin}, Case{"Onnx>ReduceProd", {int64_t{1} << 62, 4}, 0},
                        Case{"Onnx>ReduceL1", {kMin}, kMin}, Case{"Onnx>ReduceSumSquare", {int64_t{1} << 32}, 0}}) {
    SCOPED_TRACE(c.op);
    KernelTester t(c.op);
    t.Attr("keepdims", false).Input<int64_t>({static_cast<int64_t>(c.x.size())}, c.x).Input(Axes({0}));
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {}, {c.want});
  }
  KernelTester mean("Onnx>ReduceMean");
  mean.Attr("keepdims", false).Input<int8_t>({256}, std::vector<int8_t>(256, 3)).Input(Axes({0}));
  ASSERT_OK(mean.Run());
  mean.ExpectOutput<int8_t>(0, {}, {3});
}

TEST(ReduceTest, LargeInputMatchesRowSums) {
  const int rows = 300, cols = 257;
  std::vector<float> x(rows * cols);
  std::vector<float> want(rows);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) x[i * cols + j] = float((i + j) % 7);
    double s = 0;
    for (int j = 0; j < cols; ++j) s += (i + j) % 7;
    want[i] = float(s / cols);
  }
  KernelTester t("Onnx>ReduceMean");
  t.Attr("keepdims", false).Input<float>({rows, cols}, x).Input(Axes({1}));
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {rows}, want);
}

TEST(ReduceTest, BadAxesAreErrors) {
  KernelTester t("Onnx>ReduceSum");
  t.Input<float>({2}, {1, 2}).Input(Axes({1}));
  EXPECT_THAT(t.Run().message(), HasSubstr("axis 1 is out of range"));
  KernelTester d("Onnx>ReduceSum");
  d.Input<float>({2}, {1, 2}).Input(Axes({0, -1}));
  EXPECT_THAT(d.Run().message(), HasSubstr("appears twice"));
}

TEST(ArgReduceTest, AxisKeepdimsAndLastIndex) {
  {
    KernelTester t("Onnx>ArgMax");
    t.Attr("axis", int64_t{1}).Input<float>({2, 3}, {1, 5, 5, 7, 2, 7});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2, 1}, {1, 0});
  }
  {
    KernelTester t("Onnx>ArgMax");
    t.Attr("axis", int64_t{1}).Attr("select_last_index", true).Input<float>({2, 3}, {1, 5, 5, 7, 2, 7});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2, 1}, {2, 2});
  }
  {
    KernelTester t("Onnx>ArgMin");
    t.Attr("keepdims", false).Input<int32_t>({3, 2}, {4, 1, 2, 8, 2, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2}, {1, 2});
  }
}

TEST(SoftmaxTest, LastAndMiddleAxes) {
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  {
    KernelTester t("Onnx>Softmax");
    t.Input<float>({2, 3}, {1, 2, 3, 1001, 1002, 1003});  // The second row must not overflow.
    ASSERT_OK(t.Run());
    const double s = e1 + e2 + e3;
    std::vector<float> row = {float(e1 / s), float(e2 / s), float(e3 / s)};
    t.ExpectOutput<float>(0, {2, 3}, {row[0], row[1], row[2], row[0], row[1], row[2]});
  }
  {
    KernelTester t("Onnx>LogSoftmax");  // axis 0 of [2, 2]: columns (1, 3) and (2, 2)
    t.Attr("axis", int64_t{0}).Input<double>({2, 2}, {1, 2, 3, 2});
    ASSERT_OK(t.Run());
    const double l13 = std::log(e1 + e3), l22 = std::log(2 * e2);
    t.ExpectOutput<double>(0, {2, 2}, {1 - l13, 2 - l22, 3 - l13, 2 - l22});
  }
  {
    KernelTester t("Onnx>Hardmax");  // ties go to the first
    t.Attr("axis", int64_t{1}).Input<float>({1, 3, 2}, {1, 4, 3, 4, 3, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 3, 2}, {0, 1, 1, 0, 0, 0});
  }
}

// Float rows of the last axis run their max and sum in eight partials: rows of 1, 8 and 19
// values, the max in a partial's lane or in the remainder, against double arithmetic.
TEST(SoftmaxTest, FloatRowsOfEveryLengthAgainstDouble) {
  for (int64_t n : {1, 8, 19}) {
    for (int64_t peak : {int64_t{0}, n / 2, n - 1}) {
      std::vector<float> x(2 * n);
      for (int64_t i = 0; i < 2 * n; ++i) x[i] = std::sin(0.9f * i) * 4 - 50 * (i >= n);
      x[peak] = 9;
      std::vector<float> want(2 * n);
      for (int64_t r = 0; r < 2; ++r) {
        double best = x[r * n], sum = 0;
        for (int64_t i = 0; i < n; ++i) best = std::max(best, double{x[r * n + i]});
        for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - best);
        for (int64_t i = 0; i < n; ++i) want[r * n + i] = float(std::exp(x[r * n + i] - best) / sum);
      }
      KernelTester t("Onnx>Softmax");
      t.Input<float>({2, n}, x);
      ASSERT_OK(t.Run());
      t.ExpectOutput<float>(0, {2, n}, want);
    }
  }
}

TEST(CumSumTest, ExclusiveAndReverse) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  struct Case {
    bool exclusive, reverse;
    std::vector<float> want;
  };
  for (const Case& c : {Case{false, false, {1, 3, 6, 4, 9, 15}}, Case{true, false, {0, 1, 3, 0, 4, 9}},
                        Case{false, true, {6, 5, 3, 15, 11, 6}}, Case{true, true, {5, 3, 0, 11, 6, 0}}}) {
    KernelTester t("Onnx>CumSum");
    t.Attr("exclusive", c.exclusive).Attr("reverse", c.reverse);
    t.Input<float>({2, 3}, x).Input<int32_t>({}, {1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, c.want);
  }
  KernelTester t("Onnx>CumSum");  // axis 0
  t.Input<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int64_t>({1}, {0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {2, 3}, {1, 2, 3, 5, 7, 9});
}

// Integer running sums wrap as numpy's do (signed overflow was undefined behaviour).
TEST(CumSumTest, IntegerOverflowWraps) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  KernelTester t("Onnx>CumSum");
  t.Input<int64_t>({3}, {kMax, 1, 1}).Input<int64_t>({}, {0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {3}, {kMax, kMin, kMin + 1});
}

TEST(TopKTest, LargestSmallestAndTies) {
  {
    KernelTester t("Onnx>TopK");
    t.Input<float>({2, 4}, {3, 1, 3, 2, 0, 9, 8, 9}).Input<int64_t>({1}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {3, 3, 9, 9});
    t.ExpectOutput<int64_t>(1, {2, 2}, {0, 2, 1, 3});
  }
  {
    KernelTester t("Onnx>TopK");  // smallest along axis 0
    t.Attr("largest", false).Attr("axis", int64_t{0});
    t.Input<int32_t>({3, 2}, {5, 1, 2, 1, 7, 0}).Input<int64_t>({1}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 2}, {2, 0, 5, 1});
    t.ExpectOutput<int64_t>(1, {2, 2}, {1, 2, 0, 0});
  }
  {
    KernelTester t("Onnx>TopK");
    t.Input<float>({3}, {1, 2, 3}).Input<int64_t>({1}, {4});
    EXPECT_THAT(t.Run().message(), HasSubstr("K = 4 is outside [0, 3]"));
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// SumToShape, the backward of broadcasting: trailing summed dims go block by block (a bias
// gradient [N, C, H, W] -> [C, 1, 1]), others element by element; both against sums written
// out here.
TEST(SumToShapeTest, BlocksAndElements) {
  std::vector<float> x(2 * 3 * 2 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3;
  auto at = [&](int n, int c, int h, int w) { return x[((n * 3 + c) * 2 + h) * 2 + w]; };
  {
    KernelTester t("SumToShape");
    t.Input<float>({2, 3, 2, 2}, x).Input<int64_t>({3}, {3, 1, 1});
    ASSERT_OK(t.Run());
    std::vector<float> want(3, 0);
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 2; ++h)
          for (int w = 0; w < 2; ++w) want[c] += at(n, c, h, w);
    t.ExpectOutput<float>(0, {3, 1, 1}, want);
  }
  {
    KernelTester t("SumToShape");  // Everything into one element: one block.
    t.Input<float>({2, 3, 2, 2}, x).Input<int64_t>({1}, {1});
    ASSERT_OK(t.Run());
    float total = 0;
    for (float v : x) total += v;
    t.ExpectOutput<float>(0, {1}, {total});
  }
  {
    KernelTester t("SumToShape");  // The leading dims summed, the last kept: row by row.
    t.Input<float>({2, 3, 2, 2}, x).Input<int64_t>({2}, {2, 2});
    ASSERT_OK(t.Run());
    std::vector<float> want(4, 0);
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 2; ++h)
          for (int w = 0; w < 2; ++w) want[h * 2 + w] += at(n, c, h, w);
    t.ExpectOutput<float>(0, {2, 2}, want);
  }
  {
    KernelTester t("SumToShape");  // A summed dim between kept ones: rows, then the walk.
    t.Input<float>({2, 3, 2, 2}, x).Input<int64_t>({4}, {2, 1, 2, 2});
    ASSERT_OK(t.Run());
    std::vector<float> want(8, 0);
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 2; ++h)
          for (int w = 0; w < 2; ++w) want[(n * 2 + h) * 2 + w] += at(n, c, h, w);
    t.ExpectOutput<float>(0, {2, 1, 2, 2}, want);
  }
  {
    KernelTester t("SumToShape");  // The last dim summed, the ones before kept: blocks, then the walk.
    t.Input<float>({2, 3, 2, 2}, x).Input<int64_t>({3}, {3, 2, 1});
    ASSERT_OK(t.Run());
    std::vector<float> want(6, 0);
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 2; ++h)
          for (int w = 0; w < 2; ++w) want[c * 2 + h] += at(n, c, h, w);
    t.ExpectOutput<float>(0, {3, 2, 1}, want);
  }
}

// Clip's gradient from its output Y: dY where min < Y < max (an output on a bound came from an
// input on or past it: none, as PyTorch's), 0 elsewhere; scalar bounds.
TEST(ClipGradTest, PassesTheGradientInsideTheBounds) {
  KernelTester t("ClipGrad");
  t.Input<float>({6}, {1, 2, 3, 4, 5, 6})
      .Input<float>({6}, {-1, 0, 3, 6, 6.5f, 2})
      .Input<float>({}, {0})
      .Input<float>({}, {6});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {6}, {0, 0, 3, 0, 0, 6});
  KernelTester bad("ClipGrad");
  bad.Input<float>({2}, {1, 2}).Input<float>({2}, {0, 1}).Input<float>({2}, {0, 0}).Input<float>({}, {6});
  EXPECT_FALSE(bad.Run().ok());
}

// Lengths past one vector of 8, with a tail, values on both bounds, NaN and infinities.
TEST(ClipGradTest, VectorsAndTailMatchTheDefinition) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-1, 0, 0.5f, 6, 6.01f, nan, inf, -inf, 3, 2, -0.0f, 5.99f, 7, 1, 0, 6, 4, -3, 2.5f};
  std::vector<float> dy(x.size());
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(i) + 1;
  for (const char* op : {"ClipGrad", "ReluGrad"}) {
    SCOPED_TRACE(op);
    const bool clip = std::string(op) == "ClipGrad";
    KernelTester t(op);
    t.Input<float>({static_cast<int64_t>(x.size())}, dy).Input<float>({static_cast<int64_t>(x.size())}, x);
    if (clip) t.Input<float>({}, {0}).Input<float>({}, {6});
    ASSERT_OK(t.Run());
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = (clip ? x[i] > 0 && x[i] < 6 : x[i] > 0) ? dy[i] : 0;
    t.ExpectOutput<float>(0, {static_cast<int64_t>(x.size())}, want);
  }
}

// TensorFlow's SigmoidGrad and TanhGrad from the activation's output y: vectors and a tail.
TEST(ActivationGradTest, SigmoidAndTanhFromTheirOutputs) {
  std::vector<float> y, dy;
  for (int i = 0; i < 11; ++i) {
    y.push_back(std::tanh(static_cast<float>(i) * 0.3f - 1.5f));
    dy.push_back(static_cast<float>(i) * 0.25f - 1);
  }
  for (const char* op : {"SigmoidGrad", "TanhGrad"}) {
    SCOPED_TRACE(op);
    const bool sigmoid = std::string(op) == "SigmoidGrad";
    KernelTester t(op);
    t.Input<float>({11}, y).Input<float>({11}, dy);
    ASSERT_OK(t.Run());
    std::vector<float> want;
    for (int i = 0; i < 11; ++i) want.push_back(sigmoid ? dy[i] * y[i] * (1 - y[i]) : dy[i] * (1 - y[i] * y[i]));
    for (int i = 0; i < 11; ++i) EXPECT_FLOAT_EQ(t.output(0).flat<float>()[i], want[i]) << i;
  }
  KernelTester bad("SigmoidGrad");
  bad.Input<float>({2}, {0.5f, 0.5f}).Input<float>({3}, {1, 1, 1});
  EXPECT_FALSE(bad.Run().ok());
}

TEST(ReluGradTest, PassesTheGradientWhereTheInputIsPositive) {
  KernelTester t("ReluGrad");
  t.Input<float>({5}, {1, 2, 3, 4, 5}).Input<float>({5}, {-1, 0, 0.5f, -0.0f, 7});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {5}, {0, 0, 3, 0, 5});
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// TensorFlow's BatchMatMulV2 takes matrices only ("In[1] ndims must be >= 2"); with
// vector_operands (ONNX MatMul) a 1-D x is a row and a 1-D y a column, its unit dim dropped.
TEST(BatchMatMulV2Test, VectorsOnlyWithVectorOperands) {
  KernelTester tf("BatchMatMulV2");
  tf.Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2}, {2, 3});
  ExpectInvalid(tf, "In[1] ndims must be >= 2: 1");
  KernelTester tf_x("BatchMatMulV2");
  tf_x.Input<float>({2}, {2, 3}).Input<float>({2, 2}, {1, 2, 3, 4});
  ExpectInvalid(tf_x, "In[0] ndims must be >= 2: 1");

  KernelTester mat_vec("BatchMatMulV2");
  mat_vec.Attr("vector_operands", true).Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2}, {2, 3});
  ASSERT_OK(mat_vec.Run());
  mat_vec.ExpectOutput<float>(0, {2}, {8, 18});
  KernelTester vec_mat("BatchMatMulV2");
  vec_mat.Attr("vector_operands", true).Input<float>({2}, {2, 3}).Input<float>({2, 2}, {1, 2, 3, 4});
  ASSERT_OK(vec_mat.Run());
  vec_mat.ExpectOutput<float>(0, {2}, {11, 16});
  KernelTester vec_vec("BatchMatMulV2");
  vec_vec.Attr("vector_operands", true).Input<int32_t>({2}, {2, 3}).Input<int32_t>({2}, {4, 5});
  ASSERT_OK(vec_vec.Run());
  vec_vec.ExpectOutput<int32_t>(0, {}, {23});

  KernelTester matrices("BatchMatMulV2");  // Unchanged for matrices: [1, 2] x [2, 1].
  matrices.Input<float>({1, 2}, {2, 3}).Input<float>({2, 1}, {4, 5});
  ASSERT_OK(matrices.Run());
  matrices.ExpectOutput<float>(0, {1, 1}, {23});
}

// BatchMatMulSum = SumToShape(BatchMatMulV2(a, b)): its one-product paths (every batch summed to
// one matrix; B shared and nothing summed) and its general path (a target that keeps some batch
// dims, operands broadcast against each other), against products and sums written out.
TEST(BatchMatMulSumTest, MatchesProductsSummedWrittenOut) {
  struct Case {
    std::vector<int64_t> a, b, target;
    bool adj_x, adj_y;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 6}, {5, 6}, true, false},    // Weight gradient: one product.
      {{2, 3, 4, 5}, {6, 5}, {2, 3, 4, 6}, false, true},    // Input gradient, B shared.
      {{3, 4, 5}, {2, 1, 5, 6}, {2, 1, 4, 6}, false, false},  // Broadcast both ways, partly summed.
      {{2, 3, 5, 4}, {3, 6, 5}, {1, 3, 4, 6}, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << TensorShape(c.a).DebugString() << " x " << TensorShape(c.b).DebugString());
    auto fill = [](const std::vector<int64_t>& dims, float scale) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      std::vector<float> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) * 0.5f;
      return v;
    };
    const std::vector<float> a = fill(c.a, 0.37f), b = fill(c.b, 0.91f);
    const int ar = static_cast<int>(c.a.size()), br = static_cast<int>(c.b.size());
    const int64_t m = c.adj_x ? c.a[ar - 1] : c.a[ar - 2], k = c.adj_x ? c.a[ar - 2] : c.a[ar - 1];
    const int64_t n = c.adj_y ? c.b[br - 2] : c.b[br - 1];
    // The product's batch: a's and b's batch dims broadcast, right-aligned.
    const int rank = std::max(ar, br) - 2;
    std::vector<int64_t> batch(rank, 1);
    for (int d = 0; d < rank; ++d) {
      const int da = d - (rank - (ar - 2)), db = d - (rank - (br - 2));
      batch[d] = std::max(da >= 0 ? c.a[da] : 1, db >= 0 ? c.b[db] : 1);
    }
    const int tr = static_cast<int>(c.target.size()) - 2;
    std::vector<double> want(m * n * [&] {
      int64_t t = 1;
      for (int d = 0; d < tr; ++d) t *= c.target[d];
      return t;
    }(), 0.0);
    int64_t batches = 1;
    for (int64_t d : batch) batches *= d;
    for (int64_t o = 0; o < batches; ++o) {
      std::vector<int64_t> idx(rank);
      for (int64_t rest = o, d = rank - 1; d >= 0; --d) {
        idx[d] = rest % batch[d];
        rest /= batch[d];
      }
      auto offset = [&](const std::vector<int64_t>& dims, int own) {
        int64_t off = 0;
        for (int d = 0; d < rank; ++d) {
          const int dd = d - (rank - own);
          if (dd >= 0) off = off * dims[dd] + (dims[dd] == 1 ? 0 : idx[d]);
        }
        return off;
      };
      const int64_t ao = offset(c.a, ar - 2) * m * k, bo = offset(c.b, br - 2) * k * n;
      const int64_t to = offset(c.target, tr) * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t p = 0; p < k; ++p) {
            const float av = c.adj_x ? a[ao + p * m + i] : a[ao + i * k + p];
            const float bv = c.adj_y ? b[bo + j * k + p] : b[bo + p * n + j];
            want[to + i * n + j] += static_cast<double>(av) * bv;
          }
        }
      }
    }
    KernelTester t("BatchMatMulSum");
    t.Attr("adj_x", c.adj_x).Attr("adj_y", c.adj_y);
    t.Input<float>(c.a, a).Input<float>(c.b, b).Input<int64_t>({static_cast<int64_t>(c.target.size())}, c.target);
    ASSERT_OK(t.Run());
    ASSERT_EQ(t.output(0).shape(), TensorShape(c.target));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.output(0).flat<float>()[i], want[i], 1e-4) << i;
  }
  KernelTester bad("BatchMatMulSum");  // A target the product's batch does not sum to.
  bad.Attr("adj_x", false).Attr("adj_y", false);
  bad.Input<float>({2, 2, 3}, std::vector<float>(12, 1)).Input<float>({3, 2}, std::vector<float>(6, 1));
  bad.Input<int64_t>({3}, {3, 2, 2});
  EXPECT_FALSE(bad.Run().ok());
  KernelTester huge("BatchMatMulSum");  // A hostile target: refused, nothing allocated for it.
  huge.Attr("adj_x", false).Attr("adj_y", false);
  huge.Input<float>({2, 2, 3}, std::vector<float>(12, 1)).Input<float>({3, 2}, std::vector<float>(6, 1));
  huge.Input<int64_t>({3}, {int64_t{1} << 62, 2, 2});
  EXPECT_FALSE(huge.Run().ok());
  KernelTester negative("BatchMatMulSum");
  negative.Attr("adj_x", false).Attr("adj_y", false);
  negative.Input<float>({2, 2, 3}, std::vector<float>(12, 1)).Input<float>({3, 2}, std::vector<float>(6, 1));
  negative.Input<int64_t>({3}, {-2, 2, 2});
  EXPECT_FALSE(negative.Run().ok());
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// ConvBackpropFilter of depthwise convolutions (its direct per-channel path where oneDNN has
// only a GEMM-based kernel, and oneDNN's own elsewhere), against the sums written out: 5x5 taps
// with stride 2 and padding, and 3x3 dilated taps, over two images.
TEST(ConvBackpropFilterTest, DepthwiseMatchesTheSumsWrittenOut) {
  struct Case {
    int64_t k, stride, dilation, pad;
  };
  for (const Case& c : {Case{5, 2, 1, 2}, Case{5, 1, 1, 2}, Case{3, 1, 2, 1}, Case{3, 3, 1, 0}}) {
    SCOPED_TRACE(::testing::Message() << "kernel " << c.k << " stride " << c.stride << " dilation " << c.dilation);
    const int64_t n = 2, ch = 6, h = 9, w = 10;
    const int64_t span = (c.k - 1) * c.dilation + 1;
    const int64_t oh = (h + 2 * c.pad - span) / c.stride + 1, ow = (w + 2 * c.pad - span) / c.stride + 1;
    std::vector<float> x(n * ch * h * w), dy(n * ch * oh * ow);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7f);
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::cos(static_cast<float>(i) * 0.3f);
    std::vector<double> want(ch * c.k * c.k, 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t q = 0; q < ch; ++q)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t o = 0; o < ow; ++o)
            for (int64_t i = 0; i < c.k; ++i)
              for (int64_t j = 0; j < c.k; ++j) {
                const int64_t ih = r * c.stride - c.pad + i * c.dilation, iw = o * c.stride - c.pad + j * c.dilation;
                if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                want[(q * c.k + i) * c.k + j] += static_cast<double>(dy[((b * ch + q) * oh + r) * ow + o]) *
                                                 x[((b * ch + q) * h + ih) * w + iw];
              }
    KernelTester t("Onnx>ConvBackpropFilter");
    t.Attr("group", int64_t{ch})
        .Attr("strides", std::vector<int64_t>{c.stride, c.stride})
        .Attr("dilations", std::vector<int64_t>{c.dilation, c.dilation})
        .Attr("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
    t.Input<float>({n, ch, h, w}, x).Input<float>({n, ch, oh, ow}, dy).Input<int64_t>({4}, {ch, 1, c.k, c.k});
    ASSERT_OK(t.Run());
    ASSERT_EQ(t.output(0).NumElements(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.output(0).flat<float>()[i], want[i], 1e-3) << i;
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// 1x1 convolutions of NCHW tensors (plain matrix products per image, no oneDNN): Conv,
// ConvBackpropInput and ConvBackpropFilter, grouped and not, against sums written out.
TEST(ConvTest, OneByOneProductsMatchTheSumsWrittenOut) {
  for (int64_t group : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << "group " << group);
    const int64_t n = 2, c = 4, m = 6, hw = 15, cg = c / group, mg = m / group;
    std::vector<float> x(n * c * hw), w(m * cg), dy(n * m * hw);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.9f);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(static_cast<float>(i) * 0.4f);
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::sin(static_cast<float>(i) * 0.2f + 1);
    std::vector<double> y(n * m * hw, 0.0), dx(n * c * hw, 0.0), dw(m * cg, 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t k = 0; k < cg; ++k)
          for (int64_t q = 0; q < hw; ++q) {
            const int64_t xi = (b * c + (o / mg) * cg + k) * hw + q, yi = (b * m + o) * hw + q;
            y[yi] += static_cast<double>(w[o * cg + k]) * x[xi];
            dx[xi] += static_cast<double>(w[o * cg + k]) * dy[yi];
            dw[o * cg + k] += static_cast<double>(dy[yi]) * x[xi];
          }
    auto expect = [](const Tensor& got, const std::vector<double>& want) {
      ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.flat<float>()[i], want[i], 1e-4) << i;
    };
    KernelTester conv("Onnx>Conv");
    conv.Attr("group", group);  // Without a bias (the tester gives optional inputs no list types).
    conv.Input<float>({n, c, 3, 5}, x).Input<float>({m, cg, 1, 1}, w);
    ASSERT_OK(conv.Run());
    expect(conv.output(0), y);
    KernelTester input("Onnx>ConvBackpropInput");
    input.Attr("group", group);
    input.Input<float>({n, m, 3, 5}, dy).Input<float>({m, cg, 1, 1}, w).Input<int64_t>({4}, {n, c, 3, 5});
    ASSERT_OK(input.Run());
    expect(input.output(0), dx);
    KernelTester filter("Onnx>ConvBackpropFilter");
    filter.Attr("group", group);
    filter.Input<float>({n, c, 3, 5}, x).Input<float>({n, m, 3, 5}, dy).Input<int64_t>({4}, {m, cg, 1, 1});
    ASSERT_OK(filter.Run());
    expect(filter.output(0), dw);
  }
}

// TensorFlow's Select, Atan2, Log1p, Expm1 and Round on integers (for the eager API's users).
TEST(UnaryMathTest, ReluKeepsNaN) {
  KernelTester t("Relu");
  t.Input<float>({3}, {2, std::nanf(""), -1});
  ASSERT_OK(t.Run());
  auto y = t.output(0).flat<float>();
  EXPECT_EQ(y[0], 2);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], 0);
}

TEST(TfMathTest, SelectPicksElementsWholeRowsOrAll) {
  {
    KernelTester t("Select");
    t.Input<bool>({2, 2}, {true, false, false, true}).Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2, 2}, {5, 6, 7, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {1, 6, 7, 4});
  }
  {
    KernelTester t("Select");  // A vector picks rows.
    t.Input<bool>({2}, {false, true}).Input<int32_t>({2, 2}, {1, 2, 3, 4}).Input<int32_t>({2, 2}, {5, 6, 7, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 2}, {5, 6, 3, 4});
  }
  {
    KernelTester t("Select");  // A scalar picks everything.
    t.Input<bool>({}, {false}).Input<float>({3}, {1, 2, 3}).Input<float>({3}, {4, 5, 6});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {4, 5, 6});
  }
  {
    KernelTester t("Select");  // No broadcasting: [3] against [2, 3].
    t.Input<bool>({3}, {true, true, false}).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2, 3}, {0, 0, 0, 0, 0, 0});
    ExpectInvalid(t, "must be a scalar, a vector of size t's first dim");
  }
  {
    KernelTester t("Select");
    t.Input<bool>({2}, {true, false}).Input<float>({2}, {1, 2}).Input<float>({3}, {1, 2, 3});
    ExpectInvalid(t, "'then' and 'else' must have the same size");
  }
}

TEST(TfMathTest, Atan2Log1pExpm1AndIntegerRound) {
  {
    KernelTester t("Atan2");  // Quadrants: atan2(1, 1) = pi/4, atan2(1, -1) = 3pi/4, atan2(-1, -1) = -3pi/4.
    t.Input<float>({3}, {1, 1, -1}).Input<float>({3}, {1, -1, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {0.78539816f, 2.35619449f, -2.35619449f});
  }
  {
    KernelTester t("Log1p");  // log1p(1e-10) = 1e-10 - 5e-21: exact where log(1 + x) rounds to 0.
    t.Input<double>({2}, {1e-10, 1.718281828459045});
    ASSERT_OK(t.Run());
    EXPECT_NEAR(t.output(0).flat<double>()[0], 1e-10 - 5e-21, 1e-25);
    EXPECT_NEAR(t.output(0).flat<double>()[1], 1.0, 1e-12);
  }
  {
    KernelTester t("Expm1");  // expm1(1e-10) = 1e-10 + 5e-21.
    t.Input<double>({2}, {1e-10, 0.6931471805599453});
    ASSERT_OK(t.Run());
    EXPECT_NEAR(t.output(0).flat<double>()[0], 1e-10 + 5e-21, 1e-25);
    EXPECT_NEAR(t.output(0).flat<double>()[1], 1.0, 1e-12);
  }
  {
    KernelTester t("Round");
    t.Input<int32_t>({3}, {-7, 0, 2147483647});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {-7, 0, 2147483647});
  }
}

}  // namespace
}  // namespace sluice
