#include "framework/variable_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice {

absl::StatusOr<Tensor> VariableStore::Read(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "variable '", name, "' on ", owner_, " is read before any value was assigned to it"));
  }
  return it->second;
}

absl::Status VariableStore::Assign(const std::string& name, const Tensor& value) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = values_.try_emplace(name, value);
  if (inserted) return absl::OkStatus();
  if (it->second.dtype() != value.dtype() || it->second.shape() != value.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variable '", name, "' on ", owner_, " holds ", DataTypeString(it->second.dtype()), " ",
        it->second.shape().DebugString(), "; cannot assign ", DataTypeString(value.dtype()), " ",
        value.shape().DebugString()));
  }
  it->second = value;
  return absl::OkStatus();
}

absl::Status VariableStore::Erase(const std::string& name) {
  Tensor gone;  // Freed after the lock is released.
  absl::MutexLock lock(&mu_);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::NotFoundError(absl::StrCat("variable '", name, "' on ", owner_, " does not exist"));
  }
  gone = std::move(it->second);
  values_.erase(it);
  return absl::OkStatus();
}

std::vector<std::string> VariableStore::Names() const {
  std::vector<std::string> names;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, value] : values_) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void VariableStore::Clear() {
  absl::flat_hash_map<std::string, Tensor> gone;  // Freed after the lock is released.
  absl::MutexLock lock(&mu_);
  gone.swap(values_);
}

}  // namespace sluice
