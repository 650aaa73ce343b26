#include "kernels/winograd_conv.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "kernels/cpu_isa.h"
#include "kernels/threading.h"

namespace sluice {
namespace {

// Toom-Cook at the points 0, 1, -1, 1/2, -2 and infinity. With 1/2 in place of the usual 2,
// float rounding is about half that of Lavin and Gray's 0, +-1, +-2 (Barabasz et al., "Error
// analysis and improving the accuracy of Winograd convolution"; measured in a numpy model of
// this kernel: 2.0e-5 against 3.8e-5 mean error over 64 channels):
//   B' = [1 -3/2   -2  3/2 1 0]   G = [    1     0     0]   A' = [1 1  1   1  1 0]
//        [0   -1  1/2  5/2 1 0]       [  1/3   1/3   1/3]        [0 1 -1 1/2 -2 0]
//        [0    1 -5/2  1/2 1 0]       [ -1/3   1/3  -1/3]        [0 1  1 1/4  4 0]
//        [0   -2   -1    2 1 0]       [-16/15 -8/15 -4/15]       [0 1 -1 1/8 -8 1]
//        [0  1/2   -1 -1/2 1 0]       [ 1/15 -2/15  4/15]
//        [0    1 -3/2   -2 3/2 1]     [    0     0     1]
constexpr double kG[6][3] = {{1, 0, 0},
                             {1.0 / 3, 1.0 / 3, 1.0 / 3},
                             {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                             {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                             {1.0 / 15, -2.0 / 15, 4.0 / 15},
                             {0, 0, 1}};

// The transforms' and products' working set per block of tiles (V and M, 36 matrices each):
// about what one core's L2 holds beside a panel of U.
constexpr int64_t kBlockBytes = int64_t{768} << 10;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

float* AlignedFloats(int64_t count) {
  const size_t bytes = static_cast<size_t>(RoundUp(std::max<int64_t>(count, 16) * 4, 64));
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<float*>(p);
}

// This thread's working buffer of at least `count` floats (V and M of a block), kept between
// calls: a 1-2 MB allocation per call is a fresh mapping and its page faults every time.
float* ThreadScratch(int64_t count) {
  struct Scratch {
    float* p = nullptr;
    int64_t count = 0;
    ~Scratch() { std::free(p); }
  };
  thread_local Scratch s;
  if (s.count < count) {
    std::free(s.p);
    s.p = nullptr;
    s.count = 0;
    s.p = AlignedFloats(count);
    s.count = count;
  }
  return s.p;
}

// One tile's lanes: 8 channels, `lanes` of them real (the rest read as zero and not written).
__attribute__((target("avx2,fma"))) inline __m256i LaneMask(int64_t lanes) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), index);
}

// B' applied to d[0..5] (a column or row of a patch), into r[0..5].
__attribute__((target("avx2,fma"))) inline void InputRows(const __m256* d, __m256* r) {
  const __m256 half = _mm256_set1_ps(0.5f), two = _mm256_set1_ps(2), three_halves = _mm256_set1_ps(1.5f),
               five_halves = _mm256_set1_ps(2.5f);
  const __m256 d31 = _mm256_sub_ps(d[3], d[1]), d42 = _mm256_sub_ps(d[4], d[2]);
  r[0] = _mm256_fmadd_ps(three_halves, d31, _mm256_fnmadd_ps(two, d[2], _mm256_add_ps(d[0], d[4])));
  r[1] = _mm256_fmadd_ps(five_halves, d[3], _mm256_fmadd_ps(half, d[2], _mm256_sub_ps(d[4], d[1])));
  r[2] = _mm256_fmadd_ps(half, d[3], _mm256_fnmadd_ps(five_halves, d[2], _mm256_add_ps(d[4], d[1])));
  r[3] = _mm256_fmadd_ps(two, d31, d42);
  r[4] = _mm256_fnmadd_ps(half, d31, d42);
  r[5] = _mm256_fmadd_ps(three_halves, d42, _mm256_fnmadd_ps(two, d[3], _mm256_add_ps(d[1], d[5])));
}

// A' applied to m[0..5], into o[0..3].
__attribute__((target("avx2,fma"))) inline void OutputRows(const __m256* m, __m256* o) {
  const __m256 p12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
  o[0] = _mm256_add_ps(_mm256_add_ps(m[0], p12), _mm256_add_ps(m[3], m[4]));
  o[1] = _mm256_fnmadd_ps(_mm256_set1_ps(2), m[4], _mm256_fmadd_ps(_mm256_set1_ps(0.5f), m[3], d12));
  o[2] = _mm256_fmadd_ps(_mm256_set1_ps(4), m[4], _mm256_fmadd_ps(_mm256_set1_ps(0.25f), m[3], p12));
  o[3] = _mm256_fnmadd_ps(_mm256_set1_ps(8), m[4],
                          _mm256_fmadd_ps(_mm256_set1_ps(0.125f), m[3], _mm256_add_ps(d12, m[5])));
}

struct Geometry {
  int64_t n, h, w, c, cp, k, kp, pad_top, pad_left, out_h, out_w, tiles_h, tiles_w;
};

// V[ab][t - t0][c] = (B' d B)[a][b] for tiles [t0, t1), d each tile's 6x6 patch of channel c.
// V's matrices are `ab_stride` floats apart.
__attribute__((target("avx2,fma"))) void InputTransform(const float* x, const Geometry& g, int64_t t0, int64_t t1,
                                                        float* v, int64_t ab_stride) {
  alignas(32) float cols[6][6][8];  // B' applied down each column of the patch: [row][col].
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.tiles_h * g.tiles_w), r = t % (g.tiles_h * g.tiles_w);
    const int64_t ih0 = r / g.tiles_w * 4 - g.pad_top, iw0 = r % g.tiles_w * 4 - g.pad_left;
    const bool inside = ih0 >= 0 && ih0 + 6 <= g.h && iw0 >= 0 && iw0 + 6 <= g.w;
    const float* image = x + n * g.h * g.w * g.c;
    float* vt = v + (t - t0) * g.cp;
    for (int64_t c0 = 0; c0 < g.cp; c0 += 8) {
      const int64_t lanes = std::min<int64_t>(8, g.c - c0);
      const __m256i mask = LaneMask(lanes);
      for (int j = 0; j < 6; ++j) {
        const int64_t iw = iw0 + j;
        __m256 d[6], rows[6];
        for (int i = 0; i < 6; ++i) {
          const int64_t ih = ih0 + i;
          if (inside || (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w)) {
            const float* p = image + (ih * g.w + iw) * g.c + c0;
            d[i] = lanes == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
          } else {
            d[i] = _mm256_setzero_ps();
          }
        }
        InputRows(d, rows);
        for (int i = 0; i < 6; ++i) _mm256_store_ps(cols[i][j], rows[i]);
      }
      for (int a = 0; a < 6; ++a) {
        __m256 e[6], out[6];
        for (int b = 0; b < 6; ++b) e[b] = _mm256_load_ps(cols[a][b]);
        InputRows(e, out);
        for (int b = 0; b < 6; ++b) _mm256_storeu_ps(vt + (a * 6 + b) * ab_stride + c0, out[b]);
      }
    }
  }
}

