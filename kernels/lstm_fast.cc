#include "kernels/lstm_fast.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/checked_size.h"
#include "kernels/blas.h"
#include "kernels/cpu_isa.h"
#include "kernels/fast_math_vector.h"
#include "kernels/threading.h"

namespace sluice {

namespace {

// The packed layout. Hidden units go in groups of one vector's width (8 floats on AVX2, 16 on
// AVX-512); group g's 4 * width columns are its units' gates i, o, f, c (ONNX's order), one
// vector each, so one thread owns whole groups and a cell update reads its four gates as four
// vectors. The last group is padded with units whose weights and biases are 0: their cell stays
// 0 and their h is never written.
//
// The packed column of gate q (ONNX's order) of hidden unit j.
int64_t PackedColumn(int64_t q, int64_t j, int64_t width) { return (j / width) * 4 * width + q * width + j % width; }

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

AlignedFloats AllocateFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return AlignedFloats(p);
}

// Scratch arrays up to this many floats (16 MB) are kept per calling thread between runs: a
// sequence's projections are megabytes, and allocating them per run costs page faults on every
// run. Larger ones (very long sequences) are the run's own, so no thread keeps them.
constexpr int64_t kKeptScratchFloats = int64_t{1} << 22;

float* Scratch(std::vector<float>* kept, std::vector<float>* own, int64_t n) {
  std::vector<float>* v = n <= kKeptScratchFloats ? kept : own;
  if (static_cast<int64_t>(v->size()) < n) v->resize(n);
  return v->data();
}

// ---- AVX2: 8-float vectors --------------------------------------------------------------------

// exp on [-87, 88] (clamped; NaN stays NaN).
__attribute__((target("avx2,fma"))) inline __m256 Exp8(__m256 x) {
  // max(lo, x) and min(hi, x) return x when it is NaN (the second operand).
  return ExpInRange8(_mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), x)));
}

__attribute__((target("avx2,fma"))) inline __m256 Sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, Exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// tanh: its series near 0, else (1 - e) / (1 + e) with e = exp(-2|x|) and x's sign.
__attribute__((target("avx2,fma"))) inline __m256 Tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = Exp8(_mm256_mul_ps(a, _mm256_set1_ps(-2.0f)));
  const __m256 far = _mm256_or_ps(_mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e)), _mm256_and_ps(sign, x));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 s = _mm256_fmadd_ps(x2, _mm256_set1_ps(-17.0f / 315), _mm256_set1_ps(2.0f / 15));
  s = _mm256_fmadd_ps(x2, s, _mm256_set1_ps(-1.0f / 3));
  s = _mm256_fmadd_ps(x2, s, one);
  const __m256 series = _mm256_mul_ps(x, s);
  return _mm256_blendv_ps(far, series, _mm256_cmp_ps(a, _mm256_set1_ps(0.125f), _CMP_LT_OQ));
}

// One row's cell updates for groups [g0, g1) of 8 units: `pre` holds the row's packed gate
// pre-activations, c its cell state (padded units included), h its output (H units).
__attribute__((target("avx2,fma"))) void CellRowAvx2(const float* pre, float* c, float* h, int64_t hidden,
                                                     int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g) {
    const float* p = pre + g * 32;
    const __m256 i = Sigmoid8(_mm256_loadu_ps(p));
    const __m256 o = Sigmoid8(_mm256_loadu_ps(p + 8));
    const __m256 f = Sigmoid8(_mm256_loadu_ps(p + 16));
    const __m256 z = Tanh8(_mm256_loadu_ps(p + 24));
    float* cg = c + g * 8;
    const __m256 cv = _mm256_fmadd_ps(f, _mm256_loadu_ps(cg), _mm256_mul_ps(i, z));
    _mm256_storeu_ps(cg, cv);
    const __m256 hv = _mm256_mul_ps(o, Tanh8(cv));
    const int64_t unit = g * 8;
    if (unit + 8 <= hidden) {
      _mm256_storeu_ps(h + unit, hv);
    } else {
      _mm256_maskstore_ps(h + unit, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hidden - unit)),
                                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
                          hv);
    }
  }
}

