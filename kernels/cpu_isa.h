// The instruction sets Sluice's own vector kernels are written for, and the widest one this
// process uses: the CPU's, capped by SLUICE_MAX_ISA.
//
//   switch (MaxCpuIsa()) { case CpuIsa::kAvx512: ...; case CpuIsa::kAvx2: ...; default: ... }
//
// SLUICE_MAX_ISA=avx2 (or avx512, baseline) caps the choice, so the AVX2 paths run and are
// tested on an AVX-512 machine and a benchmark can compare both on one machine. The cap also
// applies to oneDNN (ONEDNN_MAX_CPU_ISA, set for it unless the environment already sets it):
// its JIT kernels then use the same instruction sets as Sluice's. OpenBLAS picks its kernels
// when it loads, before any of this runs; OPENBLAS_CORETYPE=Haswell caps it.
#ifndef SLUICE_KERNELS_CPU_ISA_H_
#define SLUICE_KERNELS_CPU_ISA_H_

namespace sluice {

enum class CpuIsa {
  kBaseline = 0,  // x86-64's SSE2: what the compiler emits without target attributes.
  kAvx2 = 1,      // AVX2 with FMA (Haswell, Zen).
  kAvx512 = 2,    // AVX-512F (Skylake-X and later, Zen 4).
};

// The widest instruction set the CPU has, capped by SLUICE_MAX_ISA (read once). A value that
// names none ("avx512", "avx2", "baseline") is reported on stderr once and ignored.
CpuIsa MaxCpuIsa();

// What the CPU has, whatever the cap.
CpuIsa DetectedCpuIsa();

// "avx512", "avx2" or "baseline".
const char* CpuIsaName(CpuIsa isa);

}  // namespace sluice

#endif  // SLUICE_KERNELS_CPU_ISA_H_
