#include "kernels/dnnl_eltwise.h"

#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "kernels/dnnl_util.h"

namespace sluice {
namespace {

// Work goes through primitives of a few fixed lengths so that each is compiled once: whole
// blocks of kBlock elements, then the rest in powers of two down to kMinPiece, then a padded
// copy for the last few elements.
constexpr int64_t kBlock = int64_t{1} << 14;
constexpr int64_t kMinPiece = 64;

dnnl::algorithm ToDnnl(EltwiseAlgo algo) {
  switch (algo) {
    case EltwiseAlgo::kExp: return dnnl::algorithm::eltwise_exp;
    case EltwiseAlgo::kTanh: return dnnl::algorithm::eltwise_tanh;
    case EltwiseAlgo::kSigmoid: return dnnl::algorithm::eltwise_logistic;
    case EltwiseAlgo::kNone: break;
  }
  return dnnl::algorithm::undef;
}

struct Piece {
  dnnl::memory::desc md;
  dnnl::eltwise_forward prim;
};

// The primitive for `algo` over `len` elements, built on first use.
const Piece* GetPiece(EltwiseAlgo algo, int64_t len) {
  static absl::Mutex mu;
  static auto* cache = new absl::flat_hash_map<std::pair<int, int64_t>, std::unique_ptr<Piece>>();
  absl::MutexLock lock(&mu);
  auto& slot = (*cache)[{static_cast<int>(algo), len}];
  if (slot == nullptr) {
    dnnl::memory::desc md({len}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, ToDnnl(algo), md, 0.f, 0.f);
    dnnl::eltwise_forward::primitive_desc pd(desc, DnnlEngine());
    slot = std::make_unique<Piece>(Piece{md, dnnl::eltwise_forward(pd)});
  }
  return slot.get();
}

}  // namespace

bool DnnlEltwise(EltwiseAlgo algo, const float* x, float* y, int64_t n) {
  if (algo == EltwiseAlgo::kNone || n < kMinPiece) return false;
  // oneDNN 2.6's exp turns NaN into inf; a range holding NaN takes the scalar path instead.
  bool any_nan = false;
  for (int64_t i = 0; i < n; ++i) any_nan |= x[i] != x[i];
  if (any_nan) return false;
  try {
    dnnl::engine& eng = DnnlEngine();
    thread_local dnnl::stream stream(eng);
    // The caller already runs on one of the compute pool's threads.
    if (omp_get_max_threads() != 1) omp_set_num_threads(1);
    // Builds (or finds) a primitive before anything is written: x and y may be one buffer,
    // so a failure halfway could not fall back.
    GetPiece(algo, kMinPiece);
    auto run = [&](const float* src, float* dst, int64_t len) {
      const Piece* piece = GetPiece(algo, len);
      dnnl::memory in(piece->md, eng, const_cast<float*>(src));
      dnnl::memory out(piece->md, eng, dst);
      piece->prim.execute(stream, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
    };
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) run(x + i, y + i, kBlock);
    for (int64_t len = kBlock / 2; len >= kMinPiece; len /= 2) {
      if (i + len <= n) {
        run(x + i, y + i, len);
        i += len;
      }
    }
    if (i < n) {  // Fewer than kMinPiece left: through a padded buffer.
      float in[kMinPiece] = {}, out[kMinPiece];
      std::copy(x + i, x + n, in);
      run(in, out, kMinPiece);
      std::copy(out, out + (n - i), y + i);
    }
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace sluice