// C[MR, NS*8] = A[MR, k] B + (kBias ? bias : C) where B is NS packed slivers (k rows of 8
// floats each, `bstride` floats apart) and bias one row. A's rows are `lda` apart, C's `ldc`.
template <int MR, int NS, bool kBias>
__attribute__((target("avx2,fma"))) void TileAvx2(const float* a, int64_t lda, const float* b, int64_t bstride,
                                                  int64_t k, const float* bias, float* c, int64_t ldc) {
  __m256 acc[MR][NS];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) acc[r][j] = _mm256_loadu_ps(kBias ? bias + 8 * j : c + r * ldc + 8 * j);
  }
  for (int64_t p = 0; p < k; ++p) {
    __m256 bv[NS];
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) bv[j] = _mm256_load_ps(b + j * bstride + 8 * p);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
#pragma GCC unroll 3
      for (int j = 0; j < NS; ++j) acc[r][j] = _mm256_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) _mm256_storeu_ps(c + r * ldc + 8 * j, acc[r][j]);
  }
}

// ---- AVX-512: 16-float vectors ----------------------------------------------------------------

// GCC 12's AVX-512 headers leave the unused pass-through operand of some unmasked intrinsics
// undefined on purpose, which -Wmaybe-uninitialized reports where they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// As Exp8.
__attribute__((target("avx512f"))) inline __m512 Exp16(__m512 x) {
  return ExpInRange16(_mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-87.0f), x)));
}

__attribute__((target("avx512f"))) inline __m512 Sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, Exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// As Tanh8.
__attribute__((target("avx512f"))) inline __m512 Tanh16(__m512 x) {
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512 a = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = Exp16(_mm512_mul_ps(a, _mm512_set1_ps(-2.0f)));
  const __m512 magnitude = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512 far = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(magnitude), _mm512_and_si512(sign, _mm512_castps_si512(x))));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 s = _mm512_fmadd_ps(x2, _mm512_set1_ps(-17.0f / 315), _mm512_set1_ps(2.0f / 15));
  s = _mm512_fmadd_ps(x2, s, _mm512_set1_ps(-1.0f / 3));
  s = _mm512_fmadd_ps(x2, s, one);
  const __m512 series = _mm512_mul_ps(x, s);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.125f), _CMP_LT_OQ), far, series);
}

// As CellRowAvx2, for groups of 16 units.
__attribute__((target("avx512f"))) void CellRowAvx512(const float* pre, float* c, float* h, int64_t hidden,
                                                      int64_t g0, int64_t g1) {
  for (int64_t g = g0; g < g1; ++g) {
    const float* p = pre + g * 64;
    const __m512 i = Sigmoid16(_mm512_loadu_ps(p));
    const __m512 o = Sigmoid16(_mm512_loadu_ps(p + 16));
    const __m512 f = Sigmoid16(_mm512_loadu_ps(p + 32));
    const __m512 z = Tanh16(_mm512_loadu_ps(p + 48));
    float* cg = c + g * 16;
    const __m512 cv = _mm512_fmadd_ps(f, _mm512_loadu_ps(cg), _mm512_mul_ps(i, z));
    _mm512_storeu_ps(cg, cv);
    const __m512 hv = _mm512_mul_ps(o, Tanh16(cv));
    const int64_t unit = g * 16;
    const __mmask16 keep = unit + 16 <= hidden ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (hidden - unit)) - 1);
    _mm512_mask_storeu_ps(h + unit, keep, hv);
  }
}

template <int MR, int NS, bool kBias>
__attribute__((target("avx512f"))) void TileAvx512(const float* a, int64_t lda, const float* b, int64_t bstride,
                                                   int64_t k, const float* bias, float* c, int64_t ldc) {
  __m512 acc[MR][NS];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) acc[r][j] = _mm512_loadu_ps(kBias ? bias + 16 * j : c + r * ldc + 16 * j);
  }
  for (int64_t p = 0; p < k; ++p) {
    __m512 bv[NS];
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) bv[j] = _mm512_load_ps(b + j * bstride + 16 * p);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 3
      for (int j = 0; j < NS; ++j) acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int j = 0; j < NS; ++j) _mm512_storeu_ps(c + r * ldc + 16 * j, acc[r][j]);
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, const float*, float*, int64_t);

// The register tiles of one instruction set: rows up to max_rows, slivers of `width` columns up
// to 3 per tile; fn[1] starts from the bias row, fn[0] from C.
struct Tiles {
  int width = 8;
  int max_rows = 4;
  static constexpr int kMaxSlivers = 3;
  // The cell updates of one batch row for groups [g0, g1) of `width` units.
  void (*cell)(const float* pre, float* c, float* h, int64_t hidden, int64_t g0, int64_t g1) = nullptr;
  TileFn fn[2][8][kMaxSlivers] = {};  // fn[bias][rows - 1][slivers - 1]
};

