// ImageDecoder against PIL: image_decoder_cases.inc holds a 3 x 2 image that PIL encoded in
// each format with PIL's decoding of those bytes (written by image_decoder_cases.py). Then
// BGR order, and streams that are truncated, garbage or declare too many pixels: each fails
// with a status, never a crash.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

#include "kernels/image_decoder_cases.inc"

absl::Status Decode(const std::vector<uint8_t>& data, const std::string& format, Tensor* out) {
  KernelTester t("Onnx>ImageDecoder");
  t.Attr("pixel_format", format).Input<uint8_t>({static_cast<int64_t>(data.size())}, data);
  SL_RETURN_IF_ERROR(t.Run());
  *out = t.output(0);
  return absl::OkStatus();
}

std::vector<uint8_t> Values(const Tensor& t) {
  return std::vector<uint8_t>(t.data<uint8_t>(), t.data<uint8_t>() + t.NumElements());
}

TEST(ImageDecoderTest, EveryFormatAsPilDecodesIt) {
  for (const ImageCase& c : kImageCases) {
    SCOPED_TRACE(c.name);
    Tensor rgb, bgr, gray;
    ASSERT_OK(Decode(c.data, "RGB", &rgb));
    EXPECT_EQ(rgb.shape(), TensorShape({2, 3, 3}));
    EXPECT_EQ(Values(rgb), c.rgb);
    ASSERT_OK(Decode(c.data, "Grayscale", &gray));
    EXPECT_EQ(gray.shape(), TensorShape({2, 3, 1}));
    EXPECT_EQ(Values(gray), c.gray);
    ASSERT_OK(Decode(c.data, "BGR", &bgr));
    std::vector<uint8_t> want = c.rgb;
    for (size_t i = 0; i < want.size(); i += 3) std::swap(want[i], want[i + 2]);
    EXPECT_EQ(Values(bgr), want);
  }
}

TEST(ImageDecoderTest, TruncatedAndGarbageStreamsFail) {
  for (const ImageCase& c : kImageCases) {
    SCOPED_TRACE(c.name);
    // Every prefix that keeps the magic but cuts the rest short.
    for (size_t n = 4; n < c.data.size(); n += std::max<size_t>(1, c.data.size() / 16)) {
      Tensor out;
      std::vector<uint8_t> part(c.data.begin(), c.data.begin() + n);
      absl::Status s = Decode(part, "RGB", &out);
      // libjpeg pads a cut scan with gray and says so only as a warning: OK is fine as long
      // as the shape is the header's.
      if (s.ok()) {
        EXPECT_EQ(out.shape(), TensorShape({2, 3, 3})) << n;
      } else {
        EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kUnimplemented)
            << n << ": " << s;
      }
    }
  }
  Tensor out;
  absl::Status s = Decode({1, 2, 3, 4, 5}, "RGB", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("not a JPEG, PNG"), std::string::npos) << s;
  EXPECT_FALSE(Decode({}, "RGB", &out).ok());
}

TEST(ImageDecoderTest, TooManyPixelsAreRefusedBeforeAllocating) {
  // A PNM header declaring 100000 x 100000 pixels, and a BMP's 2^31 - 1 x 2^31 - 1.
  std::string pnm = "P6\n100000 100000\n255\n";
  Tensor out;
  absl::Status s = Decode(std::vector<uint8_t>(pnm.begin(), pnm.end()), "RGB", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  std::vector<uint8_t> bmp = kImageCases[2].data;
  ASSERT_EQ(std::string(kImageCases[2].name), "bmp");
  for (int i : {18, 22}) {
    bmp[i] = 0xFF, bmp[i + 1] = 0xFF, bmp[i + 2] = 0xFF, bmp[i + 3] = 0x7F;
  }
  s = Decode(bmp, "RGB", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kInternal) << s;
}

}  // namespace
}  // namespace sluice
