#include "ops/op_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sluice {

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return registry;
}

void OpRegistry::Register(const OpDefBuilder& builder) {
  absl::MutexLock lock(&mu_);
  pending_.push_back(builder);
}

void OpRegistry::ProcessLocked() const {
  for (const OpDefBuilder& b : pending_) {
    auto data = std::make_unique<OpRegistrationData>();
    absl::Status s = b.Finalize(data.get());
    if (ops_.contains(b.op_name()) || errors_.contains(b.op_name())) {
      s = absl::AlreadyExistsError(absl::StrCat("op '", b.op_name(), "' is registered twice"));
    }
    if (s.ok()) {
      ops_[b.op_name()] = std::move(data);
    } else {
      errors_[b.op_name()] = s;
    }
  }
  pending_.clear();
}

absl::StatusOr<const OpRegistrationData*> OpRegistry::LookUp(absl::string_view op) const {
  absl::MutexLock lock(&mu_);
  if (!pending_.empty()) ProcessLocked();
  auto it = ops_.find(op);
  if (it != ops_.end()) return it->second.get();
  auto err = errors_.find(op);
  if (err != errors_.end()) return err->second;
  return absl::NotFoundError(absl::StrCat("Op type not registered '", op, "'"));
}

absl::StatusOr<const OpDef*> OpRegistry::LookUpOpDef(absl::string_view op) const {
  auto data = LookUp(op);
  if (!data.ok()) return data.status();
  return &(*data)->op_def;
}

absl::Status OpRegistry::ProcessRegistrations() const {
  absl::MutexLock lock(&mu_);
  ProcessLocked();
  if (errors_.empty()) return absl::OkStatus();
  std::vector<std::string> messages;
  for (const auto& [name, s] : errors_) messages.push_back(std::string(s.message()));
  std::sort(messages.begin(), messages.end());
  return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
}

std::vector<std::string> OpRegistry::ListOpNames() const {
  absl::MutexLock lock(&mu_);
  ProcessLocked();
  std::vector<std::string> names;
  for (const auto& [name, data] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void OpRegistry::Export(OpList* ops) const {
  for (const std::string& name : ListOpNames()) {
    *ops->add_op() = (*LookUp(name))->op_def;
  }
}

namespace register_op {
OpDefBuilderReceiver::OpDefBuilderReceiver(const OpDefBuilder& builder) {
  OpRegistry::Global()->Register(builder);
}
}  // namespace register_op

}  // namespace sluice
