// The TensorFlow decoders (tf_image_decode_ops.cc): JPEG and PNG round trips through
// EncodeJpeg and EncodePng; BMPs and GIFs written byte by byte here (the GIFs with a literal-only
// LZW coder, so that giflib is not checked against its own encoder); channel and dtype
// conversions, ratio, crop, which op reads which format, and damaged, truncated and hostile
// streams as errors. A last test flips bytes of every format and only asks for a status.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using Bytes = std::vector<uint8_t>;

// A smooth gradient, so that JPEG's errors stay small.
Bytes Smooth(int64_t h, int64_t w, int64_t c) {
  Bytes v(h * w * c);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) v[(y * w + x) * c + ch] = static_cast<uint8_t>(20 + y * 4 + x * 3 + ch * 30);
  return v;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

std::string EncodeJpeg(int64_t h, int64_t w, int64_t c, const Bytes& pixels, bool progressive = false) {
  KernelTester t("EncodeJpeg");
  t.Attr("quality", 100).Attr("progressive", progressive).Attr("chroma_downsampling", false);
  t.Input<uint8_t>({h, w, c}, pixels);
  EXPECT_OK(t.Run());
  return t.output(0).data<tstring>()[0];
}

std::string EncodePng(int64_t h, int64_t w, int64_t c, const Bytes& pixels) {
  KernelTester t("EncodePng");
  t.Input<uint8_t>({h, w, c}, pixels);
  EXPECT_OK(t.Run());
  return t.output(0).data<tstring>()[0];
}

// Runs `op` on `contents` with the attrs `setup` adds; the output, or the error.
template <typename Setup>
absl::StatusOr<Tensor> Decode(const std::string& op, const std::string& contents, Setup setup) {
  KernelTester t(op);
  t.Input<tstring>({}, {contents});
  setup(t);
  SL_RETURN_IF_ERROR(t.Run());
  return t.output(0);
}

absl::StatusOr<Tensor> Decode(const std::string& op, const std::string& contents) {
  return Decode(op, contents, [](KernelTester&) {});
}

// The error's code and that its message holds `fragment`.
void ExpectError(const absl::StatusOr<Tensor>& got, absl::StatusCode code, const std::string& fragment) {
  ASSERT_FALSE(got.ok()) << "decoded to " << got->shape().DebugString();
  EXPECT_EQ(got.status().code(), code) << got.status();
  EXPECT_NE(std::string(got.status().message()).find(fragment), std::string::npos)
      << "message '" << got.status().message() << "' lacks '" << fragment << "'";
}

void ExpectClose(const Bytes& got, const Bytes& want, double mean_limit, int max_limit) {
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

// ---- JPEG ----

TEST(DecodeJpegTest, RoundTripsRgbAndGrayWithEveryDctMethod) {
  const Bytes rgb = Smooth(16, 24, 3);
  const std::string jpeg = EncodeJpeg(16, 24, 3, rgb);
  for (const char* dct : {"", "INTEGER_FAST", "INTEGER_ACCURATE"}) {
    for (bool fancy : {true, false}) {
      SCOPED_TRACE(absl::StrCat("dct_method '", dct, "' fancy_upscaling ", fancy));
      SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeJpeg", jpeg, [&](KernelTester& t) {
                                t.Attr("dct_method", dct).Attr("fancy_upscaling", fancy);
                              }));
      EXPECT_EQ(out.dtype(), DT_UINT8);
      EXPECT_EQ(out.shape(), TensorShape({16, 24, 3}));
      ExpectClose(Values<uint8_t>(out), rgb, 1.5, 6);
    }
  }
  // channels 1 of an RGB stream is libjpeg's luma (ITU-R 601).
  SL_ASSERT_OK_AND_ASSIGN(Tensor luma, Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("channels", 1); }));
  EXPECT_EQ(luma.shape(), TensorShape({16, 24, 1}));
  Bytes want(16 * 24);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = static_cast<uint8_t>(std::lround(0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2]));
  }
  ExpectClose(Values<uint8_t>(luma), want, 1.5, 6);

  // A gray stream: its own channel, or repeated three times.
  const Bytes gray = Smooth(9, 11, 1);
  const std::string gray_jpeg = EncodeJpeg(9, 11, 1, gray);
  SL_ASSERT_OK_AND_ASSIGN(Tensor one, Decode("DecodeJpeg", gray_jpeg));
  EXPECT_EQ(one.shape(), TensorShape({9, 11, 1}));
  ExpectClose(Values<uint8_t>(one), gray, 1.5, 6);
  SL_ASSERT_OK_AND_ASSIGN(Tensor three,
                          Decode("DecodeJpeg", gray_jpeg, [](KernelTester& t) { t.Attr("channels", 3); }));
  EXPECT_EQ(three.shape(), TensorShape({9, 11, 3}));
  const Bytes t3 = Values<uint8_t>(three), t1 = Values<uint8_t>(one);
  for (size_t i = 0; i < t1.size(); ++i) {
    EXPECT_EQ(t3[3 * i], t1[i]);
    EXPECT_EQ(t3[3 * i + 2], t1[i]);
  }
}

// tfjs-node's decode specs give TensorFlow's own decoding of a 2 x 2 JPEG; quality 100 without
// chroma subsampling makes a stream that TensorFlow decodes to exactly those values.
TEST(DecodeJpegTest, TensorFlowsPixelsForTfjsNodesFixture) {
  const Bytes rgb = {238, 101, 0, 50, 50, 50, 100, 50, 0, 200, 100, 50};
  const std::string jpeg = EncodeJpeg(2, 2, 3, rgb);  // Quality 100, 4:4:4.
  SL_ASSERT_OK_AND_ASSIGN(Tensor three, Decode("DecodeJpeg", jpeg));
  EXPECT_EQ(Values<uint8_t>(three), (Bytes{239, 100, 0, 46, 48, 47, 92, 49, 0, 194, 98, 47}));
  SL_ASSERT_OK_AND_ASSIGN(Tensor one, Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("channels", 1); }));
  EXPECT_EQ(Values<uint8_t>(one), (Bytes{130, 47, 56, 121}));
  SL_ASSERT_OK_AND_ASSIGN(Tensor half, Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("ratio", 2); }));
  EXPECT_EQ(half.shape(), TensorShape({1, 1, 3}));
  EXPECT_EQ(Values<uint8_t>(half), (Bytes{147, 75, 25}));
}

