// EncodePng, EncodeJpeg and DecodePng (tf_image_codec_ops.cc): images encoded and decoded
// again, through DecodePng and ImageDecoder (8-bit gray and RGB) and through libpng here (16-bit
// samples, alpha, so that DecodePng is not checked only against itself); PNG exactly, JPEG at
// quality 95 within a small error. Then the JPEG header fields the attrs set, DecodePng's
// channel and depth conversions, and bad shapes, dtypes, attrs and streams as errors.
#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <png.h>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

// A smooth, varied test image: h x w x c values.
std::vector<uint8_t> Image(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(h * w * c);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) v[(y * w + x) * c + ch] = static_cast<uint8_t>((y * 7 + x * 5 + ch * 60) % 256);
  return v;
}

// A smooth gradient (no wrap-around edges), for the lossy JPEG round trips.
std::vector<uint8_t> SmoothImage(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(h * w * c);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) v[(y * w + x) * c + ch] = static_cast<uint8_t>(30 + y * 5 + x * 3 + ch * 20);
  return v;
}

std::string Encoded(const KernelTester& t) {
  EXPECT_EQ(t.output(0).dtype(), DT_STRING);
  EXPECT_EQ(t.output(0).dims(), 0);
  return t.output(0).data<tstring>()[0];
}

// ImageDecoder's reading of `bytes` in `format` (RGB or Grayscale).
std::vector<uint8_t> Decode(const std::string& bytes, const std::string& format, TensorShape* shape) {
  KernelTester t("Onnx>ImageDecoder");
  t.Attr("pixel_format", format).Input<uint8_t>({static_cast<int64_t>(bytes.size())}, {bytes.begin(), bytes.end()});
  EXPECT_OK(t.Run());
  *shape = t.output(0).shape();
  return std::vector<uint8_t>(t.output(0).data<uint8_t>(), t.output(0).data<uint8_t>() + t.output(0).NumElements());
}

// A PNG as libpng reads it, samples untransformed (16-bit ones in the host's order).
struct RawPng {
  uint32_t width = 0, height = 0;
  int depth = 0, color_type = -1;
  std::vector<uint8_t> samples;
};

struct PngSource {
  const std::string* bytes;
  size_t offset;
};

void ReadFromString(png_structp png, png_bytep out, png_size_t n) {
  auto* s = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > s->bytes->size() - s->offset) png_error(png, "truncated");
  std::memcpy(out, s->bytes->data() + s->offset, n);
  s->offset += n;
}

