// Winograd's F(4x4, 3x3) convolution of NHWC float tensors, written for AVX2 (with FMA): a 3x3,
// stride-1, undilated, ungrouped convolution as 36 products of (tiles x C) by (C x K) matrices
// between an input transform (each 6x6 patch of every channel: B' d B) and an output transform
// (A' m A: a 4x4 block of output). oneDNN 2.6 has a Winograd kernel only for AVX-512; on AVX2
// its direct kernel runs at the FMA units' peak, and this one does 4x fewer multiplications
// (plus the transforms). DnnlConv times it against oneDNN's kernels where it may pay.
//
//   WinogradConv3x3 conv(w, out_channels, in_channels);   // W: OIHW; transformed once
//   conv.Run(x, shape, bias, WinogradConv3x3::kRelu, 0, 0, /*accumulate=*/false, threads, y);
//
// Its results differ from the direct convolution's in the last bits (the transforms' rounding:
// about 1e-6 of the inputs' magnitude times the number of terms).
#ifndef SLUICE_KERNELS_WINOGRAD_CONV_H_
#define SLUICE_KERNELS_WINOGRAD_CONV_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace sluice {

class WinogradConv3x3 {
 public:
  // What follows the sum (after bias and the accumulated y): clip's bounds and LeakyRelu's
  // slope are `alpha` and `beta` of Run.
  enum Epilogue { kNone, kRelu, kClip, kLeakyRelu };

  // Whether this CPU, under SLUICE_MAX_ISA, runs the kernel (AVX2 with FMA, or more).
  static bool Available();

  // `w`: [out_channels][in_channels][3][3], transformed into the kernel's layout here.
  WinogradConv3x3(const float* w, int64_t out_channels, int64_t in_channels);

  // Dims of one call: x is [n][h][w][C], y [n][out_h][out_w][K], both dense. Output pixel
  // (i, j) reads input rows i - pad_top .. i - pad_top + 2 (outside x: zeros); so any padding,
  // at either end, is given by out_h and out_w.
  struct Shape {
    int64_t n, h, w, pad_top, pad_left, out_h, out_w;
  };

  // y = epilogue(conv(x) + bias (may be null) + (accumulate ? y : 0)), on `threads` threads of
  // the caller's OpenMP team.
  void Run(const float* x, const Shape& s, const float* bias, Epilogue epilogue, float alpha, float beta,
           bool accumulate, int threads, float* y) const;

  // The transformed weights (36/9 of the weights' bytes, padded).
  const void* weights() const { return u_.get(); }
  int64_t weight_bytes() const { return WeightBytes(k_, c_); }
  // What weight_bytes() is for those channel counts, before making one.
  static int64_t WeightBytes(int64_t out_channels, int64_t in_channels) {
    return 36 * ((out_channels + 15) / 16 * 16) * ((in_channels + 7) / 8 * 8) * static_cast<int64_t>(sizeof(float));
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  int64_t k_, c_;
  int64_t kp_;  // K rounded up to 16: a panel of the product is 16 output channels.
  int64_t cp_;  // C rounded up to 8: the transforms' vectors.
  // U = G g G' of each (k, c): [36][kp / 16][cp][16], zero where k >= K or c >= C.
  std::unique_ptr<float[], Free> u_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_WINOGRAD_CONV_H_