TEST(DecodeJpegTest, RatioScalesDownWhileDecoding) {
  // Flat 8 x 8 blocks, so that each scaled pixel is its block's color.
  Bytes blocks(32 * 48 * 3);
  for (int64_t y = 0; y < 32; ++y)
    for (int64_t x = 0; x < 48; ++x)
      for (int64_t c = 0; c < 3; ++c) blocks[(y * 48 + x) * 3 + c] = static_cast<uint8_t>(40 + (y / 8) * 30 + (x / 8) * 20 + c * 5);
  const std::string jpeg = EncodeJpeg(32, 48, 3, blocks);
  for (int ratio : {1, 2, 4, 8}) {
    SCOPED_TRACE(ratio);
    SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeJpeg", jpeg, [&](KernelTester& t) { t.Attr("ratio", ratio); }));
    ASSERT_EQ(out.shape(), TensorShape({32 / ratio, 48 / ratio, 3}));
    Bytes want(out.NumElements());
    const int64_t h = 32 / ratio, w = 48 / ratio;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t c = 0; c < 3; ++c) want[(y * w + x) * 3 + c] = blocks[((y * ratio) * 48 + x * ratio) * 3 + c];
    ExpectClose(Values<uint8_t>(out), want, 2.0, 12);
  }
  // Sizes round up: 17 x 25 at 1/2 is 9 x 13.
  SL_ASSERT_OK_AND_ASSIGN(Tensor odd, Decode("DecodeJpeg", EncodeJpeg(17, 25, 3, Smooth(17, 25, 3)),
                                              [](KernelTester& t) { t.Attr("ratio", 2); }));
  EXPECT_EQ(odd.shape(), TensorShape({9, 13, 3}));
  ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("ratio", 3); }),
              absl::StatusCode::kInvalidArgument, "ratio must be 1, 2, 4, or 8");
}

TEST(DecodeJpegTest, CropWindowIsTheFullDecodesWindow) {
  const std::string jpeg = EncodeJpeg(32, 40, 3, Smooth(32, 40, 3));
  SL_ASSERT_OK_AND_ASSIGN(Tensor full, Decode("DecodeJpeg", jpeg));
  const Bytes all = Values<uint8_t>(full);
  struct Window {
    int32_t y, x, h, w;
  };
  for (Window win : {Window{0, 0, 32, 40}, Window{3, 5, 7, 9}, Window{16, 16, 8, 8}, Window{31, 39, 1, 1}}) {
    SCOPED_TRACE(absl::StrCat(win.y, " ", win.x, " ", win.h, " ", win.w));
    KernelTester t("DecodeAndCropJpeg");
    t.Input<tstring>({}, {jpeg}).Input<int32_t>({4}, {win.y, win.x, win.h, win.w});
    ASSERT_OK(t.Run());
    ASSERT_EQ(t.output(0).shape(), TensorShape({win.h, win.w, 3}));
    Bytes want;
    for (int y = win.y; y < win.y + win.h; ++y) {
      want.insert(want.end(), all.begin() + (y * 40 + win.x) * 3, all.begin() + (y * 40 + win.x + win.w) * 3);
    }
    ExpectClose(Values<uint8_t>(t.output(0)), want, 0.5, 3);
  }
  for (std::vector<int32_t> bad : {std::vector<int32_t>{0, 0, 33, 40}, {0, 1, 32, 40}, {-1, 0, 2, 2}, {0, 0, 0, 5},
                                   {2147483647, 0, 1, 1}, {0, 2147483647, 1, 2147483647}}) {
    KernelTester t("DecodeAndCropJpeg");
    t.Input<tstring>({}, {jpeg}).Input<int32_t>({4}, bad);
    ExpectInvalid(t, "is not inside the 40 x 32 image");
  }
  KernelTester three("DecodeAndCropJpeg");
  three.Input<tstring>({}, {jpeg}).Input<int32_t>({3}, {0, 0, 1});
  ExpectInvalid(three, "crop_size must have four elements");
  KernelTester png("DecodeAndCropJpeg");
  png.Input<tstring>({}, {EncodePng(2, 2, 3, Smooth(2, 2, 3))}).Input<int32_t>({4}, {0, 0, 1, 1});
  ExpectInvalid(png, "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG");
}

// A flat CMYK JPEG written by libjpeg, which marks CMYK with an Adobe marker (inverted CMYK).
std::string CmykJpeg(int h, int w, const uint8_t cmyk[4]) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = 4;
  cinfo.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 100, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  Bytes row(w * 4);
  for (int x = 0; x < w; ++x) std::copy(cmyk, cmyk + 4, row.begin() + 4 * x);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