// m[r][0..16) = sum over c < depth of v[r][c] * u[c][0..16), for rows r < R: a 6x16 block of
// one of the 36 products, its 12 accumulators in registers.
template <int R>
__attribute__((target("avx2,fma"))) void Panel(const float* v, int64_t ldv, const float* u, int64_t depth, float* m,
                                               int64_t ldm) {
  __m256 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t c = 0; c < depth; ++c) {
    const __m256 u0 = _mm256_load_ps(u + c * 16), u1 = _mm256_load_ps(u + c * 16 + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 b = _mm256_broadcast_ss(v + r * ldv + c);
      acc[r][0] = _mm256_fmadd_ps(b, u0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(b, u1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(m + r * ldm, acc[r][0]);
    _mm256_storeu_ps(m + r * ldm + 8, acc[r][1]);
  }
}

// M[ab] = V[ab] U[ab] for the 36 products of a block of `tiles` tiles.
__attribute__((target("avx2,fma"))) void Products(const float* v, const float* u, const Geometry& g, int64_t tiles,
                                                  float* m) {
  using PanelFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t);
  static constexpr PanelFn kPanels[7] = {nullptr, Panel<1>, Panel<2>, Panel<3>, Panel<4>, Panel<5>, Panel<6>};
  for (int ab = 0; ab < 36; ++ab) {
    const float* va = v + ab * tiles * g.cp;
    const float* ua = u + ab * g.kp * g.cp;
    float* ma = m + ab * tiles * g.kp;
    for (int64_t k0 = 0; k0 < g.kp; k0 += 16) {
      const float* panel = ua + k0 * g.cp;  // [cp][16] of output channels k0..k0+16.
      for (int64_t r0 = 0; r0 < tiles; r0 += 6) {
        const int rows = static_cast<int>(std::min<int64_t>(6, tiles - r0));
        kPanels[rows](va + r0 * g.cp, g.cp, panel, g.c, ma + r0 * g.kp + k0, g.kp);
      }
    }
  }
}

// y's 4x4 blocks of tiles [t0, t1) = A' M A, plus bias and (accumulating) y, then the epilogue.
__attribute__((target("avx2,fma"))) void OutputTransform(const float* m, int64_t ab_stride, const Geometry& g,
                                                         int64_t t0, int64_t t1, const float* bias,
                                                         WinogradConv3x3::Epilogue epilogue, float alpha, float beta,
                                                         bool accumulate, float* y) {
  const __m256 lo = _mm256_set1_ps(alpha), hi = _mm256_set1_ps(beta), zero = _mm256_setzero_ps();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.tiles_h * g.tiles_w), r = t % (g.tiles_h * g.tiles_w);
    const int64_t oh0 = r / g.tiles_w * 4, ow0 = r % g.tiles_w * 4;
    const int rows = static_cast<int>(std::min<int64_t>(4, g.out_h - oh0));
    const int cols = static_cast<int>(std::min<int64_t>(4, g.out_w - ow0));
    const float* mt = m + (t - t0) * g.kp;
    float* image = y + n * g.out_h * g.out_w * g.k;
    for (int64_t k0 = 0; k0 < g.k; k0 += 8) {
      const int64_t lanes = std::min<int64_t>(8, g.k - k0);
      const __m256i mask = LaneMask(lanes);
      __m256 s[4][6];  // A' applied down each column of M's 6x6.
      for (int b = 0; b < 6; ++b) {
        __m256 col[6], out[4];
        for (int a = 0; a < 6; ++a) col[a] = _mm256_loadu_ps(mt + (a * 6 + b) * ab_stride + k0);
        OutputRows(col, out);
        for (int i = 0; i < 4; ++i) s[i][b] = out[i];
      }
      const __m256 b0 =
          bias == nullptr ? zero : (lanes == 8 ? _mm256_loadu_ps(bias + k0) : _mm256_maskload_ps(bias + k0, mask));
      for (int i = 0; i < rows; ++i) {
        __m256 o[4];
        OutputRows(s[i], o);
        for (int j = 0; j < cols; ++j) {
          float* p = image + ((oh0 + i) * g.out_w + ow0 + j) * g.k + k0;
          __m256 val = _mm256_add_ps(o[j], b0);
          if (accumulate) val = _mm256_add_ps(val, lanes == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask));
          switch (epilogue) {
            case WinogradConv3x3::kNone:
              break;
            case WinogradConv3x3::kRelu:
              val = _mm256_max_ps(val, zero);
              break;
            case WinogradConv3x3::kClip:
              val = _mm256_min_ps(_mm256_max_ps(val, lo), hi);
              break;
            case WinogradConv3x3::kLeakyRelu:
              val = _mm256_blendv_ps(val, _mm256_mul_ps(val, lo), _mm256_cmp_ps(val, zero, _CMP_LT_OQ));
              break;
          }
          if (lanes == 8) {
            _mm256_storeu_ps(p, val);
          } else {
            _mm256_maskstore_ps(p, mask, val);
          }
        }
      }
    }
  }
}

}  // namespace

