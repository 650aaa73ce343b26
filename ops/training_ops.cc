// Optimizers of ONNX's ai.onnx.preview.training domain. Each takes the learning rate R, the
// update count T, then groups of n tensors (X..., G..., and the optimizer's state...), and
// returns the new X... followed by the new state.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

#define SL_OPTIMIZER_OP(NAME)                  \
  REGISTER_OP(NAME)                            \
      .Input("r: T1")                          \
      .Input("t: T2")                          \
      .Input("inputs: N * T3")                 \
      .Output("outputs: M * T3")               \
      .Attr("T1: {float, double}")             \
      .Attr("T2: {int64}")                     \
      .Attr("T3: {float, double}")             \
      .Attr("N: int >= 0")                     \
      .Attr("M: int >= 0")                     \
      .Attr("norm_coefficient: float = 0.0")

// X_new = X - r * G' / (sqrt(H_new) + epsilon), H_new = H + G'^2, G' = G + norm * X,
// r = R / (1 + T * decay_factor).
SL_OPTIMIZER_OP("Onnx>Adagrad").Attr("decay_factor: float = 0.0").Attr("epsilon: float = 1e-6");
// V_new = alpha * V + beta' * G' (beta' = 1 at T = 0); X_new = X - R * V_new (standard) or
// X - R * (G' + alpha * V_new) (nesterov).
SL_OPTIMIZER_OP("Onnx>Momentum")
    .Attr("alpha: float")
    .Attr("beta: float")
    .Attr("mode: {'standard', 'nesterov'}");
// V_new = alpha V + (1 - alpha) G'; H_new = beta H + (1 - beta) G'^2; R' = R sqrt(1 - beta^T) /
// (1 - alpha^T) for T > 0; X_new = (1 - norm_post) (X - R' V_new / (sqrt(H_new) + epsilon)).
SL_OPTIMIZER_OP("Onnx>Adam")
    .Attr("alpha: float = 0.9")
    .Attr("beta: float = 0.999")
    .Attr("epsilon: float = 1e-6")
    .Attr("norm_coefficient_post: float = 0.0");

#undef SL_OPTIMIZER_OP

// The same updates of variables in place (the optimizer's inplace_variable_updates pass makes
// them of an optimizer node whose X... and state inputs are ReadVariables and whose outputs are
// each assigned back to the variable read): takes R, T and G..., reads and writes the
// variables `shared_names` (X..., then the state in input order) through VariableStore::Update.
#define SL_OPTIMIZER_VARIABLES_OP(NAME)        \
  REGISTER_OP(NAME)                            \
      .Input("r: T1")                          \
      .Input("t: T2")                          \
      .Input("grads: N * T3")                  \
      .Attr("T1: {float, double}")             \
      .Attr("T2: {int64}")                     \
      .Attr("T3: {float, double}")             \
      .Attr("N: int >= 1")                     \
      .Attr("shared_names: list(string)")      \
      .Attr("norm_coefficient: float = 0.0")   \
      .SetIsStateful()                         \
      .SetShapeFn(shape_fn::NoOutputs)

SL_OPTIMIZER_VARIABLES_OP("ApplyOnnxAdagrad").Attr("decay_factor: float = 0.0").Attr("epsilon: float = 1e-6");
SL_OPTIMIZER_VARIABLES_OP("ApplyOnnxMomentum")
    .Attr("alpha: float")
    .Attr("beta: float")
    .Attr("mode: {'standard', 'nesterov'}");
SL_OPTIMIZER_VARIABLES_OP("ApplyOnnxAdam")
    .Attr("alpha: float = 0.9")
    .Attr("beta: float = 0.999")
    .Attr("epsilon: float = 1e-6")
    .Attr("norm_coefficient_post: float = 0.0");

#undef SL_OPTIMIZER_VARIABLES_OP

}  // namespace sluice
