// Recurrent ops with ONNX semantics (versions 7 and 14; 14 added `layout`). Optional inputs are
// list(type) args holding zero or one tensor.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

#define SL_RNN_COMMON_ATTRS(OP)                                                         \
  .Attr(absl::StrCat("T: ", kIeeeFloatTypes))                                           \
      .Attr("Tb: list(type) >= 0")                                                      \
      .Attr("Tsl: list(type) >= 0")                                                     \
      .Attr("Th: list(type) >= 0")                                                      \
      .Attr("activation_alpha: list(float) = []")                                       \
      .Attr("activation_beta: list(float) = []")                                        \
      .Attr("activations: list(string) = []")                                           \
      .Attr("clip: float = 0.0")                                                        \
      .Attr("direction: {'forward', 'reverse', 'bidirectional'} = 'forward'")           \
      .Attr("hidden_size: int >= 1")                                                    \
      .Attr("layout: int = 0")

REGISTER_OP("Onnx>RNN")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Output("y: T")
    .Output("y_h: T")
    SL_RNN_COMMON_ATTRS(RNN);

REGISTER_OP("Onnx>GRU")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Output("y: T")
    .Output("y_h: T")
    SL_RNN_COMMON_ATTRS(GRU)
    .Attr("linear_before_reset: int = 0");

REGISTER_OP("Onnx>LSTM")
    .Input("x: T")
    .Input("w: T")
    .Input("r: T")
    .Input("b: Tb")
    .Input("sequence_lens: Tsl")
    .Input("initial_h: Th")
    .Input("initial_c: Tc")
    .Input("p: Tp")
    .Output("y: T")
    .Output("y_h: T")
    .Output("y_c: T")
    SL_RNN_COMMON_ATTRS(LSTM)
    .Attr("Tc: list(type) >= 0")
    .Attr("Tp: list(type) >= 0")
    .Attr("input_forget: int = 0");

#undef SL_RNN_COMMON_ATTRS

}  // namespace sluice