TEST(DecodeJpegTest, CmykIsConvertedAsTensorFlowDoes) {
  const uint8_t cmyk[4] = {200, 100, 50, 128};
  const std::string jpeg = CmykJpeg(8, 8, cmyk);
  KernelTester shape("ExtractJpegShape");
  shape.Input<tstring>({}, {jpeg});
  ASSERT_OK(shape.Run());
  shape.ExpectOutput<int32_t>(0, {3}, {8, 8, 4});
  // Adobe's inverted CMYK: R = C * K / 255 and so on; channels 0 gives RGB, not 4 channels.
  SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeJpeg", jpeg));
  ASSERT_EQ(out.shape(), TensorShape({8, 8, 3}));
  Bytes want;
  for (int i = 0; i < 64; ++i) want.insert(want.end(), {200 * 128 / 255, 100 * 128 / 255, 50 * 128 / 255});
  ExpectClose(Values<uint8_t>(out), want, 1.0, 2);
  // Cropped, the conversion reads the right columns of libjpeg's wider CMYK rows.
  KernelTester crop("DecodeAndCropJpeg");
  crop.Input<tstring>({}, {jpeg}).Input<int32_t>({4}, {1, 3, 2, 4});
  ASSERT_OK(crop.Run());
  ExpectClose(Values<uint8_t>(crop.output(0)), Bytes(want.begin(), want.begin() + 24), 1.0, 2);
  // libjpeg makes no gray of CMYK.
  ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("channels", 1); }),
              absl::StatusCode::kInvalidArgument, "Invalid JPEG data");
}

TEST(ExtractJpegShapeTest, HeaderShapeAsInt32AndInt64) {
  const std::string rgb = EncodeJpeg(5, 7, 3, Smooth(5, 7, 3)), gray = EncodeJpeg(6, 4, 1, Smooth(6, 4, 1));
  KernelTester a("ExtractJpegShape");
  a.Input<tstring>({}, {rgb});
  ASSERT_OK(a.Run());
  a.ExpectOutput<int32_t>(0, {3}, {5, 7, 3});
  KernelTester b("ExtractJpegShape");
  b.Attr("output_type", DT_INT64).Input<tstring>({}, {gray});
  ASSERT_OK(b.Run());
  b.ExpectOutput<int64_t>(0, {3}, {6, 4, 1});
  KernelTester bad("ExtractJpegShape");
  bad.Input<tstring>({}, {"not a jpeg"});
  ExpectInvalid(bad, "ExtractJpegShape: Invalid JPEG data");
}

TEST(DecodeJpegTest, TruncatedStreamsFailUnlessRecovered) {
  const Bytes rgb = Smooth(32, 32, 3);
  const std::string jpeg = EncodeJpeg(32, 32, 3, rgb);
  const std::string cut = jpeg.substr(0, jpeg.size() * 2 / 3);
  ExpectError(Decode("DecodeJpeg", cut), absl::StatusCode::kInvalidArgument, "DecodeJpeg: Invalid JPEG data");
  // acceptable_fraction only accepts part of an image that a suspending source left unread;
  // memory never suspends, so a cut stream still fails (as in TensorFlow).
  ExpectError(Decode("DecodeJpeg", cut, [](KernelTester& t) { t.Attr("acceptable_fraction", 0.1f); }),
              absl::StatusCode::kInvalidArgument, "Invalid JPEG data");
  SL_ASSERT_OK_AND_ASSIGN(Tensor out,
                          Decode("DecodeJpeg", cut, [](KernelTester& t) { t.Attr("try_recover_truncated", true); }));
  ASSERT_EQ(out.shape(), TensorShape({32, 32, 3}));
  const Bytes got = Values<uint8_t>(out);
  ExpectClose(Bytes(got.begin(), got.begin() + 8 * 32 * 3), Bytes(rgb.begin(), rgb.begin() + 8 * 32 * 3), 1.5, 6);
  // Every prefix fails or, recovering, keeps the header's shape; none crashes.
  for (size_t n = 1; n < jpeg.size(); n += 7) {
    for (bool recover : {false, true}) {
      auto got = Decode("DecodeJpeg", jpeg.substr(0, n), [&](KernelTester& t) { t.Attr("try_recover_truncated", recover); });
      if (got.ok()) {
        EXPECT_EQ(got->shape(), TensorShape({32, 32, 3})) << n;
      } else {
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << n << ": " << got.status();
      }
    }
  }
}

// The offset of the first SOF marker's height field (SOF0 baseline or SOF2 progressive).
size_t FrameSizeOffset(const std::string& jpeg) {
  for (size_t pos = 2; pos + 9 < jpeg.size();) {
    const int marker = static_cast<uint8_t>(jpeg[pos + 1]);
    if (marker == 0xC0 || marker == 0xC2) return pos + 5;  // FF Cx, length (2), precision (1).
    pos += 2 + ((static_cast<uint8_t>(jpeg[pos + 2]) << 8) | static_cast<uint8_t>(jpeg[pos + 3]));
  }
  return 0;
}

TEST(DecodeJpegTest, HugeDeclaredSizesAreRefusedBeforeAllocating) {
  for (bool progressive : {false, true}) {
    SCOPED_TRACE(progressive);
    std::string jpeg = EncodeJpeg(8, 8, 3, Smooth(8, 8, 3), progressive);
    const size_t at = FrameSizeOffset(jpeg);
    ASSERT_GT(at, 0u);
    for (int i = 0; i < 4; ++i) jpeg[at + i] = static_cast<char>(i % 2 == 0 ? 0xFD : 0xE8);  // 65000 x 65000.
    ExpectError(Decode("DecodeJpeg", jpeg), absl::StatusCode::kResourceExhausted, "above the limit");
    KernelTester shape("ExtractJpegShape");
    shape.Input<tstring>({}, {jpeg});
    ASSERT_OK(shape.Run());
    shape.ExpectOutput<int32_t>(0, {3}, {65000, 65000, 3});
    if (progressive) {
      // At 1/8 the output would fit, but libjpeg keeps every coefficient of the full image.
      ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("ratio", 8); }),
                  absl::StatusCode::kResourceExhausted, "needs more than");
    }
  }
}

