// What the kernels of TensorFlow's variables share (tf_variable_ops.cc, tf_training_ops.cc): the
// resource handle VarHandleOp makes, the store keys of resource and ref variables, and the lock
// that serializes their updates. See tf_variable_ops.cc's top comment for the design.
#ifndef SLUICE_KERNELS_TF_VARIABLE_UTIL_H_
#define SLUICE_KERNELS_TF_VARIABLE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "framework/device.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace tf_variables {

// Serializes every read-modify-write of these kernels (AssignAdd, a reshaping assign), so two
// steps that update one variable both land (TensorFlow's use_locking, always on).
inline absl::Mutex& UpdateMutex() {
  static absl::Mutex* mu = new absl::Mutex();
  return *mu;
}

constexpr uint64_t kHandleMagic = 0x534c55494345564bull;  // "SLUICEVK"

struct VarHandle {
  uint64_t magic = kHandleMagic;
  std::string device, container, name, key;
  DataType dtype = DT_INVALID;
};

inline std::string StoreKey(absl::string_view kind, absl::string_view container, absl::string_view name) {
  return absl::StrCat(kind, ":", container.size(), ":", container, ":", name);
}

inline std::string Describe(const VarHandle& h) {
  return absl::StrCat("resource variable '", h.name, "' (container '", h.container, "')");
}

// The handle `t` (the op's input `input`) holds, on this op's device.
inline absl::StatusOr<const VarHandle*> HandleOf(const OpKernelContext* ctx, const Tensor& t, int input = 0) {
  const auto& buf = t.buffer();
  if (t.dtype() != DT_RESOURCE || t.dims() != 0 || buf == nullptr || buf->size() != sizeof(VarHandle) ||
      static_cast<const VarHandle*>(buf->data())->magic != kHandleMagic) {
    return absl::InvalidArgumentError(absl::StrCat("input ", input, " is not a variable handle made by VarHandleOp (",
                                                   DataTypeString(t.dtype()), " ", t.shape().DebugString(), ")"));
  }
  const auto* h = static_cast<const VarHandle*>(buf->data());
  if (ctx->device() == nullptr || ctx->device()->name() != h->device) {
    return absl::InvalidArgumentError(absl::StrCat(
        Describe(*h), " lives on ", h->device, " but this op runs on ",
        ctx->device() == nullptr ? "no device" : ctx->device()->name(), "; place it with its VarHandleOp"));
  }
  return h;
}

// The variable's value, or FAILED_PRECONDITION naming it when it has none.
inline absl::StatusOr<Tensor> ReadLocked(const OpKernelContext* ctx, const VarHandle& h) {
  absl::StatusOr<Tensor> v = ctx->device()->variables()->Read(h.key);
  if (absl::IsFailedPrecondition(v.status())) {
    return absl::FailedPreconditionError(absl::StrCat("Error while reading ", Describe(h),
                                                      ": it is uninitialized (never assigned a value)"));
  }
  return v;
}

// Makes `value` the variable's value; a value of another shape replaces the old one.
inline absl::Status StoreLocked(const OpKernelContext* ctx, const std::string& key, const Tensor& value) {
  VariableStore* store = ctx->device()->variables();
  absl::StatusOr<Tensor> old = store->Read(key);
  if (old.ok() && old->shape() != value.shape()) SL_RETURN_IF_ERROR(store->Erase(key));
  return store->Assign(key, value);
}

inline absl::Status CheckDtype(const VarHandle& h, DataType dtype, const char* verb) {
  if (h.dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Trying to ", verb, " ", Describe(h), " with wrong dtype. Expected ",
                                                   DataTypeString(h.dtype), " got ", DataTypeString(dtype)));
  }
  return absl::OkStatus();
}

// Store names of the ref-variable bookkeeping (see the top of tf_variable_ops.cc).
inline std::string RefAliasName(absl::string_view node) { return absl::StrCat("tf_ref_node:", node.size(), ":", node); }
inline std::string RefAssignedName(absl::string_view node) {
  return absl::StrCat("tf_ref_assigned:", node.size(), ":", node);
}

}  // namespace tf_variables
}  // namespace sluice

#endif  // SLUICE_KERNELS_TF_VARIABLE_UTIL_H_
