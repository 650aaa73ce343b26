#include "kernels/fft.h"

#include <cmath>
#include <utility>

namespace sluice {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

void FftPlan::Radix2::Init(int64_t size, bool inverse) {
  n = size;
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  bit_reverse.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    bit_reverse[i] = r;
  }
  const double sign = inverse ? 1.0 : -1.0;
  twiddles.resize(n / 2);
  for (int64_t k = 0; k < n / 2; ++k) twiddles[k] = std::polar(1.0, sign * 2.0 * kPi * k / n);
}

void FftPlan::Radix2::Run(std::complex<double>* data) const {
  for (int64_t i = 0; i < n; ++i) {
    if (i < bit_reverse[i]) std::swap(data[i], data[bit_reverse[i]]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len / 2, step = n / len;
    for (int64_t start = 0; start < n; start += len) {
      for (int64_t j = 0; j < half; ++j) {
        const std::complex<double> t = twiddles[j * step] * data[start + j + half];
        data[start + j + half] = data[start + j] - t;
        data[start + j] += t;
      }
    }
  }
}

FftPlan::FftPlan(int64_t n, bool inverse) : n_(n) {
  if (n <= 1) return;
  if (IsPowerOfTwo(n)) {
    direct_.Init(n, inverse);
    return;
  }
  // X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j]) with c[j] = exp(-+pi i j^2 / n): a
  // convolution, done circularly over m >= 2n - 1 points.
  bluestein_ = true;
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  forward_.Init(m, false);
  backward_.Init(m, true);
  const double sign = inverse ? 1.0 : -1.0;
  chirp_.resize(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t jj = (j * j) % (2 * n);  // exp is 2n-periodic in j^2; keeps the angle small.
    chirp_[j] = std::polar(1.0, sign * kPi * static_cast<double>(jj) / n);
  }
  kernel_fft_.assign(m, {0.0, 0.0});
  kernel_fft_[0] = std::conj(chirp_[0]);
  for (int64_t j = 1; j < n; ++j) kernel_fft_[j] = kernel_fft_[m - j] = std::conj(chirp_[j]);
  forward_.Run(kernel_fft_.data());
}

void FftPlan::Run(std::complex<double>* data, std::vector<std::complex<double>>* scratch) const {
  if (n_ <= 1) return;
  if (!bluestein_) {
    direct_.Run(data);
    return;
  }
  const int64_t m = forward_.n;
  scratch->assign(m, {0.0, 0.0});
  std::complex<double>* s = scratch->data();
  for (int64_t j = 0; j < n_; ++j) s[j] = data[j] * chirp_[j];
  forward_.Run(s);
  for (int64_t j = 0; j < m; ++j) s[j] *= kernel_fft_[j];
  backward_.Run(s);
  const double scale = 1.0 / static_cast<double>(m);
  for (int64_t k = 0; k < n_; ++k) data[k] = s[k] * scale * chirp_[k];
}

}  // namespace sluice
