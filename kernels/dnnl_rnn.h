// ONNX LSTM and GRU (float) through oneDNN's RNN primitives, which run a whole sequence: the
// input projections of all steps, the recurrent products on weights prepared once, and fused
// gate arithmetic. The weights (gates permuted to oneDNN's order) and biases are prepared once
// per weight buffer and kept; primitives are cached per shape. Safe to call from several
// threads.
//
// oneDNN's cells are ONNX's with the default activations (sigmoid, tanh, tanh), no clip, no
// input_forget, no peepholes and every sequence at full length; the caller checks those and
// takes its general path otherwise.
//
//   DnnlRnn rnn;   // one per kernel
//   SL_ASSIGN_OR_RETURN(bool done, rnn.Run(problem, x, w, r, b, h0, c0, threads, y, yh, yc));
//   if (!done) { /* the general path */ }
#ifndef SLUICE_KERNELS_DNNL_RNN_H_
#define SLUICE_KERNELS_DNNL_RNN_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace sluice {

enum class DnnlRnnCell {
  kLstm,    // ONNX gates i, o, f, c.
  kGru,     // linear_before_reset = 0; gates z, r, h.
  kLbrGru,  // linear_before_reset = 1.
};

struct DnnlRnnProblem {
  DnnlRnnCell cell = DnnlRnnCell::kLstm;
  int num_dirs = 1;      // 2: bidirectional.
  bool reverse = false;  // With num_dirs 1: direction "reverse".
  bool batch_major = false;  // ONNX layout 1: X [batch, seq, input], Y [batch, seq, dirs, H].
  int64_t seq_len = 0, batch = 0, input = 0, hidden = 0;
};

class DnnlRnn {
 public:
  DnnlRnn();
  ~DnnlRnn();
  // X, W [dirs, G*H, input], R [dirs, G*H, H] and B [dirs, 2*G*H] (may be null) as ONNX has
  // them, already checked against `p`; h0 and c0 (may be null) are [dirs, batch, H], or
  // [batch, dirs, H] when batch-major. Writes Y, Y_h and (LSTM, may be null) Y_c, allocated
  // with ONNX's shapes. False, with nothing written, when oneDNN does not take the problem.
  absl::StatusOr<bool> Run(const DnnlRnnProblem& p, const Tensor& x, const Tensor& w, const Tensor& r,
                           const Tensor* b, const Tensor* h0, const Tensor* c0, int threads, Tensor* y,
                           Tensor* yh, Tensor* yc) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_RNN_H_
