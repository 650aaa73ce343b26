#include "framework/variable_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "framework/status.h"

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

absl::Status VariableStore::Update(absl::Span<const std::string> names, const UpdateFn& update) {
  std::vector<Tensor> in(names.size()), out(names.size());
  std::vector<Tensor> replaced;  // Old values the update replaced, freed after the lock.
  absl::MutexLock lock(&mu_);
  std::vector<Tensor*> stored(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("variable '", names[i], "' on ", owner_, " is named twice in one update"));
      }
    }
    auto it = values_.find(names[i]);
    if (it == values_.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "variable '", names[i], "' on ", owner_, " is updated before any value was assigned to it"));
    }
    const Tensor& v = it->second;
    if (v.dtype() == DT_STRING || v.dtype() == DT_VARIANT || v.dtype() == DT_RESOURCE) {
      return absl::InvalidArgumentError(absl::StrCat("variable '", names[i], "' on ", owner_, " holds ",
                                                     DataTypeString(v.dtype()), ", which updates cannot change"));
    }
    stored[i] = &it->second;
    // The store's reference is the only one: no tensor read before can see the writes.
    const bool sole = v.RefCountIsOne();
    in[i] = v;
    if (sole) {
      out[i] = v;
    } else {
      SL_ASSIGN_OR_RETURN(out[i], Tensor::Allocate(v.dtype(), v.shape()), "the new value of variable '", names[i],
                          "' on ", owner_);
    }
  }
  SL_RETURN_IF_ERROR(update(in, absl::MakeSpan(out)));
  for (size_t i = 0; i < names.size(); ++i) {
    if (out[i].buffer() == stored[i]->buffer()) continue;
    replaced.push_back(std::move(*stored[i]));
    *stored[i] = std::move(out[i]);
  }
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