TEST(DecodeJpegTest, BadAttrsAndContents) {
  const std::string jpeg = EncodeJpeg(2, 2, 3, Smooth(2, 2, 3));
  ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("channels", 4); }),
              absl::StatusCode::kInvalidArgument, "JPEG does not support 4 channels");
  ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("channels", 2); }),
              absl::StatusCode::kInvalidArgument, "channels must be 0, 1, 3, or 4");
  ExpectError(Decode("DecodeJpeg", jpeg, [](KernelTester& t) { t.Attr("dct_method", "FLOAT"); }),
              absl::StatusCode::kInvalidArgument, "dct_method must be one of");
  ExpectError(Decode("DecodeJpeg", ""), absl::StatusCode::kInvalidArgument, "Input is empty.");
  ExpectError(Decode("DecodeJpeg", "GIF7 is no magic"), absl::StatusCode::kInvalidArgument,
              "Unknown image file format. One of JPEG, PNG, GIF, BMP required.");
  ExpectError(Decode("DecodeJpeg", std::string("\xFF\xD8\xFF\xE0 and then garbage", 20)),
              absl::StatusCode::kInvalidArgument, "Invalid JPEG data");
  KernelTester vector("DecodeJpeg");
  vector.Input<tstring>({1}, {jpeg});
  ExpectInvalid(vector, "contents must be scalar");
}

// ---- Formats across ops, and DecodeImage's dtypes ----

TEST(DecodeImageTest, EachOpReadsTheFormatsTensorFlowsDoes) {
  const Bytes rgb = Smooth(3, 4, 3);
  const std::string png = EncodePng(3, 4, 3, rgb), jpeg = EncodeJpeg(3, 4, 3, rgb);
  // DecodeJpeg reads PNG exactly, even to 4 channels; DecodePng reads JPEG.
  SL_ASSERT_OK_AND_ASSIGN(Tensor a, Decode("DecodeJpeg", png));
  EXPECT_EQ(Values<uint8_t>(a), rgb);
  SL_ASSERT_OK_AND_ASSIGN(Tensor rgba, Decode("DecodeJpeg", png, [](KernelTester& t) { t.Attr("channels", 4); }));
  EXPECT_EQ(rgba.shape(), TensorShape({3, 4, 4}));
  SL_ASSERT_OK_AND_ASSIGN(Tensor b, Decode("DecodePng", jpeg));
  EXPECT_EQ(b.shape(), TensorShape({3, 4, 3}));
  ExpectClose(Values<uint8_t>(b), rgb, 2.5, 8);
  // DecodeGif returns any of them as one frame of RGB.
  SL_ASSERT_OK_AND_ASSIGN(Tensor c, Decode("DecodeGif", EncodePng(3, 4, 1, Smooth(3, 4, 1))));
  EXPECT_EQ(c.shape(), TensorShape({1, 3, 4, 3}));
  SL_ASSERT_OK_AND_ASSIGN(Tensor d, Decode("DecodeGif", jpeg));
  EXPECT_EQ(d.shape(), TensorShape({1, 3, 4, 3}));
  // DecodeImage: uint16 scales 8-bit JPEG samples by 256 and PNG ones by 257; float32 to [0, 1].
  SL_ASSERT_OK_AND_ASSIGN(Tensor e, Decode("DecodeImage", png, [](KernelTester& t) { t.Attr("dtype", DT_UINT16); }));
  EXPECT_EQ(e.dtype(), DT_UINT16);
  EXPECT_EQ(Values<uint16_t>(e)[1], rgb[1] * 257);
  SL_ASSERT_OK_AND_ASSIGN(Tensor j16, Decode("DecodeImage", jpeg, [](KernelTester& t) { t.Attr("dtype", DT_UINT16); }));
  SL_ASSERT_OK_AND_ASSIGN(Tensor j8, Decode("DecodeImage", jpeg));
  for (int i = 0; i < 36; ++i) EXPECT_EQ(Values<uint16_t>(j16)[i], Values<uint8_t>(j8)[i] * 256);
  SL_ASSERT_OK_AND_ASSIGN(Tensor f, Decode("DecodeImage", png, [](KernelTester& t) { t.Attr("dtype", DT_FLOAT); }));
  EXPECT_EQ(f.dtype(), DT_FLOAT);
  for (int i = 0; i < 36; ++i) EXPECT_NEAR(Values<float>(f)[i], rgb[i] / 255.0, 1e-6);
  SL_ASSERT_OK_AND_ASSIGN(Tensor jf, Decode("DecodeImage", jpeg, [](KernelTester& t) { t.Attr("dtype", DT_FLOAT); }));
  for (int i = 0; i < 36; ++i) EXPECT_NEAR(Values<float>(jf)[i], Values<uint8_t>(j8)[i] / 255.0, 1e-6);
  // RGB to gray with ITU-R 601's weights, as TensorFlow (tfjs-node's 'decode png 1 channels').
  const std::string tfjs = EncodePng(2, 2, 3, {238, 101, 0, 50, 50, 50, 100, 50, 0, 200, 100, 50});
  SL_ASSERT_OK_AND_ASSIGN(Tensor g, Decode("DecodePng", tfjs, [](KernelTester& t) { t.Attr("channels", 1); }));
  EXPECT_EQ(Values<uint8_t>(g), (Bytes{130, 50, 59, 124}));
  // DecodeBmp reads only BMP, DecodeAndCropJpeg only JPEG.
  ExpectError(Decode("DecodeBmp", png), absl::StatusCode::kInvalidArgument,
              "Trying to decode PNG format using DecodeBmp op");
  ExpectError(Decode("DecodeBmp", jpeg), absl::StatusCode::kInvalidArgument,
              "Trying to decode JPEG format using DecodeBmp op");
  ExpectError(Decode("DecodeImage", png, [](KernelTester& t) { t.Attr("dtype", DT_INT32); }),
              absl::StatusCode::kInvalidArgument, "");
}

