// The finite-difference harness for gradient functions: each case is an ONNX model whose
// Gradient node differentiates sum(y) with respect to the inputs "a", "b"...; Check compares
// that with central differences of sum(y) from the same session, in double precision.
//
//   Check({"relu", {Node("Relu", {"a"}, "y")}, {{2, 3}}});
//   Check({"gather", {Node("Gather", {"a", "i"}, "y", {IntAttr("axis", 1)})}, {{2, 3}}, -2, 2,
//          {Int64Tensor("i", {2, 0, 2}, {3})}});
#ifndef SLUICE_FRONTEND_GRADIENTS_GRADIENT_CHECK_UTIL_H_
#define SLUICE_FRONTEND_GRADIENTS_GRADIENT_CHECK_UTIL_H_

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace sluice {
namespace gradient_check {

struct Case {
  std::string name;
  // Forward nodes over inputs "a", "b"... (and the initializers) producing "y".
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::vector<int64_t>> shapes;  // One per differentiated (double) input.
  double lo = -2, hi = 2;                    // Input range (Log and Sqrt need positives).
  std::vector<onnx::TensorProto> initializers;  // Constant inputs: axes, indices, conditions...
  int opset = 13;
  // Per-input ranges overriding lo/hi, in input order (shorter is fine).
  std::vector<std::pair<double, double>> ranges = {};
  double eps = 1e-6;         // Central-difference step.
  double abs_tolerance = 1e-6;  // Plus 1e-5 relative.
};

onnx::NodeProto Node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                     std::vector<onnx::AttributeProto> attrs = {});
inline onnx::NodeProto Node(const std::string& op, std::vector<std::string> in, const std::string& out,
                            std::vector<onnx::AttributeProto> attrs = {}) {
  return Node(op, std::move(in), std::vector<std::string>{out}, std::move(attrs));
}
// Gradient(xs, zs, y) of ai.onnx.preview.training, fed by the tensors it names.
onnx::NodeProto GradientOp(const std::vector<std::string>& xs, const std::vector<std::string>& zs,
                           const std::string& y, const std::vector<std::string>& outputs);

onnx::AttributeProto IntAttr(const std::string& name, int64_t v);
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto FloatAttr(const std::string& name, float v);
onnx::AttributeProto StringAttr(const std::string& name, const std::string& v);

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values,
                              const std::vector<int64_t>& dims);
onnx::TensorProto BoolTensor(const std::string& name, const std::vector<bool>& values,
                             const std::vector<int64_t>& dims);
onnx::TensorProto FloatTensor(const std::string& name, const std::vector<float>& values,
                              const std::vector<int64_t>& dims);

onnx::ModelProto Model(const Case& c);
// Imports, runs, and EXPECTs every element of every gradient against central differences.
void Check(const Case& c);

}  // namespace gradient_check
}  // namespace sluice

#endif  // SLUICE_FRONTEND_GRADIENTS_GRADIENT_CHECK_UTIL_H_