#define SL_TILE_ROW(ISA, r, bias) {&Tile##ISA<r, 1, bias>, &Tile##ISA<r, 2, bias>, &Tile##ISA<r, 3, bias>}
#define SL_TILE_ROWS4(ISA, bias) \
  SL_TILE_ROW(ISA, 1, bias), SL_TILE_ROW(ISA, 2, bias), SL_TILE_ROW(ISA, 3, bias), SL_TILE_ROW(ISA, 4, bias)
#define SL_TILE_ROWS8(ISA, bias) \
  SL_TILE_ROWS4(ISA, bias), SL_TILE_ROW(ISA, 5, bias), SL_TILE_ROW(ISA, 6, bias), SL_TILE_ROW(ISA, 7, bias), \
      SL_TILE_ROW(ISA, 8, bias)

const Tiles& TilesFor(CpuIsa isa) {
  static const Tiles avx2 = [] {
    Tiles t;
    t.width = 8;
    t.max_rows = 4;
    t.cell = &CellRowAvx2;
    const TileFn rows[2][4][3] = {{SL_TILE_ROWS4(Avx2, false)}, {SL_TILE_ROWS4(Avx2, true)}};
    for (int bias = 0; bias < 2; ++bias) {
      for (int r = 0; r < 4; ++r) std::copy(rows[bias][r], rows[bias][r] + 3, t.fn[bias][r]);
    }
    return t;
  }();
  static const Tiles avx512 = [] {
    Tiles t;
    t.width = 16;
    t.max_rows = 8;
    t.cell = &CellRowAvx512;
    const TileFn rows[2][8][3] = {{SL_TILE_ROWS8(Avx512, false)}, {SL_TILE_ROWS8(Avx512, true)}};
    for (int bias = 0; bias < 2; ++bias) {
      for (int r = 0; r < 8; ++r) std::copy(rows[bias][r], rows[bias][r] + 3, t.fn[bias][r]);
    }
    return t;
  }();
  return isa == CpuIsa::kAvx512 ? avx512 : avx2;
}

#undef SL_TILE_ROWS8
#undef SL_TILE_ROWS4
#undef SL_TILE_ROW

