// Builds an OpDef from TensorFlow-style spec strings.
//
//   OpDefBuilder("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("T: {float, double} = DT_FLOAT");
//
// Inputs and outputs: "name: float", "name: T" (a type attr), "name: N * T" (N an int attr),
// "name: Tlist" (a list(type) attr), "name: Ref(T)".
// Attrs: "name: string|int|float|bool|type|shape|tensor|func|list(...)", "{float, int32}"
// (a type from a set), "{'a', 'b'}" (a string from a set), "numbertype", "realnumbertype",
// optionally ">= MIN" for int and list attrs, optionally "= DEFAULT".
#ifndef SLUICE_OPS_OP_DEF_BUILDER_H_
#define SLUICE_OPS_OP_DEF_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/shape_inference.h"
#include "proto/op_def.pb.h"

namespace sluice {

struct OpRegistrationData {
  OpDef op_def;
  ShapeFn shape_fn;  // Never null after Finalize (defaults to shape_fn::Unknown).
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);

  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetIsAggregate();
  OpDefBuilder& SetAllowsUninitializedInput();
  OpDefBuilder& SetIsDistributedCommunication();
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  OpDefBuilder& Doc(std::string summary);

  const std::string& op_name() const { return op_def_.name(); }

  // Parses every spec string; all problems are reported together, each naming the op and the
  // spec that is wrong.
  absl::Status Finalize(OpRegistrationData* out) const;

 private:
  OpDef op_def_;
  std::vector<std::string> attrs_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  ShapeFn shape_fn_;
};

}  // namespace sluice

#endif  // SLUICE_OPS_OP_DEF_BUILDER_H_
