#include "kernels/blas.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kernels/tuning_cache.h"

namespace sluice {
namespace {

// A product's shape, strides, the threads it runs on and where A, B and C lie within 64 bytes
// (oneDNN 2.6's AVX2 sgemm runs 197x768 by 768x3072 1.6x slower when B is 32-byte aligned).
using GemmProblem = std::array<int64_t, 12>;

struct LibraryChoices {
  absl::Mutex mu;
  absl::flat_hash_map<GemmProblem, bool> openblas ABSL_GUARDED_BY(mu);
};

LibraryChoices& Choices() {
  static LibraryChoices* choices = new LibraryChoices;
  return *choices;
}

// The largest C measured (64 MB).
constexpr int64_t kMaxScratchFloats = int64_t{1} << 24;

int64_t Within64(const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % 64); }

bool DnnlSgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  UseOmpThreads(threads);
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
         dnnl_success;
}

}  // namespace

void OpenBlasSgemmOnTeam(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  UseOpenBlasThreads(1);
  // Columns of C in blocks of 16 (whole vectors), one block range per thread of the team.
  const int64_t blocks = (n + 15) / 16;
  OmpParallelFor(blocks, 1, std::max(threads, 1), [&](int64_t begin, int64_t end) {
    const int64_t j0 = begin * 16, j1 = std::min(n, end * 16);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, j1 - j0,
                k, alpha, a, lda, trans_b ? b + j0 * ldb : b + j0, ldb, beta, c + j0, ldc);
  });
}

bool SgemmOnOpenBlas(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, const float* c, int64_t ldc, int threads) {
  return SgemmOnOpenBlasMeasured(TuningCache::Global(), /*remember=*/true, trans_a, trans_b, m, n, k, alpha, a, lda,
                                 b, ldb, beta, c, ldc, threads);
}

bool SgemmOnOpenBlasMeasured(TuningCache& tuning, bool remember, bool trans_a, bool trans_b, int64_t m, int64_t n,
                             int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                             float beta, const float* c, int64_t ldc, int threads) {
  const double multiply_adds = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (m <= 0 || n <= 0 || k <= 0 || multiply_adds < kSgemmLibraryChoiceMinMultiplyAdds ||
      multiply_adds > kSgemmLibraryChoiceMaxMultiplyAdds) {
    return false;
  }
  const GemmProblem problem = {m,   n,   k,   trans_a, trans_b, lda, ldb, ldc, threads, Within64(a), Within64(b),
                               Within64(c)};
  LibraryChoices& choices = Choices();
  if (remember) {
    absl::MutexLock lock(&choices.mu);
    if (auto it = choices.openblas.find(problem); it != choices.openblas.end()) return it->second;
  }
  bool openblas = false;
  const std::string key = absl::StrCat("sgemm-library ", absl::StrJoin(problem, ","));
  // C's elements, from the first to the last one written.
  const int64_t c_span = (m - 1) * ldc + n;
  if (std::optional<std::string> known = tuning.Find(key)) {
    openblas = *known == "openblas";
  } else if (c_span <= kMaxScratchFloats && tuning.TakeBudget()) {
    // Both, three times each, alternating, into a copy of C at C's place within 64 bytes (the
    // caller's C keeps its values, which beta reads); OpenBLAS only when 10% faster.
    const auto start = std::chrono::steady_clock::now();
    std::vector<float> scratch(static_cast<size_t>(c_span) + 16);
    float* copy = scratch.data() + (((Within64(c) - Within64(scratch.data())) / 4 + 16) % 16);
    std::copy(c, c + c_span, copy);
    double dnnl_ms = std::numeric_limits<double>::infinity(), openblas_ms = dnnl_ms;
    bool ran = true;
    for (int round = 0; round < 3 && ran; ++round) {
      auto t = std::chrono::steady_clock::now();
      ran = DnnlSgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, copy, ldc, threads);
      dnnl_ms = std::min(dnnl_ms, MillisSince(t));
      t = std::chrono::steady_clock::now();
      OpenBlasSgemmOnTeam(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, copy, ldc, threads);
      openblas_ms = std::min(openblas_ms, MillisSince(t));
    }
    tuning.Spend(MillisSince(start));
    openblas = !ran || openblas_ms < 0.9 * dnnl_ms;
    tuning.Put(key, openblas ? "openblas" : "onednn",
               absl::StrFormat("oneDNN %.3f ms, OpenBLAS %.3f ms", dnnl_ms, openblas_ms));
  }
  if (!remember) return openblas;
  absl::MutexLock lock(&choices.mu);
  if (choices.openblas.size() >= 4096) choices.openblas.clear();  // Shapes that vary run after run.
  choices.openblas.emplace(problem, openblas);
  return openblas;
}

}  // namespace sluice
