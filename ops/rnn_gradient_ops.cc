// The backward ops of RNN, GRU and LSTM (frontend/gradients/rnn_gradients.cc emits them). Each
// takes the forward node's inputs (optional ones as list args, as the forward op has them),
// then the gradients reaching its outputs, and the forward op's attrs under the same names;
// the default activations only, without clip.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

#define SL_RNN_GRAD_COMMON_ATTRS                                              \
  .Attr("T: {float, double}")                                                 \
      .Attr("Tb: list(type) >= 0")                                            \
      .Attr("Tsl: list(type) >= 0")                                           \
      .Attr("Th: list(type) >= 0")                                            \
      .Attr("direction: {'forward', 'reverse', 'bidirectional'} = 'forward'") \
      .Attr("hidden_size: int >= 1")                                          \
      .Attr("layout: int = 0")

REGISTER_OP("Onnx>RNNGrad")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Input("dy: T")
    .Input("dy_h: T")
    .Output("dx: T")
    .Output("dw: T")
    .Output("dr: T")
    .Output("db: T")
    .Output("d_initial_h: T")
    SL_RNN_GRAD_COMMON_ATTRS
    .Doc("The gradients of RNN's inputs (tanh cell) given those of Y and Y_h: the forward pass "
         "recomputed, then backpropagation through time. db and d_initial_h are computed whether "
         "or not B and initial_h were given.");

REGISTER_OP("Onnx>GRUGrad")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Input("dy: T")
    .Input("dy_h: T")
    .Output("dx: T")
    .Output("dw: T")
    .Output("dr: T")
    .Output("db: T")
    .Output("d_initial_h: T")
    SL_RNN_GRAD_COMMON_ATTRS
    .Attr("linear_before_reset: int = 0")
    .Doc("The gradients of GRU's inputs given those of Y and Y_h, as RNNGrad's.");

REGISTER_OP("Onnx>LSTMGrad")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Input("initial_c: Tc")
    .Input("p: Tp")
    .Input("dy: T")
    .Input("dy_h: T")
    .Input("dy_c: T")
    .Output("dx: T")
    .Output("dw: T")
    .Output("dr: T")
    .Output("db: T")
    .Output("d_initial_h: T")
    .Output("d_initial_c: T")
    .Output("dp: T")
    SL_RNN_GRAD_COMMON_ATTRS
    .Attr("Tc: list(type) >= 0")
    .Attr("Tp: list(type) >= 0")
    .Attr("input_forget: int = 0")
    .Doc("The gradients of LSTM's inputs given those of Y, Y_h and Y_c, as RNNGrad's; dp "
         "([dirs, 3 hidden]) for the peepholes, zeros without them.");

#undef SL_RNN_GRAD_COMMON_ATTRS

}  // namespace sluice