// ---- BMP ----

void Put16(std::string* s, uint32_t v) {
  s->push_back(static_cast<char>(v & 0xFF));
  s->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* s, uint32_t v) {
  Put16(s, v & 0xFFFF);
  Put16(s, v >> 16);
}

// A BMP with a 40-byte info header: `pixels` are RGB(A) (or gray indexes at 8 bits) from the
// top row down, written bottom-up unless `top_down`, each row padded to 4 bytes. An 8-bit BMP
// gets `palette` (BGRA entries).
std::string Bmp(int32_t width, int32_t height, int bits, const Bytes& pixels, bool top_down,
                const std::vector<uint32_t>& palette = {}, uint32_t compression = 0) {
  const int own = bits / 8;
  const uint32_t row = (own * width + 3) / 4 * 4;
  const uint32_t offset = 54 + 4 * palette.size();
  std::string s = "BM";
  Put32(&s, offset + row * height);
  Put32(&s, 0);
  Put32(&s, offset);
  Put32(&s, 40);
  Put32(&s, width);
  Put32(&s, top_down ? -height : height);
  Put16(&s, 1);
  Put16(&s, bits);
  Put32(&s, compression);
  Put32(&s, row * height);
  Put32(&s, 2835);
  Put32(&s, 2835);
  Put32(&s, palette.size());
  Put32(&s, 0);
  for (uint32_t entry : palette) Put32(&s, entry);
  for (int32_t r = 0; r < height; ++r) {
    const int32_t y = top_down ? r : height - 1 - r;
    std::string line;
    for (int32_t x = 0; x < width; ++x) {
      const uint8_t* px = pixels.data() + (y * width + x) * own;
      if (own == 1) {
        line.push_back(static_cast<char>(px[0]));
      } else {
        line.push_back(static_cast<char>(px[2]));  // BGR(A).
        line.push_back(static_cast<char>(px[1]));
        line.push_back(static_cast<char>(px[0]));
        if (own == 4) line.push_back(static_cast<char>(px[3]));
      }
    }
    line.resize(row, '\0');
    s += line;
  }
  return s;
}

TEST(DecodeBmpTest, TwentyFourAndThirtyTwoBitsBothWaysUp) {
  const Bytes rgb = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};  // 2 x 3, rows padded.
  for (bool top_down : {false, true}) {
    SCOPED_TRACE(top_down);
    const std::string bmp = Bmp(3, 2, 24, rgb, top_down);
    SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeBmp", bmp));
    EXPECT_EQ(out.shape(), TensorShape({2, 3, 3}));
    EXPECT_EQ(Values<uint8_t>(out), rgb);
    SL_ASSERT_OK_AND_ASSIGN(Tensor four, Decode("DecodeBmp", bmp, [](KernelTester& t) { t.Attr("channels", 4); }));
    const Bytes v = Values<uint8_t>(four);
    ASSERT_EQ(v.size(), 24u);
    EXPECT_EQ((Bytes{v[4], v[5], v[6], v[7]}), (Bytes{4, 5, 6, 255}));
  }
  const Bytes rgba = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160};  // 2 x 2.
  for (bool top_down : {false, true}) {
    SCOPED_TRACE(top_down);
    const std::string bmp = Bmp(2, 2, 32, rgba, top_down);
    SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeBmp", bmp));
    EXPECT_EQ(out.shape(), TensorShape({2, 2, 4}));
    EXPECT_EQ(Values<uint8_t>(out), rgba);
    SL_ASSERT_OK_AND_ASSIGN(Tensor three, Decode("DecodeBmp", bmp, [](KernelTester& t) { t.Attr("channels", 3); }));
    EXPECT_EQ(Values<uint8_t>(three), (Bytes{10, 20, 30, 50, 60, 70, 90, 100, 110, 130, 140, 150}));
    SL_ASSERT_OK_AND_ASSIGN(Tensor f, Decode("DecodeImage", bmp, [](KernelTester& t) { t.Attr("dtype", DT_FLOAT); }));
    EXPECT_EQ(f.shape(), TensorShape({2, 2, 4}));
    EXPECT_FLOAT_EQ(Values<float>(f)[4], 50.0f / 255);
  }
  // BI_BITFIELDS with BGRA's masks after the header is the same image.
  std::string fields = Bmp(2, 2, 32, rgba, false, {0x00FF0000, 0x0000FF00, 0x000000FF}, 3);
  SL_ASSERT_OK_AND_ASSIGN(Tensor f, Decode("DecodeBmp", fields));
  EXPECT_EQ(Values<uint8_t>(f), rgba);
}

TEST(DecodeBmpTest, EightBitsAreGrayOnlyWithAGrayPalette) {
  std::vector<uint32_t> ramp(256);
  for (uint32_t i = 0; i < 256; ++i) ramp[i] = i | (i << 8) | (i << 16);
  const Bytes gray = {0, 50, 100, 150, 200, 250};
  const std::string bmp = Bmp(3, 2, 8, gray, false, ramp);
  SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeBmp", bmp));
  EXPECT_EQ(out.shape(), TensorShape({2, 3, 1}));
  EXPECT_EQ(Values<uint8_t>(out), gray);
  SL_ASSERT_OK_AND_ASSIGN(Tensor rgb, Decode("DecodeBmp", bmp, [](KernelTester& t) { t.Attr("channels", 3); }));
  EXPECT_EQ(Values<uint8_t>(rgb), (Bytes{0, 0, 0, 50, 50, 50, 100, 100, 100, 150, 150, 150, 200, 200, 200, 250, 250, 250}));
  ExpectError(Decode("DecodeBmp", bmp, [](KernelTester& t) { t.Attr("channels", 1); }),
              absl::StatusCode::kInvalidArgument, "`channels` must be 0, 3 or 4 for BMP");
  ramp[100] = 0x00FF0000;  // Red: TensorFlow would still return 100.
  ExpectError(Decode("DecodeBmp", Bmp(3, 2, 8, gray, false, ramp)), absl::StatusCode::kUnimplemented,
              "8-bit BMP with a color palette");
}

