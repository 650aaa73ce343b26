// Shape functions: given a node's attrs and the (partial) shapes of its inputs, compute the
// shapes of its outputs. Registered with an op through REGISTER_OP(...).SetShapeFn(fn).
//
//   REGISTER_OP("Relu").Input("x: T").Output("y: T").Attr("T: {float, double}")
//       .SetShapeFn(shape_fn::Unchanged);
#ifndef SLUICE_OPS_SHAPE_INFERENCE_H_
#define SLUICE_OPS_SHAPE_INFERENCE_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "framework/node_attr.h"
#include "framework/tensor.h"
#include "framework/tensor_shape.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {

class InferenceContext {
 public:
  // `input_tensors[i]` is the value of input i when it is a known constant, else null.
  InferenceContext(const NodeDef& node, const OpDef& op_def, std::vector<PartialShape> input_shapes,
                   std::vector<const Tensor*> input_tensors, int num_outputs);

  const NodeDef& node() const { return node_; }
  AttrSlice attrs() const { return AttrSlice(node_); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const PartialShape& input(int i) const { return inputs_[i]; }
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, PartialShape shape) { outputs_[i] = std::move(shape); }
  const PartialShape& output(int i) const { return outputs_[i]; }
  const std::vector<PartialShape>& outputs() const { return outputs_; }

  // An INVALID_ARGUMENT error that names the node.
  absl::Status Error(absl::string_view message) const;

 private:
  const NodeDef& node_;
  std::vector<PartialShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<PartialShape> outputs_;
};

using ShapeFn = std::function<absl::Status(InferenceContext*)>;

// numpy broadcasting of two partial shapes; an error when known dims disagree.
absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b);

namespace shape_fn {
// Every output unknown (the default for ops without a shape function).
absl::Status Unknown(InferenceContext* c);
// Output 0 has input 0's shape.
absl::Status Unchanged(InferenceContext* c);
// Output 0 is the numpy broadcast of inputs 0 and 1.
absl::Status BroadcastBinary(InferenceContext* c);
// Output 0 is the numpy broadcast of every input, folded from the left (AddN, Max, Where...).
absl::Status BroadcastAll(InferenceContext* c);
// No outputs to shape.
absl::Status NoOutputs(InferenceContext* c);
// Output 0 has the shape in the node's "shape" attr (Placeholder, ReadVariable).
absl::Status FromShapeAttr(InferenceContext* c);
}  // namespace shape_fn

}  // namespace sluice

#endif  // SLUICE_OPS_SHAPE_INFERENCE_H_
