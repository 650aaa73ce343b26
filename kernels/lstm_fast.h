// ONNX LSTM (float) in Sluice's own kernel: the input projections of every step as one GEMM, then
// per step the recurrent product h_{t-1} R^T with R packed once into column slivers (AVX2 or
// AVX-512 register tiles, picked by MaxCpuIsa()) and the cell's gate arithmetic fused behind it
// while the step's values are still in L1. With several threads, each owns a contiguous range of
// hidden units (all four gates of each, so its cell updates need nobody else's) and the team
// meets once per step at a spin barrier: oneDNN's RNN parallelizes each step's GEMM and its
// elementwise part separately, and on two threads it scaled 1.36x where this does ~1.9x.
//
// Takes the cells oneDNN's primitive takes too: default activations, no clip, no input_forget,
// no peepholes, every sequence at full length; the caller checks those. Safe to call from
// several threads at once; the packed weights are kept per weight buffer (as DnnlRnn does).
//
//   FastLstm lstm;   // one per kernel
//   SL_ASSIGN_OR_RETURN(bool done, lstm.Run(problem, x, w, r, b, h0, c0, threads, y, yh, yc));
#ifndef SLUICE_KERNELS_LSTM_FAST_H_
#define SLUICE_KERNELS_LSTM_FAST_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "kernels/dnnl_rnn.h"

namespace sluice {

// Which LSTM implementation runs the common cell: SLUICE_LSTM=dnnl forces oneDNN's primitive,
// SLUICE_LSTM=sluice this kernel; unset, this kernel where the CPU has AVX2 (read once).
bool UseFastLstm();

class FastLstm {
 public:
  FastLstm();
  ~FastLstm();
  // The problem as oneDNN's (its cell must be kLstm); X, W [dirs, 4H, input], R [dirs, 4H, H] and B [dirs, 8H] (may be null) as ONNX has them,
  // already checked against `p`; h0 and c0 (may be null) are [dirs, batch, H], or
  // [batch, dirs, H] when batch-major. Writes Y, Y_h and Y_c (may be null), allocated with
  // ONNX's shapes. False, with nothing written, when the CPU has no AVX2, a size is empty or the
  // cell is not LSTM.
  absl::StatusOr<bool> Run(const DnnlRnnProblem& p, const Tensor& x, const Tensor& w, const Tensor& r,
                           const Tensor* b, const Tensor* h0, const Tensor* c0, int threads, Tensor* y, Tensor* yh,
                           Tensor* yc) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_LSTM_FAST_H_
