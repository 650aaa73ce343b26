// TensorFlow's functional control flow and calls, with TensorFlow's names, inputs and attrs:
// If and While (and their Stateless forms), PartitionedCall and StatefulPartitionedCall. Their
// bodies are functions of the graph's library named by func attrs; the kernels are in
// kernels/control_flow_kernels.cc with ONNX's If, Loop and Scan.
#include "absl/strings/str_cat.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// The outputs' shapes from the `output_shapes` attr when it is given (one per output),
// unknown otherwise: a body may change its values' shapes.
absl::Status OutputShapesAttr(InferenceContext* c) {
  std::vector<PartialShape> shapes;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(c->attrs(), "output_shapes", std::vector<PartialShape>(),
                                   &shapes));
  if (shapes.empty()) return shape_fn::Unknown(c);
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return c->Error(absl::StrCat("output_shapes has ", shapes.size(), " shapes for ",
                                 c->num_outputs(), " outputs"));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return absl::OkStatus();
}

}  // namespace

#define SL_REGISTER_TF_IF(name, ...)                                                   \
  REGISTER_OP(name)                                                                    \
      .Input("cond: Tcond")                                                            \
      .Input("input: Tin")                                                             \
      .Output("output: Tout")                                                          \
      .Attr("Tcond: type")                                                             \
      .Attr("Tin: list(type) >= 0")                                                    \
      .Attr("Tout: list(type) >= 0")                                                   \
      .Attr("then_branch: func")                                                       \
      .Attr("else_branch: func")                                                       \
      .Attr("output_shapes: list(shape) = []") __VA_ARGS__                             \
      .SetShapeFn(OutputShapesAttr)                                                    \
      .Doc("then_branch(input...) when cond is true (a scalar, or one element that is " \
           "nonzero or a non-empty string), else else_branch(input...).")

SL_REGISTER_TF_IF("If", .SetIsStateful());
SL_REGISTER_TF_IF("StatelessIf");

#define SL_REGISTER_TF_WHILE(name, ...)                                              \
  REGISTER_OP(name)                                                                  \
      .Input("input: T")                                                             \
      .Output("output: T")                                                           \
      .Attr("T: list(type) >= 0")                                                    \
      .Attr("cond: func")                                                            \
      .Attr("body: func")                                                            \
      .Attr("output_shapes: list(shape) = []")                                       \
      .Attr("parallel_iterations: int = 10") __VA_ARGS__                             \
      .SetShapeFn(OutputShapesAttr)                                                  \
      .Doc("While cond(values...) is true, values = body(values...); outputs the last " \
           "values. Iterations run one after another.")

SL_REGISTER_TF_WHILE("While", .SetIsStateful());
SL_REGISTER_TF_WHILE("StatelessWhile");

#define SL_REGISTER_TF_CALL(name, ...)                \
  REGISTER_OP(name)                                   \
      .Input("args: Tin")                             \
      .Output("output: Tout")                         \
      .Attr("Tin: list(type) >= 0")                   \
      .Attr("Tout: list(type) >= 0")                  \
      .Attr("f: func")                                \
      .Attr("config: string = ''")                    \
      .Attr("config_proto: string = ''")              \
      .Attr("executor_type: string = ''") __VA_ARGS__ \
      .Doc("f(args...). config, config_proto and executor_type are accepted and ignored.")

SL_REGISTER_TF_CALL("PartitionedCall");
SL_REGISTER_TF_CALL("StatefulPartitionedCall", .SetIsStateful());

}  // namespace sluice