bool ReadPngRows(PngSource* source, RawPng* raw) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, source, ReadFromString);
  png_read_info(png, info);
  raw->width = png_get_image_width(png, info);
  raw->height = png_get_image_height(png, info);
  raw->depth = png_get_bit_depth(png, info);
  raw->color_type = png_get_color_type(png, info);
  if (raw->depth == 16) png_set_swap(png);
  png_read_update_info(png, info);
  const size_t row = png_get_rowbytes(png, info);
  raw->samples.resize(row * raw->height);
  for (uint32_t y = 0; y < raw->height; ++y) png_read_row(png, raw->samples.data() + y * row, nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

RawPng ReadPng(const std::string& bytes) {
  PngSource source{&bytes, 0};
  RawPng raw;
  EXPECT_TRUE(ReadPngRows(&source, &raw)) << "libpng could not read the encoded PNG";
  return raw;
}

TEST(EncodePngTest, RgbAndGrayRoundTripExactly) {
  for (int64_t compression : {-1, 0, 9}) {
    SCOPED_TRACE(compression);
    const std::vector<uint8_t> rgb = Image(5, 7, 3);
    KernelTester t("EncodePng");
    t.Attr("compression", compression).Input<uint8_t>({5, 7, 3}, rgb);
    ASSERT_OK(t.Run());
    const std::string png = Encoded(t);
    ASSERT_GT(png.size(), 8u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    TensorShape shape;
    EXPECT_EQ(Decode(png, "RGB", &shape), rgb);
    EXPECT_EQ(shape, TensorShape({5, 7, 3}));
  }
  const std::vector<uint8_t> gray = Image(4, 3, 1);
  KernelTester g("EncodePng");
  g.Input<uint8_t>({4, 3, 1}, gray);
  ASSERT_OK(g.Run());
  const RawPng raw = ReadPng(Encoded(g));
  EXPECT_EQ(raw.color_type, PNG_COLOR_TYPE_GRAY);
  EXPECT_EQ(raw.depth, 8);
  EXPECT_EQ(raw.samples, gray);
  TensorShape shape;
  EXPECT_EQ(Decode(Encoded(g), "Grayscale", &shape), gray);
}

TEST(EncodePngTest, AlphaAndSixteenBitSamplesKept) {
  const std::vector<uint8_t> rgba = Image(3, 4, 4);
  KernelTester t("EncodePng");
  t.Input<uint8_t>({3, 4, 4}, rgba);
  ASSERT_OK(t.Run());
  RawPng raw = ReadPng(Encoded(t));
  EXPECT_EQ(raw.color_type, PNG_COLOR_TYPE_RGB_ALPHA);
  EXPECT_EQ(raw.width, 4u);
  EXPECT_EQ(raw.height, 3u);
  EXPECT_EQ(raw.samples, rgba);

  // Gray + alpha, 16 bits: values that need both bytes.
  std::vector<uint16_t> wide(2 * 3 * 2);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<uint16_t>(i * 5000 + 1);
  KernelTester w("EncodePng");
  w.Input<uint16_t>({2, 3, 2}, wide);
  ASSERT_OK(w.Run());
  raw = ReadPng(Encoded(w));
  EXPECT_EQ(raw.color_type, PNG_COLOR_TYPE_GRAY_ALPHA);
  EXPECT_EQ(raw.depth, 16);
  ASSERT_EQ(raw.samples.size(), wide.size() * 2);
  std::vector<uint16_t> got(wide.size());
  std::memcpy(got.data(), raw.samples.data(), raw.samples.size());
  EXPECT_EQ(got, wide);
}

TEST(EncodePngTest, BadImagesAndAttrs) {
  KernelTester rank("EncodePng");
  rank.Input<uint8_t>({2, 2}, {1, 2, 3, 4});
  ExpectInvalid(rank, "EncodePng: image must be 3-dimensional");

  KernelTester five("EncodePng");
  five.Input<uint8_t>({1, 1, 5}, {1, 2, 3, 4, 5});
  ExpectInvalid(five, "1, 2, 3 or 4 channels");

  KernelTester empty("EncodePng");
  empty.Input<uint8_t>({0, 3, 3}, {});
  ExpectInvalid(empty, "no pixels");

  KernelTester level("EncodePng");
  level.Attr("compression", int64_t{10}).Input<uint8_t>({1, 1, 1}, {1});
  ExpectInvalid(level, "compression should be in [-1,9]");

  KernelTester dtype("EncodePng");
  dtype.Input<float>({1, 1, 1}, {1});
  EXPECT_FALSE(dtype.Run().ok());
}

// DecodePng's reading of `png`.
template <typename T>
Tensor DecodePng(const std::string& png, int64_t channels) {
  KernelTester t("DecodePng");
  t.Attr("channels", channels).Input<tstring>({}, {png});
  t.Attr("dtype", DataTypeToEnum<T>::value);
  EXPECT_OK(t.Run());
  return t.output(0);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

template <typename T>
std::string EncodePng(std::initializer_list<int64_t> shape, const std::vector<T>& image) {
  KernelTester t("EncodePng");
  t.Input<T>(shape, image);
  EXPECT_OK(t.Run());
  return Encoded(t);
}

TEST(DecodePngTest, RoundTripsEveryChannelCountAndDepth) {
  for (int64_t c = 1; c <= 4; ++c) {
    SCOPED_TRACE(c);
    const std::vector<uint8_t> image = Image(3, 5, c);
    const Tensor back = DecodePng<uint8_t>(EncodePng<uint8_t>({3, 5, c}, image), 0);
    EXPECT_EQ(back.shape(), TensorShape({3, 5, c}));
    EXPECT_EQ(Values<uint8_t>(back), image);
  }
  std::vector<uint16_t> wide(2 * 2 * 3);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<uint16_t>(i * 5003 + 7);
  const std::string png = EncodePng<uint16_t>({2, 2, 3}, wide);
  const Tensor back = DecodePng<uint16_t>(png, 0);
  EXPECT_EQ(back.dtype(), DT_UINT16);
  EXPECT_EQ(Values<uint16_t>(back), wide);
  // As uint8: each sample's high byte.
  std::vector<uint8_t> high(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) high[i] = static_cast<uint8_t>(wide[i] >> 8);
  EXPECT_EQ(Values<uint8_t>(DecodePng<uint8_t>(png, 0)), high);
}

TEST(DecodePngTest, ConvertsChannelsAndDepth) {
  // Gray {0, 100} as RGB repeats it; as RGBA adds an opaque alpha; as uint16 scales by 257.
  const std::string gray = EncodePng<uint8_t>({1, 2, 1}, {0, 100});
  EXPECT_EQ(Values<uint8_t>(DecodePng<uint8_t>(gray, 3)), std::vector<uint8_t>({0, 0, 0, 100, 100, 100}));
  EXPECT_EQ(Values<uint8_t>(DecodePng<uint8_t>(gray, 4)), std::vector<uint8_t>({0, 0, 0, 255, 100, 100, 100, 255}));
  EXPECT_EQ(Values<uint16_t>(DecodePng<uint16_t>(gray, 0)), std::vector<uint16_t>({0, 25700}));
  // RGBA as RGB drops the alpha; gray pixels (r = g = b) stay themselves as gray.
  const std::string rgba = EncodePng<uint8_t>({1, 2, 4}, {10, 20, 30, 40, 50, 50, 50, 0});
  EXPECT_EQ(Values<uint8_t>(DecodePng<uint8_t>(rgba, 3)), std::vector<uint8_t>({10, 20, 30, 50, 50, 50}));
  const Tensor g = DecodePng<uint8_t>(EncodePng<uint8_t>({1, 2, 3}, {0, 0, 0, 200, 200, 200}), 1);
  EXPECT_EQ(g.shape(), TensorShape({1, 2, 1}));
  EXPECT_EQ(Values<uint8_t>(g), std::vector<uint8_t>({0, 200}));
}

TEST(DecodePngTest, BadStreamsAndAttrs) {
  KernelTester garbage("DecodePng");
  garbage.Input<tstring>({}, {"not a png at all"});
  ExpectInvalid(garbage, "DecodePng: Unknown image file format");

  const std::string png = EncodePng<uint8_t>({4, 4, 3}, Image(4, 4, 3));
  KernelTester truncated("DecodePng");
  truncated.Input<tstring>({}, {png.substr(0, png.size() / 2)});
  ExpectInvalid(truncated, "DecodePng: invalid PNG data");

  KernelTester vector("DecodePng");
  vector.Input<tstring>({1}, {png});
  ExpectInvalid(vector, "scalar");

  KernelTester two("DecodePng");
  two.Attr("channels", int64_t{2}).Input<tstring>({}, {png});
  ExpectInvalid(two, "channels must be 0, 1, 3, or 4");
}

// The mean and largest absolute differences.
void ExpectClose(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, double mean_limit, int max_limit) {
  ASSERT_EQ(got.size(), want.size());
  double sum = 0;
  int most = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const int d = std::abs(int{got[i]} - int{want[i]});
    sum += d;
    most = std::max(most, d);
  }
  EXPECT_LE(sum / got.size(), mean_limit);
  EXPECT_LE(most, max_limit);
}

// The frame header's marker (0xC0 baseline, 0xC2 progressive) and its first component's
// sampling factors (0x22: chroma at half resolution each way, 0x11: full), walking the markers
// from the start; {0, 0} when there is none.
std::pair<int, int> FrameMarkerAndLumaSampling(const std::string& jpeg) {
  size_t pos = 2;  // After SOI.
  while (pos + 4 <= jpeg.size() && static_cast<uint8_t>(jpeg[pos]) == 0xFF) {
    const int marker = static_cast<uint8_t>(jpeg[pos + 1]);
    const size_t length = (static_cast<uint8_t>(jpeg[pos + 2]) << 8) | static_cast<uint8_t>(jpeg[pos + 3]);
    if ((marker == 0xC0 || marker == 0xC2) && pos + 12 < jpeg.size()) {
      return {marker, static_cast<uint8_t>(jpeg[pos + 11])};  // Length, precision, h, w, count, id.
    }
    pos += 2 + length;
  }
  return {0, 0};
}

TEST(EncodeJpegTest, RgbAndGrayRoundTripClosely) {
  const std::vector<uint8_t> rgb = SmoothImage(16, 24, 3);
  for (bool progressive : {false, true}) {
    for (bool downsample : {true, false}) {
      SCOPED_TRACE(absl::StrCat("progressive ", progressive, " chroma_downsampling ", downsample));
      KernelTester t("EncodeJpeg");
      t.Attr("progressive", progressive).Attr("chroma_downsampling", downsample).Attr("optimize_size", progressive);
      t.Input<uint8_t>({16, 24, 3}, rgb);
      ASSERT_OK(t.Run());
      const std::string jpeg = Encoded(t);
      ASSERT_GT(jpeg.size(), 4u);
      EXPECT_EQ(static_cast<uint8_t>(jpeg[0]), 0xFF);
      EXPECT_EQ(static_cast<uint8_t>(jpeg[1]), 0xD8);
      EXPECT_EQ(FrameMarkerAndLumaSampling(jpeg), std::make_pair(progressive ? 0xC2 : 0xC0, downsample ? 0x22 : 0x11));
      TensorShape shape;
      const std::vector<uint8_t> back = Decode(jpeg, "RGB", &shape);
      EXPECT_EQ(shape, TensorShape({16, 24, 3}));
      ExpectClose(back, rgb, 1.5, 6);
    }
  }
  const std::vector<uint8_t> gray = SmoothImage(9, 11, 1);
  KernelTester g("EncodeJpeg");
  g.Attr("format", std::string("grayscale")).Input<uint8_t>({9, 11, 1}, gray);
  ASSERT_OK(g.Run());
  TensorShape shape;
  ExpectClose(Decode(Encoded(g), "Grayscale", &shape), gray, 1.5, 6);
  EXPECT_EQ(shape, TensorShape({9, 11, 1}));
}

TEST(EncodeJpegTest, DensityAndXmpInTheHeader) {
  KernelTester t("EncodeJpeg");
  t.Attr("density_unit", std::string("cm")).Attr("x_density", int64_t{72}).Attr("y_density", int64_t{96});
  t.Attr("xmp_metadata", std::string("<x:xmpmeta>sluice</x:xmpmeta>"));
  t.Input<uint8_t>({2, 2, 3}, Image(2, 2, 3));
  ASSERT_OK(t.Run());
  const std::string jpeg = Encoded(t);
  // SOI, then APP0 (FF E0, length), "JFIF\0", version (2 bytes), units, X and Y density.
  ASSERT_GT(jpeg.size(), 18u);
  EXPECT_EQ(jpeg.substr(6, 5), std::string("JFIF\0", 5));
  EXPECT_EQ(jpeg[13], 2);  // Dots per centimetre.
  EXPECT_EQ((static_cast<uint8_t>(jpeg[14]) << 8) | static_cast<uint8_t>(jpeg[15]), 72);
  EXPECT_EQ((static_cast<uint8_t>(jpeg[16]) << 8) | static_cast<uint8_t>(jpeg[17]), 96);
  EXPECT_NE(jpeg.find(std::string("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>sluice</x:xmpmeta>", 58)),
            std::string::npos);
}

TEST(EncodeJpegTest, BadImagesAndAttrs) {
  KernelTester two("EncodeJpeg");
  two.Input<uint8_t>({1, 1, 2}, {1, 2});
  ExpectInvalid(two, "EncodeJpeg: image must have 1 or 3 channels");

  KernelTester rgb_of_gray("EncodeJpeg");
  rgb_of_gray.Attr("format", std::string("rgb")).Input<uint8_t>({1, 1, 1}, {1});
  ExpectInvalid(rgb_of_gray, "format rgb needs 3 channels");

  KernelTester rank("EncodeJpeg");
  rank.Input<uint8_t>({1, 1, 1, 3}, {1, 2, 3});
  ExpectInvalid(rank, "3-dimensional");

  KernelTester quality("EncodeJpeg");
  quality.Attr("quality", int64_t{101}).Input<uint8_t>({1, 1, 1}, {1});
  ExpectInvalid(quality, "quality must be in [0,100]");

  KernelTester wide("EncodeJpeg");  // Past JPEG's 65500 pixels a side.
  wide.Input<uint8_t>({1, 70000, 1}, std::vector<uint8_t>(70000, 7));
  ExpectInvalid(wide, "larger than JPEG's");

  KernelTester dtype("EncodeJpeg");
  dtype.Input<uint16_t>({1, 1, 1}, {1});
  EXPECT_FALSE(dtype.Run().ok());
}

}  // namespace
}  // namespace sluice