TEST(DecodeBmpTest, DamagedAndHostileHeaders) {
  const Bytes rgb(2 * 3 * 3, 7);
  const std::string bmp = Bmp(3, 2, 24, rgb, false);
  ExpectError(Decode("DecodeBmp", bmp.substr(0, bmp.size() - 1)), absl::StatusCode::kInvalidArgument,
              "they differ by -1");
  ExpectError(Decode("DecodeBmp", bmp + "x"), absl::StatusCode::kInvalidArgument, "they differ by 1");
  ExpectError(Decode("DecodeBmp", bmp.substr(0, 30)), absl::StatusCode::kInvalidArgument, "Incomplete bmp content");
  auto patched = [&](size_t at, uint32_t v) {
    std::string s = bmp;
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  };
  ExpectError(Decode("DecodeBmp", patched(18, 0x40000000)), absl::StatusCode::kInvalidArgument,
              "Total possible pixel bytes must be less than 2^30");
  ExpectError(Decode("DecodeBmp", patched(22, 0x80000000)), absl::StatusCode::kInvalidArgument,
              "Total possible pixel bytes");  // -2^31 rows.
  ExpectError(Decode("DecodeBmp", patched(18, 0)), absl::StatusCode::kInvalidArgument, "Width must be positive");
  ExpectError(Decode("DecodeBmp", patched(18, 0xFFFFFFFF)), absl::StatusCode::kInvalidArgument, "Width must be positive");
  ExpectError(Decode("DecodeBmp", patched(22, 0)), absl::StatusCode::kInvalidArgument, "Height must be nonzero");
  ExpectError(Decode("DecodeBmp", patched(10, 0xFFFFFFFF)), absl::StatusCode::kInvalidArgument, "differ by");
  ExpectError(Decode("DecodeBmp", patched(10, 20)), absl::StatusCode::kInvalidArgument, "overlap");
  ExpectError(Decode("DecodeBmp", patched(14, 12)), absl::StatusCode::kUnimplemented, "info header");
  ExpectError(Decode("DecodeBmp", patched(30, 1)), absl::StatusCode::kUnimplemented, "BMP compression 1");
  std::string sixteen = bmp;
  sixteen[28] = 16;
  ExpectError(Decode("DecodeBmp", sixteen), absl::StatusCode::kInvalidArgument, "must be 1, 3 or 4, was 2");
  ExpectError(Decode("DecodePng", bmp), absl::StatusCode::kInvalidArgument, "Trying to decode BMP format using a wrong op");
  SL_ASSERT_OK_AND_ASSIGN(Tensor ok, Decode("DecodeImage", bmp));
  EXPECT_EQ(ok.shape(), TensorShape({2, 3, 3}));
}

// ---- GIF ----

struct Rgb {
  uint8_t r, g, b;
};

struct GifFrame {
  int left = 0, top = 0, width = 0, height = 0;
  Bytes indexes;  // Row-major, top row first.
  int transparent = -1;
  std::vector<Rgb> local_colors;  // Empty: the global table. A power of two from 2 to 256.
  bool interlaced = false;
};

int TableBits(size_t colors) {
  int bits = 1;
  while ((size_t{1} << bits) < colors) ++bits;
  return bits;
}

// LZW of literals only: a clear code before every run short enough that the code width never
// grows, so every code is min_bits + 1 bits wide.
std::string Lzw(const Bytes& indexes, int min_bits) {
  const int width = min_bits + 1, clear = 1 << min_bits, end = clear + 1, run = (1 << min_bits) - 2;
  std::string out;
  uint32_t acc = 0;
  int have = 0;
  auto emit = [&](int code) {
    acc |= static_cast<uint32_t>(code) << have;
    have += width;
    while (have >= 8) {
      out.push_back(static_cast<char>(acc & 0xFF));
      acc >>= 8;
      have -= 8;
    }
  };
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (i % run == 0) emit(clear);
    emit(indexes[i]);
  }
  emit(end);
  if (have > 0) out.push_back(static_cast<char>(acc & 0xFF));
  return out;
}

std::string Gif(int width, int height, const std::vector<Rgb>& global, const std::vector<GifFrame>& frames) {
  std::string s = "GIF89a";
  Put16(&s, width);
  Put16(&s, height);
  s.push_back(static_cast<char>(global.empty() ? 0 : 0x80 | (TableBits(global.size()) - 1)));
  s.push_back(0);  // Background color.
  s.push_back(0);  // Aspect ratio.
  for (const Rgb& c : global) s += {static_cast<char>(c.r), static_cast<char>(c.g), static_cast<char>(c.b)};
  for (const GifFrame& f : frames) {
    if (f.transparent >= 0) {
      s += {'\x21', '\xF9', '\x04', '\x01', '\0', '\0', static_cast<char>(f.transparent), '\0'};
    }
    s.push_back(',');
    Put16(&s, f.left);
    Put16(&s, f.top);
    Put16(&s, f.width);
    Put16(&s, f.height);
    const int local_bits = f.local_colors.empty() ? 0 : TableBits(f.local_colors.size());
    s.push_back(static_cast<char>((f.local_colors.empty() ? 0 : 0x80 | (local_bits - 1)) | (f.interlaced ? 0x40 : 0)));
    for (const Rgb& c : f.local_colors) s += {static_cast<char>(c.r), static_cast<char>(c.g), static_cast<char>(c.b)};
    Bytes order;  // Interlaced frames store rows in four passes.
    if (f.interlaced) {
      const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
      for (int p = 0; p < 4; ++p)
        for (int y = start[p]; y < f.height; y += step[p])
          order.insert(order.end(), f.indexes.begin() + y * f.width, f.indexes.begin() + (y + 1) * f.width);
    } else {
      order = f.indexes;
    }
    const int min_bits = std::max(2, f.local_colors.empty() ? TableBits(global.size()) : local_bits);
    s.push_back(static_cast<char>(min_bits));
    const std::string data = Lzw(order, min_bits);
    for (size_t i = 0; i < data.size(); i += 255) {
      const size_t n = std::min<size_t>(255, data.size() - i);
      s.push_back(static_cast<char>(n));
      s += data.substr(i, n);
    }
    s.push_back('\0');
  }
  s.push_back(';');
  return s;
}