bool WinogradConv3x3::Available() { return MaxCpuIsa() >= CpuIsa::kAvx2; }

namespace {

// U[ab][k / 16][c][k % 16] = (G g G')[a][b] of each (k, c) of OIHW weights `w`, 8 output
// channels at a time (a 32-byte store per position; one (k, c) at a time in double took 70 ms
// of ResNet-50's first run).
__attribute__((target("avx2,fma"))) void TransformWeights(const float* w, int64_t k_count, int64_t c_count, int64_t kp,
                                                          int64_t cp, float* u) {
  __m256 gm[6][3];
  for (int a = 0; a < 6; ++a) {
    for (int i = 0; i < 3; ++i) gm[a][i] = _mm256_set1_ps(static_cast<float>(kG[a][i]));
  }
  for (int64_t k0 = 0; k0 < k_count; k0 += 8) {
    const int64_t lanes = std::min<int64_t>(8, k_count - k0);
    for (int64_t c = 0; c < c_count; ++c) {
      __m256 g[9];
      for (int e = 0; e < 9; ++e) {
        alignas(32) float taps[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int64_t l = 0; l < lanes; ++l) taps[l] = w[((k0 + l) * c_count + c) * 9 + e];
        g[e] = _mm256_load_ps(taps);
      }
      __m256 gg[6][3];  // G g
      for (int a = 0; a < 6; ++a) {
        for (int j = 0; j < 3; ++j) {
          gg[a][j] =
              _mm256_fmadd_ps(gm[a][2], g[6 + j], _mm256_fmadd_ps(gm[a][1], g[3 + j], _mm256_mul_ps(gm[a][0], g[j])));
        }
      }
      float* uc = u + (k0 / 16 * 16) * cp + c * 16 + k0 % 16;
      for (int a = 0; a < 6; ++a) {
        for (int b = 0; b < 6; ++b) {
          const __m256 v = _mm256_fmadd_ps(gg[a][2], gm[b][2],
                                           _mm256_fmadd_ps(gg[a][1], gm[b][1], _mm256_mul_ps(gg[a][0], gm[b][0])));
          _mm256_storeu_ps(uc + (a * 6 + b) * kp * cp, v);
        }
      }
    }
  }
}

}  // namespace