// A barrier for a team that meets once per time step: each member spins (pausing) until the
// last one arrives, yielding its core after a while so an oversubscribed machine still moves.
class SpinBarrier {
 public:
  explicit SpinBarrier(int members) : members_(members) {}
  void Wait() {
    if (members_ <= 1) return;
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == members_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
      if (spins < 20000) {
        _mm_pause();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  const int members_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

}  // namespace

bool UseFastLstm() {
  static const bool use = [] {
    const char* env = std::getenv("SLUICE_LSTM");
    const std::string choice = env == nullptr ? "" : env;
    if (choice == "dnnl") return false;
    if (!choice.empty() && choice != "sluice") {
      std::fprintf(stderr, "sluice: SLUICE_LSTM='%s' names neither 'sluice' nor 'dnnl'; ignored\n", env);
    }
    return MaxCpuIsa() >= CpuIsa::kAvx2;
  }();
  return use;
}

struct FastLstm::Impl {
  struct Entry {
    int64_t dirs = 0, input = 0, hidden = 0;
    CpuIsa isa = CpuIsa::kBaseline;
    // The buffers the weights were packed from; holding them keeps their addresses from being
    // reused for other values, so the same buffers mean the same values.
    std::shared_ptr<TensorBuffer> w_buffer, r_buffer, b_buffer;
    AlignedFloats w;       // [dirs, cols / width, input, width]: W^T in slivers, as R^T.
    AlignedFloats bias;    // [dirs, cols]: both biases, summed.
    AlignedFloats r;       // [dirs, cols / width, hidden, width]: R^T in slivers of width columns.
  };
  static constexpr size_t kMaxEntries = 4;
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<const Entry>> entries ABSL_GUARDED_BY(mu);
};

FastLstm::FastLstm() : impl_(std::make_unique<Impl>()) {}
FastLstm::~FastLstm() = default;

absl::StatusOr<bool> FastLstm::Run(const DnnlRnnProblem& p, const Tensor& x, const Tensor& w, const Tensor& r,
                                   const Tensor* b, const Tensor* h0, const Tensor* c0, int threads, Tensor* y,
                                   Tensor* yh, Tensor* yc) const {
  const CpuIsa isa = MaxCpuIsa();
  if (isa < CpuIsa::kAvx2 || p.cell != DnnlRnnCell::kLstm || p.seq_len <= 0 || p.batch <= 0 || p.input <= 0 || p.hidden <= 0 ||
      x.dtype() != DT_FLOAT) {
    return false;
  }
  const int64_t D = p.num_dirs, T = p.seq_len, N = p.batch, I = p.input, H = p.hidden;
  const Tiles& tiles = TilesFor(isa);
  const int64_t width = tiles.width;
  const int64_t groups = (H + width - 1) / width;
  const int64_t cols = groups * 4 * width, hp = groups * width;
  int64_t rows_cols, w_size, r_size, tn;
  if (!CheckedMul(T, N, &tn) || !CheckedMul(tn, cols, &rows_cols) || !CheckedMul(D * cols, I, &w_size) ||
      !CheckedMul(D * cols, H, &r_size)) {
    return absl::InvalidArgumentError(absl::StrCat("LSTM of hidden_size ", H, ", input ", I, ", ", T,
                                                   " steps of batch ", N, ": the packed sizes overflow"));
  }

  std::shared_ptr<const Impl::Entry> entry;
  {
    absl::MutexLock lock(&impl_->mu);
    for (auto it = impl_->entries.begin(); it != impl_->entries.end(); ++it) {
      const Impl::Entry& e = **it;
      if (e.dirs == D && e.input == I && e.hidden == H && e.isa == isa && e.w_buffer == w.buffer() &&
          e.r_buffer == r.buffer() && e.b_buffer == (b ? b->buffer() : nullptr)) {
        entry = *it;
        impl_->entries.splice(impl_->entries.begin(), impl_->entries, it);
        break;
      }
    }
  }
  if (entry == nullptr) {
    auto e = std::make_shared<Impl::Entry>();
    e->dirs = D;
    e->input = I;
    e->hidden = H;
    e->isa = isa;
    e->w_buffer = w.buffer();
    e->r_buffer = r.buffer();
    e->b_buffer = b ? b->buffer() : nullptr;
    e->w = AllocateFloats(w_size);
    e->bias = AllocateFloats(D * cols);
    e->r = AllocateFloats(r_size);
    const float* wd = w.data<float>();
    const float* rd = r.data<float>();
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t q = 0; q < 4; ++q) {
        for (int64_t j = 0; j < H; ++j) {
          const int64_t col = PackedColumn(q, j, width), onnx_row = (d * 4 + q) * H + j;
          float* w_sliver = e->w.get() + d * cols * I + (col / width) * I * width + col % width;
          const float* wrow = wd + onnx_row * I;
          for (int64_t k = 0; k < I; ++k) w_sliver[k * width] = wrow[k];
          if (b) {
            const float* bd = b->data<float>() + d * 8 * H;
            e->bias[d * cols + col] = bd[q * H + j] + bd[4 * H + q * H + j];
          }
          // R^T's column `col` is R's row: sliver col / width, lane col % width.
          float* sliver = e->r.get() + d * cols * H + (col / width) * H * width + col % width;
          const float* rrow = rd + onnx_row * H;
          for (int64_t k = 0; k < H; ++k) sliver[k * width] = rrow[k];
        }
      }
    }
    entry = e;
    absl::MutexLock lock(&impl_->mu);
    impl_->entries.push_front(e);
    if (impl_->entries.size() > Impl::kMaxEntries) impl_->entries.pop_back();
  }

  thread_local std::vector<float> xw_kept, state_kept;
  std::vector<float> xw_own, state_own;
  float* xw = Scratch(&xw_kept, &xw_own, rows_cols);
  float* cell = Scratch(&state_kept, &state_own, N * hp + N * H);  // The cell state, then zeros for no h0.
  float* zeros = cell + N * hp;
  std::fill(zeros, zeros + N * H, 0.0f);
  float* yd = y->data<float>();
  // Row (t, n) of X's projections, Y and the states, as a base and a stride between batch rows.
  const int64_t xw_ld = p.batch_major ? T * cols : cols;
  auto xw_at = [&](int64_t t) { return xw + (p.batch_major ? t : t * N) * cols; };
  const int64_t y_ld = p.batch_major ? T * D * H : H;
  auto y_at = [&](int64_t t, int64_t d) { return yd + (t * D + d) * (p.batch_major ? H : N * H); };
  const int64_t state_ld = p.batch_major ? D * H : H;
  auto state_at = [&](float* s, int64_t d) { return s + d * (p.batch_major ? H : N * H); };

