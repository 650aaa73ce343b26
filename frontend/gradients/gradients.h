// Symbolic differentiation of Sluice graphs (TensorFlow's approach): a registry of gradient
// functions, one per differentiable op, each emitting the backward nodes of one forward node,
// and SymbolicGradients, which walks the forward graph from y back to xs. The ONNX Gradient
// operator is expanded with it at import.
//
//   // dy/dx for x in xs, y seeded with ones; nodes are added through `builder`.
//   SL_ASSIGN_OR_RETURN(std::vector<std::string> dxs,
//                       SymbolicGradients(&builder, forward_graph_def, y, xs, zs, substitutions));
//
//   absl::Status MulGrad(GradientContext* g, const GradientNode& n, ...);
//   REGISTER_GRADIENT("Mul", MulGrad);
#ifndef SLUICE_FRONTEND_GRADIENTS_GRADIENTS_H_
#define SLUICE_FRONTEND_GRADIENTS_GRADIENTS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "framework/node_attr.h"
#include "proto/graph.pb.h"

namespace sluice {

// Where backward nodes go: adds a node (inputs grouped per OpDef arg, type attrs inferred) and
// returns its output tensors; knows each tensor's dtype.
class GradientBuilder {
 public:
  virtual ~GradientBuilder() = default;
  virtual absl::StatusOr<std::vector<std::string>> Add(absl::string_view op,
                                                       std::vector<std::vector<std::string>> args,
                                                       AttrMap attrs = {}) = 0;
  virtual DataType Dtype(const std::string& tensor) const = 0;

  // Conveniences over Add.
  absl::StatusOr<std::string> Unary(absl::string_view op, const std::string& x, AttrMap attrs = {});
  absl::StatusOr<std::string> Binary(absl::string_view op, const std::string& a, const std::string& b,
                                     AttrMap attrs = {});
  // `t` summed down to the shape of `like` (undoing numpy broadcasting).
  absl::StatusOr<std::string> SumLike(const std::string& t, const std::string& like);
  // A tensor of `like`'s shape and dtype filled with `value`.
  absl::StatusOr<std::string> Fill(const std::string& like, double value);
};

// One forward node as gradient functions see it.
struct GradientNode {
  const NodeDef* def;
  std::vector<std::string> inputs;   // Data inputs, as tensors ("node:k").
  std::vector<std::string> outputs;  // Output tensors.
};

// Sets (*dxs)[i] to the gradient for data input i, or leaves it empty when there is none (or
// the input is not differentiable). dys[k] is the gradient reaching output k (empty: none).
using GradientFn = absl::Status (*)(GradientBuilder* b, const GradientNode& node,
                                    const std::vector<std::string>& dys, std::vector<std::string>* dxs);

class GradientRegistry {
 public:
  static GradientRegistry* Global();
  void Register(const std::string& op, GradientFn fn) { fns_[op] = fn; }
  GradientFn Find(absl::string_view op) const;
  std::vector<std::string> Ops() const;

 private:
  absl::flat_hash_map<std::string, GradientFn> fns_;
};

namespace gradient_registration {
struct Registrar {
  Registrar(const char* op, GradientFn fn) { GradientRegistry::Global()->Register(op, fn); }
};
}  // namespace gradient_registration

#define SL_GRADIENT_UNIQ_(ctr, op, fn) \
  static ::sluice::gradient_registration::Registrar sl_gradient_##ctr(op, fn)
#define SL_GRADIENT_(ctr, op, fn) SL_GRADIENT_UNIQ_(ctr, op, fn)
#define REGISTER_GRADIENT(op, fn) SL_GRADIENT_(__COUNTER__, op, fn)

// The gradients of the sum of `y` with respect to each of `xs`, through the nodes of `graph`
// between xs/zs and y (zs are differentiated through but get no result). `substitutions` maps
// forward tensors (xs and zs) to the values the backward pass should use instead: the forward
// nodes between them and y are recomputed from those values. An op without a gradient is an
// error naming the op and the path from y to it. When y does not depend on an x, its
// gradient is zeros shaped like x.
absl::StatusOr<std::vector<std::string>> SymbolicGradients(
    GradientBuilder* builder, const GraphDef& graph, const std::string& y,
    const std::vector<std::string>& xs, const std::vector<std::string>& zs,
    const absl::flat_hash_map<std::string, std::string>& substitutions);

// The same for several ys: the gradients of sum_i sum(ys[i] * seeds[i]), that is, each y's
// backward pass seeded with seeds[i] (a tensor shaped like ys[i]; ones when `seeds` is empty
// or seeds[i] is ""), summed. TensorFlow's TF_AddGradients.
absl::StatusOr<std::vector<std::string>> SymbolicGradients(
    GradientBuilder* builder, const GraphDef& graph, const std::vector<std::string>& ys,
    const std::vector<std::string>& seeds, const std::vector<std::string>& xs,
    const std::vector<std::string>& zs,
    const absl::flat_hash_map<std::string, std::string>& substitutions);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_GRADIENTS_GRADIENTS_H_
