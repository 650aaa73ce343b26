// The global registry of op definitions. REGISTER_OP adds an op at start-up; specs are parsed
// on first use, and a bad spec makes that op's lookups fail with the parse error (a test
// finalizes every op so such a typo fails CI).
//
//   REGISTER_OP("Identity").Input("input: T").Output("output: T").Attr("T: type")
//       .SetShapeFn(shape_fn::Unchanged);
//
//   SL_ASSIGN_OR_RETURN(const OpRegistrationData* op, OpRegistry::Global()->LookUp("Identity"));
#ifndef SLUICE_OPS_OP_REGISTRY_H_
#define SLUICE_OPS_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/graph.h"
#include "ops/op_def_builder.h"
#include "proto/op_def.pb.h"

namespace sluice {

// Ops named as TensorFlow names them have TensorFlow's inputs, attrs and meaning. Ops whose
// meaning is ONNX's live under this prefix ("Onnx>Concat", "Onnx>Cast"), TensorFlow's own
// namespace syntax, so the two op sets cannot collide. An ONNX op whose TensorFlow namesake is
// the same op (Exp, Sigmoid, Relu, Add, ...) keeps the plain name.
inline constexpr absl::string_view kOnnxOpPrefix = "Onnx>";

class OpRegistry : public OpDefLookup {
 public:
  static OpRegistry* Global();

  void Register(const OpDefBuilder& builder);

  // NOT_FOUND naming the op for unknown ops; the spec's parse error for a broken one.
  absl::StatusOr<const OpRegistrationData*> LookUp(absl::string_view op) const;
  absl::StatusOr<const OpDef*> LookUpOpDef(absl::string_view op) const override;

  // Parses every pending registration; returns all spec errors together.
  absl::Status ProcessRegistrations() const;
  std::vector<std::string> ListOpNames() const;
  void Export(OpList* ops) const;

 private:
  void ProcessLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  mutable std::vector<OpDefBuilder> pending_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<std::string, std::unique_ptr<OpRegistrationData>> ops_
      ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<std::string, absl::Status> errors_ ABSL_GUARDED_BY(mu_);
};

namespace register_op {
// Receives the builder chain of REGISTER_OP at static-initialization time.
struct OpDefBuilderReceiver {
  OpDefBuilderReceiver(const OpDefBuilder& builder);  // NOLINT: implicit on purpose.
};
}  // namespace register_op

#define SL_REGISTER_OP_UNIQ_(ctr, name) \
  static ::sluice::register_op::OpDefBuilderReceiver sl_register_op_##ctr = ::sluice::OpDefBuilder(name)
#define SL_REGISTER_OP_(ctr, name) SL_REGISTER_OP_UNIQ_(ctr, name)
#define REGISTER_OP(name) SL_REGISTER_OP_(__COUNTER__, name)

}  // namespace sluice

#endif  // SLUICE_OPS_OP_REGISTRY_H_