const std::vector<Rgb> kFour = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {0, 0, 255}};

// The RGB of palette indexes.
Bytes Colors(const Bytes& indexes, const std::vector<Rgb>& palette = kFour) {
  Bytes out;
  for (uint8_t i : indexes) out.insert(out.end(), {palette[i].r, palette[i].g, palette[i].b});
  return out;
}

TEST(DecodeGifTest, TwoFramesComposedAsTensorFlowDoes) {
  // Frame 1 draws over frame 0; its transparent index (0) keeps frame 0's pixels.
  GifFrame first{0, 0, 3, 2, {1, 2, 3, 3, 2, 1}};
  GifFrame second{0, 0, 3, 2, {0, 0, 2, 1, 0, 0}, /*transparent=*/0};
  const std::string gif = Gif(3, 2, kFour, {first, second});
  SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeGif", gif));
  ASSERT_EQ(out.shape(), TensorShape({2, 2, 3, 3}));
  Bytes want = Colors({1, 2, 3, 3, 2, 1});
  const Bytes second_want = Colors({1, 2, 2, 1, 2, 1});
  want.insert(want.end(), second_want.begin(), second_want.end());
  EXPECT_EQ(Values<uint8_t>(out), want);

  // DecodeImage: every frame, or only the first; DecodeJpeg and DecodePng refuse animations.
  SL_ASSERT_OK_AND_ASSIGN(Tensor all, Decode("DecodeImage", gif));
  EXPECT_EQ(Values<uint8_t>(all), want);
  SL_ASSERT_OK_AND_ASSIGN(Tensor one, Decode("DecodeImage", gif, [](KernelTester& t) {
                            t.Attr("expand_animations", false);
                          }));
  EXPECT_EQ(one.shape(), TensorShape({2, 3, 3}));
  EXPECT_EQ(Values<uint8_t>(one), Colors({1, 2, 3, 3, 2, 1}));
  ExpectError(Decode("DecodePng", gif), absl::StatusCode::kInvalidArgument,
              "Got 2 frames, but animated gifs can only be decoded by tf.io.decode_gif or tf.io.decode_image");
  ExpectError(Decode("DecodeGif", gif.substr(0, gif.size() - 1)), absl::StatusCode::kInvalidArgument,
              "Invalid GIF data");
  ExpectError(Decode("DecodeImage", gif, [](KernelTester& t) { t.Attr("channels", 1); }),
              absl::StatusCode::kInvalidArgument, "channels must be 0 or 3 for GIF, got 1");
  ExpectError(Decode("DecodeBmp", gif), absl::StatusCode::kInvalidArgument, "Trying to decode GIF format using DecodeBmp");

  // One frame is a plain image to DecodeJpeg, in uint16 to DecodeImage.
  const std::string still = Gif(3, 2, kFour, {first});
  SL_ASSERT_OK_AND_ASSIGN(Tensor jpeg_op, Decode("DecodeJpeg", still));
  EXPECT_EQ(jpeg_op.shape(), TensorShape({2, 3, 3}));
  SL_ASSERT_OK_AND_ASSIGN(Tensor wide, Decode("DecodeImage", still, [](KernelTester& t) {
                            t.Attr("dtype", DT_UINT16).Attr("expand_animations", false);
                          }));
  EXPECT_EQ(Values<uint16_t>(wide)[0], 255 * 256);  // Red, the first pixel's color.
}