WinogradConv3x3::WinogradConv3x3(const float* w, int64_t out_channels, int64_t in_channels)
    : k_(out_channels), c_(in_channels), kp_(RoundUp(out_channels, 16)), cp_(RoundUp(in_channels, 8)) {
  u_.reset(AlignedFloats(36 * kp_ * cp_));
  std::memset(u_.get(), 0, static_cast<size_t>(36 * kp_ * cp_) * sizeof(float));
  TransformWeights(w, k_, c_, kp_, cp_, u_.get());
}

void WinogradConv3x3::Run(const float* x, const Shape& s, const float* bias, Epilogue epilogue, float alpha, float beta,
                          bool accumulate, int threads, float* y) const {
  Geometry g{
      s.n, s.h, s.w, c_, cp_, k_, kp_, s.pad_top, s.pad_left, s.out_h, s.out_w, (s.out_h + 3) / 4, (s.out_w + 3) / 4};
  const int64_t tiles = g.n * g.tiles_h * g.tiles_w;
  if (tiles == 0) return;
  // Blocks of tiles whose V and M stay in L2, at least one per thread (and 6 tiles each: the
  // products' panels are 6 rows).
  const int64_t per_tile = 36 * (cp_ + kp_) * static_cast<int64_t>(sizeof(float));
  const int64_t most = std::max<int64_t>(6, kBlockBytes / per_tile);
  int64_t blocks = std::max<int64_t>((tiles + most - 1) / most, std::min<int64_t>(threads, (tiles + 5) / 6));
  const int64_t block = (tiles + blocks - 1) / blocks;
  blocks = (tiles + block - 1) / block;
  const float* u = u_.get();
  OmpParallelFor(blocks, 1, threads, [&](int64_t first, int64_t last) {
    float* v = ThreadScratch(36 * block * (cp_ + kp_));
    float* m = v + 36 * block * cp_;
    for (int64_t b = first; b < last; ++b) {
      const int64_t t0 = b * block, t1 = std::min(tiles, t0 + block), count = t1 - t0;
      InputTransform(x, g, t0, t1, v, count * cp_);
      Products(v, u, g, count, m);
      OutputTransform(m, count * kp_, g, t0, t1, bias, epilogue, alpha, beta, accumulate, y);
    }
  });
}

}  // namespace sluice
