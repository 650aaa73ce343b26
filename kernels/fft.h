// Complex FFT of any length in double precision: iterative radix-2 for powers of two,
// Bluestein's chirp-z convolution (through a power-of-two FFT) for other lengths.
//
//   FftPlan plan(n, /*inverse=*/false);       // Once per length.
//   std::vector<std::complex<double>> scratch;
//   plan.Run(data, &scratch);                  // In place; thread-safe with own scratch.
#ifndef SLUICE_KERNELS_FFT_H_
#define SLUICE_KERNELS_FFT_H_

#include <complex>
#include <cstdint>
#include <vector>

namespace sluice {

class FftPlan {
 public:
  // X[k] = sum_j x[j] exp(-+2 pi i j k / n), the sign + when `inverse`; no 1/n scaling.
  FftPlan(int64_t n, bool inverse);

  int64_t size() const { return n_; }
  // Transforms data[0, n) in place; `scratch` is working memory owned by the caller.
  void Run(std::complex<double>* data, std::vector<std::complex<double>>* scratch) const;

 private:
  struct Radix2 {
    int64_t n = 0;
    std::vector<int64_t> bit_reverse;
    std::vector<std::complex<double>> twiddles;  // exp(-+2 pi i k / n), k < n / 2.
    void Init(int64_t size, bool inverse);
    void Run(std::complex<double>* data) const;
  };

  int64_t n_;
  bool bluestein_ = false;
  Radix2 direct_;                   // Length n (powers of two).
  Radix2 forward_, backward_;       // Length m >= 2n - 1 (Bluestein).
  std::vector<std::complex<double>> chirp_;       // exp(-+pi i j^2 / n), j < n.
  std::vector<std::complex<double>> kernel_fft_;  // FFT of the conjugate chirp, length m.
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_FFT_H_
