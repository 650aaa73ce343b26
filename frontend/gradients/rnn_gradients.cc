// Gradient functions of RNN, GRU and LSTM, through RNNGrad, GRUGrad and LSTMGrad
// (ops/rnn_gradient_ops.cc), which recompute the forward pass and backpropagate through time.
// The default activations only, without clip; an output no gradient reached contributes zeros.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::CopyAttrs;
using gradient_util::ListSize;
using gradient_util::NodeAttr;

// Refuses what the backward ops do not differentiate, naming the node and the attribute.
absl::Status CheckDifferentiable(const GradientNode& n, const std::string& cell,
                                 const std::vector<std::string>& defaults) {
  SL_ASSIGN_OR_RETURN(std::vector<std::string> activations,
                      NodeAttr<std::vector<std::string>>(n, "activations", {}));
  for (size_t i = 0; i < activations.size(); ++i) {
    if (absl::AsciiStrToLower(activations[i]) != defaults[i % defaults.size()]) {
      return absl::UnimplementedError(absl::StrCat(
          "no gradient for ", cell, " node '", n.def->name(), "' with attribute 'activations' [",
          absl::StrJoin(activations, ", "), "]: only the default ones (", absl::StrJoin(defaults, ", "),
          ") are differentiated"));
    }
  }
  SL_ASSIGN_OR_RETURN(float clip, NodeAttr<float>(n, "clip", 0.0f));
  if (clip > 0) {
    return absl::UnimplementedError(
        absl::StrCat("no gradient for ", cell, " node '", n.def->name(), "' with attribute 'clip' (", clip, ")"));
  }
  return absl::OkStatus();
}

// Inputs X, W, R, then those of B, sequence_lens, initial_h (and for LSTM initial_c and P)
// present; outputs Y, Y_h (and Y_c).
absl::Status RecurrentGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs, const std::string& cell,
                           const std::vector<std::string>& defaults) {
  SL_RETURN_IF_ERROR(CheckDifferentiable(n, cell, defaults));
  const bool lstm = cell == "LSTM";
  std::vector<std::vector<std::string>> args = {{n.inputs[0]}, {n.inputs[1]}, {n.inputs[2]}};
  size_t next = 3;
  // Where each optional input's gradient goes (-1: none), in the backward op's output order.
  int b_at = -1, h0_at = -1, c0_at = -1, p_at = -1;
  std::vector<const char*> optional = {"Tb", "Tsl", "Th"};
  if (lstm) {
    optional.push_back("Tc");
    optional.push_back("Tp");
  }
  for (const char* list : optional) {
    std::vector<std::string> group;
    if (ListSize(n, list) > 0) {
      const int at = static_cast<int>(next);
      if (std::string(list) == "Tb") b_at = at;
      if (std::string(list) == "Th") h0_at = at;
      if (std::string(list) == "Tc") c0_at = at;
      if (std::string(list) == "Tp") p_at = at;
      group.push_back(n.inputs[next++]);
    }
    args.push_back(group);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (!dys[k].empty()) {
      args.push_back({dys[k]});
    } else {
      SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(n.outputs[k], 0.0));
      args.push_back({zeros});
    }
  }
  SL_ASSIGN_OR_RETURN(auto g, b->Add(absl::StrCat("Onnx>", cell, "Grad"), std::move(args),
                                     CopyAttrs(n, {"direction", "hidden_size", "layout", "linear_before_reset",
                                                   "input_forget"})));
  (*dxs)[0] = g[0];
  (*dxs)[1] = g[1];
  (*dxs)[2] = g[2];
  if (b_at >= 0) (*dxs)[b_at] = g[3];
  if (h0_at >= 0) (*dxs)[h0_at] = g[4];
  if (c0_at >= 0) (*dxs)[c0_at] = g[5];
  if (p_at >= 0) (*dxs)[p_at] = g[6];
  return absl::OkStatus();
}

absl::Status RnnGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return RecurrentGrad(b, n, dys, dxs, "RNN", {"tanh"});
}

absl::Status GruGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return RecurrentGrad(b, n, dys, dxs, "GRU", {"sigmoid", "tanh"});
}

absl::Status LstmGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return RecurrentGrad(b, n, dys, dxs, "LSTM", {"sigmoid", "tanh", "tanh"});
}

REGISTER_GRADIENT("Onnx>RNN", RnnGrad);
REGISTER_GRADIENT("Onnx>GRU", GruGrad);
REGISTER_GRADIENT("Onnx>LSTM", LstmGrad);

}  // namespace
}  // namespace sluice
