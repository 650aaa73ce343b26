// The variables of one device: named tensors that outlive steps, so that a training step
// reads weights and assigns their new values where they live (ReadVariable and
// AssignVariable in ops/state_ops.cc).
//
//   VariableStore& vars = *device->variables();
//   vars.Assign("w", new_value);
//   SL_ASSIGN_OR_RETURN(Tensor w, vars.Read("w"));
//
// Thread-safe. A read shares the stored buffer; an assign replaces the stored tensor, and an
// update writes in place only into a buffer no one else holds (copy-on-write otherwise), so a
// tensor once read never changes.
#ifndef SLUICE_FRAMEWORK_VARIABLE_STORE_H_
#define SLUICE_FRAMEWORK_VARIABLE_STORE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/synchronization/mutex.h"
#include "framework/tensor.h"

namespace sluice {

class VariableStore {
 public:
  // `owner` names the device in errors.
  explicit VariableStore(std::string owner) : owner_(std::move(owner)) {}

  // FAILED_PRECONDITION when `name` was never assigned.
  absl::StatusOr<Tensor> Read(const std::string& name) const;
  // The first assign fixes the variable's dtype and shape; a later one with others is
  // INVALID_ARGUMENT, naming the variable, what it holds and what came.
  absl::Status Assign(const std::string& name, const Tensor& value);
  // A read-modify-write of the variables `names` (distinct, each with a value, else
  // INVALID_ARGUMENT or FAILED_PRECONDITION naming it), under the store's lock. `update` gets
  // each one's value (`in`) and where its new value goes (`out`, of the same dtype and shape):
  // the same buffer when the store held the only reference to it, so the update is in place
  // (element i of out may be written only after element i of in is read), else a fresh buffer
  // that becomes the value when `update` succeeds, so tensors read before keep the old value.
  // Numeric dtypes only. An update that fails may leave in-place values partly written.
  using UpdateFn = std::function<absl::Status(absl::Span<const Tensor> in, absl::Span<Tensor> out)>;
  absl::Status Update(absl::Span<const std::string> names, const UpdateFn& update);
  // Forgets `name`; NOT_FOUND if it has no value.
  absl::Status Erase(const std::string& name);
  // Names in sorted order.
  std::vector<std::string> Names() const;
  // Forgets every variable (a worker's CleanupAll).
  void Clear();

 private:
  const std::string owner_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Tensor> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_VARIABLE_STORE_H_