TEST(DecodeGifTest, OffsetsLocalTablesAndInterlacing) {
  // The canvas is the largest frame (4 x 3), not the screen: the first frame covers only its
  // top-left 2 x 2 (the rest black); the third, with its own table, covers a 1 x 2 column.
  const std::vector<Rgb> local = {{9, 9, 9}, {200, 100, 50}};
  GifFrame small{0, 0, 2, 2, {1, 1, 1, 1}};
  GifFrame big{0, 0, 4, 3, {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, /*transparent=*/3};
  GifFrame column{3, 1, 1, 2, {1, 0}, -1, local};
  const std::string gif = Gif(10, 10, kFour, {small, big, column});
  SL_ASSERT_OK_AND_ASSIGN(Tensor out, Decode("DecodeGif", gif));
  ASSERT_EQ(out.shape(), TensorShape({3, 3, 4, 3}));
  const Bytes v = Values<uint8_t>(out);
  const Bytes frame0 = Colors({1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(Bytes(v.begin(), v.begin() + 36), frame0);
  EXPECT_EQ(Bytes(v.begin() + 36, v.begin() + 72), frame0);  // All transparent.
  Bytes frame2 = frame0;
  frame2[(1 * 4 + 3) * 3] = 200, frame2[(1 * 4 + 3) * 3 + 1] = 100, frame2[(1 * 4 + 3) * 3 + 2] = 50;
  frame2[(2 * 4 + 3) * 3] = 9, frame2[(2 * 4 + 3) * 3 + 1] = 9, frame2[(2 * 4 + 3) * 3 + 2] = 9;
  EXPECT_EQ(Bytes(v.begin() + 72, v.end()), frame2);

  // A frame reaching past the canvas is clipped to it.
  GifFrame wide{0, 0, 3, 1, {1, 2, 3}}, shifted{2, 0, 2, 1, {2, 2}};
  SL_ASSERT_OK_AND_ASSIGN(Tensor clipped, Decode("DecodeGif", Gif(3, 1, kFour, {wide, shifted})));
  const Bytes c = Values<uint8_t>(clipped);
  ASSERT_EQ(c.size(), 18u);
  EXPECT_EQ(Bytes(c.begin() + 9, c.end()), Colors({1, 2, 2}));

  // Interlaced rows come back in order.
  GifFrame tall{0, 0, 2, 9, {}};
  for (int i = 0; i < 18; ++i) tall.indexes.push_back(static_cast<uint8_t>((i / 2) % 4));
  tall.interlaced = true;
  SL_ASSERT_OK_AND_ASSIGN(Tensor rows, Decode("DecodeGif", Gif(2, 9, kFour, {tall})));
  EXPECT_EQ(Values<uint8_t>(rows), Colors(tall.indexes));
}

TEST(DecodeGifTest, DamagedAndHostileStreams) {
  GifFrame frame{0, 0, 3, 2, {1, 2, 3, 3, 2, 1}};
  const std::string gif = Gif(3, 2, kFour, {frame});
  // Every prefix fails with INVALID_ARGUMENT (a GIF without its trailer included).
  for (size_t n = 1; n < gif.size(); ++n) {
    auto got = Decode("DecodeGif", gif.substr(0, n));
    if (n < 4) continue;  // Shorter than "GIF8": not a GIF at all.
    ExpectError(got, absl::StatusCode::kInvalidArgument, "Invalid GIF data");
  }
  // An index past a table of 4 colors (the frame codes 3 bits for an 8-color table it lacks).
  GifFrame past = frame;
  past.indexes[4] = 6;
  past.local_colors = {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}, {5, 5, 5}, {6, 6, 6}, {7, 7, 7}, {8, 8, 8}};
  std::string bad_index = Gif(3, 2, kFour, {past});
  // Shrink the local table's declared size from 8 to 4 colors, dropping 4 of its entries.
  const size_t desc = bad_index.find(',', 6 + 7 + 12);
  ASSERT_NE(desc, std::string::npos);
  bad_index[desc + 9] = static_cast<char>(0x81);
  bad_index.erase(desc + 10 + 12, 12);
  ExpectError(Decode("DecodeGif", bad_index), absl::StatusCode::kInvalidArgument,
              "found color index 6 outside of color map range 4");
  // No color table at all.
  ExpectError(Decode("DecodeGif", Gif(3, 2, {}, {GifFrame{0, 0, 3, 2, {0, 1, 0, 1, 0, 1}}})),
              absl::StatusCode::kInvalidArgument, "has no color map");
  // No frames.
  ExpectError(Decode("DecodeGif", Gif(3, 2, kFour, {})), absl::StatusCode::kInvalidArgument,
              "does not contain any image");
  // A frame declaring 65535 x 65535 pixels is refused before its data is read.
  std::string huge = gif;
  const size_t at = huge.find(',', 13 + 12);
  ASSERT_NE(at, std::string::npos);
  for (int i = 5; i < 9; ++i) huge[at + i] = '\xFF';
  ExpectError(Decode("DecodeGif", huge), absl::StatusCode::kResourceExhausted, "above the limit");
  // A frame of no pixels.
  std::string empty = gif;
  empty[at + 5] = empty[at + 6] = '\0';
  ExpectError(Decode("DecodeGif", empty), absl::StatusCode::kInvalidArgument, "is 0 x 2 pixels");
  // A code the table does not hold yet (5 is the end code, so 7 is undefined after a clear).
  std::string undefined = gif;
  const size_t data = at + 10 + 1 + 1;  // Descriptor, min code size, block length.
  undefined[data] = static_cast<char>(0x3C);  // Clear (4), then 7.
  EXPECT_FALSE(Decode("DecodeGif", undefined).ok());
}

// ---- Robustness ----

TEST(DecodeImageTest, FlippedBytesNeverCrash) {
  std::vector<uint32_t> ramp(256);
  for (uint32_t i = 0; i < 256; ++i) ramp[i] = i * 0x010101;
  GifFrame f0{0, 0, 4, 3, Bytes(12, 1)}, f1{1, 1, 2, 2, {0, 1, 2, 3}, 2};
  const std::vector<std::string> streams = {
      EncodeJpeg(16, 16, 3, Smooth(16, 16, 3)), EncodeJpeg(16, 16, 3, Smooth(16, 16, 3), /*progressive=*/true),
      EncodePng(5, 6, 4, Smooth(5, 6, 4)),      Gif(4, 3, kFour, {f0, f1}),
      Bmp(5, 3, 24, Smooth(3, 5, 3), false),    Bmp(4, 4, 8, Bytes(16, 9), true, ramp)};
  std::mt19937 rng(1234);
  for (const std::string& clean : streams) {
    for (int trial = 0; trial < 150; ++trial) {
      std::string s = clean;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) s[rng() % s.size()] = static_cast<char>(rng() & 0xFF);
      if (rng() % 4 == 0) s.resize(rng() % s.size());
      for (const char* op : {"DecodeImage", "DecodeGif"}) {
        auto got = Decode(op, s);
        if (got.ok()) continue;
        const absl::StatusCode code = got.status().code();
        EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kResourceExhausted ||
                    code == absl::StatusCode::kUnimplemented)
            << got.status();
      }
    }
  }
}

}  // namespace
}  // namespace sluice