  // Per step, each thread's share of the recurrent product and cell updates; more threads than
  // groups, or steps too small to pay for a barrier each, take fewer.
  const double step_macs = static_cast<double>(N) * static_cast<double>(cols) * static_cast<double>(H + I);
  int team = ThreadsForWork(step_macs * static_cast<double>(T * D), threads);
  if (step_macs < 65536) team = 1;
  team = static_cast<int>(std::min<int64_t>(std::max(team, 1), groups));
  constexpr int64_t slivers_per_group = 4;

  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = p.reverse || d == 1;
    // The cell state.
    for (int64_t n = 0; n < N; ++n) {
      float* cn = cell + n * hp;
      if (c0 != nullptr) {
        const float* from = state_at(const_cast<float*>(c0->data<float>()), d) + n * state_ld;
        std::copy(from, from + H, cn);
        std::fill(cn + H, cn + hp, 0.0f);
      } else {
        std::fill(cn, cn + hp, 0.0f);
      }
    }
    const float* h_init = h0 != nullptr ? state_at(const_cast<float*>(h0->data<float>()), d) : zeros;
    const int64_t h_init_ld = h0 != nullptr ? state_ld : H;
    const float* rp = entry->r.get() + d * cols * H;
    const float* wp = entry->w.get() + d * cols * I;
    const float* bias = entry->bias.get() + d * cols;
    const float* xd = x.data<float>();
    auto run = [&](int me, int members, SpinBarrier* barrier) {
      const int64_t g0 = groups * me / members, g1 = groups * (me + 1) / members;
      const int64_t s0 = g0 * slivers_per_group, s1 = g1 * slivers_per_group;
      // First the input projections of every step for this thread's columns (X's rows in X's
      // order, biases included): no other thread reads them, so no barrier follows. Rows in
      // chunks that stay in L2 while each panel of W's slivers stays in L1.
      constexpr int64_t kRowChunk = 64;
      for (int64_t chunk = 0; chunk < tn; chunk += kRowChunk) {
        const int64_t chunk_end = std::min(tn, chunk + kRowChunk);
        for (int64_t s = s0; s < s1; s += Tiles::kMaxSlivers) {
          const int ns = static_cast<int>(std::min<int64_t>(Tiles::kMaxSlivers, s1 - s));
          for (int64_t r0 = chunk; r0 < chunk_end; r0 += tiles.max_rows) {
            const int mr = static_cast<int>(std::min<int64_t>(tiles.max_rows, chunk_end - r0));
            tiles.fn[1][mr - 1][ns - 1](xd + r0 * I, I, wp + s * I * width, I * width, I, bias + s * width,
                                        xw + r0 * cols + s * width, cols);
          }
        }
      }
      // Then the steps: each adds h_{t-1} R^T to its projections and updates this thread's cells.
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = reverse ? T - 1 - step : step;
        const float* a = h_init;
        int64_t lda = h_init_ld;
        if (step > 0) {
          a = y_at(reverse ? t + 1 : t - 1, d);
          lda = y_ld;
        }
        float* pre = xw_at(t);
        for (int64_t s = s0; s < s1; s += Tiles::kMaxSlivers) {
          const int ns = static_cast<int>(std::min<int64_t>(Tiles::kMaxSlivers, s1 - s));
          for (int64_t r0 = 0; r0 < N; r0 += tiles.max_rows) {
            const int mr = static_cast<int>(std::min<int64_t>(tiles.max_rows, N - r0));
            tiles.fn[0][mr - 1][ns - 1](a + r0 * lda, lda, rp + s * H * width, H * width, H, nullptr,
                                        pre + r0 * xw_ld + s * width, xw_ld);
          }
        }
        float* out = y_at(t, d);
        for (int64_t n = 0; n < N; ++n) tiles.cell(pre + n * xw_ld, cell + n * hp, out + n * y_ld, H, g0, g1);
        barrier->Wait();
      }
    };
    SpinBarrier alone(1);
    if (team <= 1) {
      run(0, 1, &alone);
    } else {
      // The team runs the whole sequence in one parallel region. A team smaller than asked for
      // (a nested region) runs it all on its first thread rather than wait at the barrier for
      // members that never come.
      SpinBarrier barrier(team);
      std::atomic<bool> short_team{false};
      OmpParallelFor(team, 1, team, [&](int64_t begin, int64_t) {
        if (omp_get_num_threads() != team) {
          short_team.store(true);
          return;
        }
        run(static_cast<int>(begin), team, &barrier);
      });
      if (short_team.load()) run(0, 1, &alone);
    }
    // Y_h: h after the last step; Y_c: the cell state.
    const float* last = y_at(reverse ? 0 : T - 1, d);
    for (int64_t n = 0; n < N; ++n) {
      std::copy(last + n * y_ld, last + n * y_ld + H, state_at(yh->data<float>(), d) + n * state_ld);
      if (yc != nullptr) std::copy(cell + n * hp, cell + n * hp + H, state_at(yc->data<float>(), d) + n * state_ld);
    }
  }
  return true;
}

}  // namespace sluice
