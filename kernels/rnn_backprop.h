// Backpropagation through time for ONNX's RNN, GRU and LSTM, in float and double: the forward
// pass recomputed with every step's gates kept (the forward kernels, rnn_ops.cc, keep
// nothing), then the gradients of every input from those reaching Y, Y_h and Y_c. Every
// direction, both layouts, sequence_lens, linear_before_reset, LSTM peepholes and
// input_forget; the default activations only (sigmoid for the gates, tanh otherwise), no clip.
//
//   RnnSpec spec{RnnCell::kLstm, /*num_dirs=*/1, /*reverse_only=*/false, /*layout=*/0, hidden};
//   RnnInputs in{&x, &w, &r, b, seq, h0, c0, p};  // Absent optional inputs: nullptr.
//   std::vector<int64_t> lens;
//   SL_ASSIGN_OR_RETURN(RnnDims dims, CheckRnnInputs(spec, in, &lens));
//   SL_RETURN_IF_ERROR(RnnBackward<float>(spec, in, dims, lens, dy, dy_h, dy_c, grads, threads));
#ifndef SLUICE_KERNELS_RNN_BACKPROP_H_
#define SLUICE_KERNELS_RNN_BACKPROP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace sluice {

enum class RnnCell { kRnn, kGru, kLstm };

// The attributes that shape the computation.
struct RnnSpec {
  RnnCell cell = RnnCell::kLstm;
  int num_dirs = 1;           // 2: bidirectional.
  bool reverse_only = false;  // direction "reverse".
  int64_t layout = 0;         // 1: X, Y and the states batch-major.
  int64_t hidden = 0;
  bool linear_before_reset = false;  // GRU.
  bool input_forget = false;         // LSTM: f = 1 - i.
};

// A node's inputs, not owned; absent optional inputs are null.
struct RnnInputs {
  const Tensor* x = nullptr;
  const Tensor* w = nullptr;
  const Tensor* r = nullptr;
  const Tensor* b = nullptr;
  const Tensor* seq = nullptr;
  const Tensor* h0 = nullptr;
  const Tensor* c0 = nullptr;  // LSTM only.
  const Tensor* p = nullptr;   // LSTM only.
};

struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0;
  int64_t gates = 1;  // 1, 3 or 4 for RNN, GRU, LSTM.
};

// Checks the inputs' shapes and every size the passes allocate (INVALID_ARGUMENT naming the
// input, RESOURCE_EXHAUSTED on a size no machine holds) and reads sequence_lens into *lens
// (the sequence length for every batch entry when absent).
absl::StatusOr<RnnDims> CheckRnnInputs(const RnnSpec& spec, const RnnInputs& in, std::vector<int64_t>* lens);

// Y: [seq, dirs, batch, H], or [batch, seq, dirs, H] in layout 1; the states (Y_h, Y_c, the
// initial ones): [dirs, batch, H], or [batch, dirs, H].
TensorShape RnnYShape(const RnnSpec& spec, const RnnDims& dims);
TensorShape RnnStateShape(const RnnSpec& spec, const RnnDims& dims);

// The forward op's outputs, allocated by the caller with the shapes above; yc only for LSTM.
struct RnnOutputs {
  Tensor* y = nullptr;
  Tensor* yh = nullptr;
  Tensor* yc = nullptr;
};

// The gradients, allocated by the caller: dx, dw, dr shaped as X, W, R; db [dirs, 2 G H]; dh0
// (and for LSTM dc0) shaped as the states; for LSTM dp [dirs, 3 H]. Each is written whether
// or not the node has that input.
struct RnnGrads {
  Tensor* dx = nullptr;
  Tensor* dw = nullptr;
  Tensor* dr = nullptr;
  Tensor* db = nullptr;
  Tensor* dh0 = nullptr;
  Tensor* dc0 = nullptr;
  Tensor* dp = nullptr;
};

// The forward pass itself (the same recurrence the backward pass recomputes). T: float, double.
template <typename T>
void RnnForward(const RnnSpec& spec, const RnnInputs& in, const RnnDims& dims, const std::vector<int64_t>& lens,
                const RnnOutputs& out, int threads);

// The gradients of sum(Y dy + Y_h dy_h + Y_c dy_c); dy shaped as Y, dy_h and dy_c as the
// states (dy_c: LSTM only). T: float, double.
template <typename T>
void RnnBackward(const RnnSpec& spec, const RnnInputs& in, const RnnDims& dims, const std::vector<int64_t>& lens,
                 const Tensor& dy, const Tensor& dyh, const Tensor* dyc, const RnnGrads& grads, int threads);

}  // namespace sluice

#endif  // SLUICE_KERNELS_RNN_BACKPROP_H_
