#include "kernels/cpu_isa.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"

namespace sluice {
namespace {

// The cap SLUICE_MAX_ISA names; the detected set when it is unset or names nothing.
CpuIsa ReadCap(CpuIsa detected) {
  const char* env = std::getenv("SLUICE_MAX_ISA");
  if (env == nullptr || *env == '\0') return detected;
  const std::string v = absl::AsciiStrToLower(env);
  if (v == "avx512" || v == "avx512f" || v == "avx512_core") return CpuIsa::kAvx512;
  if (v == "avx2") return CpuIsa::kAvx2;
  if (v == "baseline" || v == "sse2" || v == "sse41") return CpuIsa::kBaseline;
  std::fprintf(stderr, "sluice: SLUICE_MAX_ISA='%s' is not one of avx512, avx2, baseline; ignored\n", env);
  return detected;
}

CpuIsa Resolve() {
  const CpuIsa isa = std::min(DetectedCpuIsa(), ReadCap(DetectedCpuIsa()));
  // oneDNN reads its cap on first use; set it before then (a user's own setting wins).
  if (isa != DetectedCpuIsa() && std::getenv("ONEDNN_MAX_CPU_ISA") == nullptr) {
    setenv("ONEDNN_MAX_CPU_ISA", isa == CpuIsa::kAvx2 ? "AVX2" : "SSE41", 0);
  }
  return isa;
}

// Resolved while static objects are made, before any kernel (or oneDNN) runs.
const CpuIsa resolved_at_start = MaxCpuIsa();

}  // namespace

CpuIsa DetectedCpuIsa() {
  static const CpuIsa detected = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return CpuIsa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::kAvx2;
    return CpuIsa::kBaseline;
  }();
  return detected;
}

CpuIsa MaxCpuIsa() {
  static const CpuIsa isa = Resolve();
  (void)resolved_at_start;
  return isa;
}

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kBaseline:
      return "baseline";
  }
  return "baseline";
}

}  // namespace sluice
