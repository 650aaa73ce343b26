// TensorFlow's complex-number kernels against values worked out by hand.
#include <complex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using C = complex64;

void ExpectComplexNear(const Tensor& t, std::vector<C> want) {
  auto got = t.flat<C>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), 1e-5) << "element " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), 1e-5) << "element " << i;
  }
}

TEST(TfComplexTest, ComplexBroadcastsAndPartsComeBack) {
  KernelTester t("Complex");
  t.Attr("Tout", DT_COMPLEX64).Input<float>({2}, {1, 3}).Input<float>({}, {-2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<C>(0, {2}, {C(1, -2), C(3, -2)});

  KernelTester re("Real"), im("Imag"), abs("ComplexAbs"), conj("Conj");
  for (KernelTester* k : {&re, &im, &abs, &conj}) k->Input<C>({2}, {C(3, 4), C(-1, 0.5f)});
  for (KernelTester* k : {&re, &im, &abs, &conj}) ASSERT_OK(k->Run());
  re.ExpectOutput<float>(0, {2}, {3, -1});
  im.ExpectOutput<float>(0, {2}, {4, 0.5f});
  abs.ExpectOutput<float>(0, {2}, {5, 1.11803399f});  // sqrt(1 + 0.25).
  conj.ExpectOutput<C>(0, {2}, {C(3, -4), C(-1, -0.5f)});
}

TEST(TfComplexTest, ArithmeticOnComplexNumbers) {
  KernelTester mul("Mul"), add("AddV2"), div("Div");
  for (KernelTester* k : {&mul, &add, &div}) k->Input<C>({1}, {C(1, 2)}).Input<C>({1}, {C(3, 4)});
  for (KernelTester* k : {&mul, &add, &div}) ASSERT_OK(k->Run());
  mul.ExpectOutput<C>(0, {1}, {C(-5, 10)});  // (1+2i)(3+4i) = 3 + 4i + 6i - 8.
  add.ExpectOutput<C>(0, {1}, {C(4, 6)});
  ExpectComplexNear(div.output(0), {C(0.44f, 0.08f)});  // (1+2i)(3-4i)/25 = (11 + 2i)/25.
}

TEST(TfComplexTest, FftOfInnermostRowsAndItsInverse) {
  KernelTester fft("FFT");
  // Two rows: an impulse (all ones) and 1, 2, 3, 4 (10, -2+2i, -2, -2-2i).
  fft.Input<C>({2, 4}, {C(1), C(0), C(0), C(0), C(1), C(2), C(3), C(4)});
  ASSERT_OK(fft.Run());
  ExpectComplexNear(fft.output(0), {C(1), C(1), C(1), C(1), C(10), C(-2, 2), C(-2), C(-2, -2)});

  KernelTester ifft("IFFT");  // Scaled by 1/n: back to 1, 2, 3, 4.
  ifft.Input<C>({4}, {C(10), C(-2, 2), C(-2), C(-2, -2)});
  ASSERT_OK(ifft.Run());
  ExpectComplexNear(ifft.output(0), {C(1), C(2), C(3), C(4)});

  KernelTester odd("FFT");  // Length 3 (not a power of two): [1, 1, 1] -> [3, 0, 0].
  odd.Input<C>({3}, {C(1), C(1), C(1)});
  ASSERT_OK(odd.Run());
  ExpectComplexNear(odd.output(0), {C(3), C(0), C(0)});

  KernelTester empty("FFT");
  empty.Input<C>({2, 0}, {});
  ASSERT_OK(empty.Run());
  EXPECT_EQ(empty.output(0).NumElements(), 0);
}

TEST(TfComplexTest, CastsToAndFromComplex) {
  KernelTester in("Cast");  // Numbers become real parts.
  in.Attr("DstT", DT_COMPLEX64).Input<int32_t>({2}, {-3, 7});
  ASSERT_OK(in.Run());
  in.ExpectOutput<C>(0, {2}, {C(-3, 0), C(7, 0)});

  KernelTester out("Cast");  // Complex numbers become their real parts...
  out.Attr("DstT", DT_FLOAT).Input<C>({2}, {C(1.5f, 2), C(-4, 9)});
  ASSERT_OK(out.Run());
  out.ExpectOutput<float>(0, {2}, {1.5f, -4});

  KernelTester to_bool("Cast");  // ...to bool too: whether the real part is nonzero.
  to_bool.Attr("DstT", DT_BOOL).Input<C>({3}, {C(0, 0), C(0, 1), C(2, 0)});
  ASSERT_OK(to_bool.Run());
  to_bool.ExpectOutput<bool>(0, {3}, {false, false, true});

  KernelTester to_string("Cast");
  to_string.Attr("DstT", DT_STRING).Input<C>({1}, {C(1, 1)});
  EXPECT_FALSE(to_string.Run().ok());
}

TEST(TfComplexTest, MisuseIsAnError) {
  KernelTester scalar("FFT");
  scalar.Input<C>({}, {C(1)});
  ExpectInvalid(scalar, "rank at least 1");

  KernelTester shapes("Complex");
  shapes.Attr("Tout", DT_COMPLEX64).Input<float>({2}, {1, 2}).Input<float>({3}, {1, 2, 3});
  EXPECT_FALSE(shapes.Run().ok());

  KernelTester wide("Complex");  // float parts make complex64, not complex128.
  wide.Attr("Tout", DT_COMPLEX128).Input<float>({1}, {1}).Input<float>({1}, {2});
  ExpectInvalid(wide, "makes complex64");
}

}  // namespace
}  // namespace sluice
