// CPU kernels of TensorFlow's variables (ops/tf_state_ops.cc), over the device's VariableStore.
//
// A resource handle is a scalar DT_RESOURCE tensor whose buffer holds a VarHandle (the
// runtime never serializes or allocates resources itself, so the only tensors of that type
// with a VarHandle-sized buffer are the ones VarHandleOp made; the magic number guards the
// rest). Store keys carry the kind and a length-prefixed container, so resource variables,
// ref variables and the store's other users (ReadVariable/AssignVariable of ONNX training)
// cannot collide.
//
// Ref variables (VariableV2 + Assign) without reference edges: VariableV2's kernel records, when
// its graph is registered, which store key its node name stands for; Assign's kernel records
// that its ref input's node is assigned, and at run time finds the variable through that node's
// name. A VariableV2 that was never assigned fails with FAILED_PRECONDITION, unless the step's
// graph also assigns it (the initializer's graph): then it hands Assign an empty placeholder.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/device.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_variable_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

using tf_variables::CheckDtype;
using tf_variables::Describe;
using tf_variables::HandleOf;
using tf_variables::ReadLocked;
using tf_variables::RefAliasName;
using tf_variables::RefAssignedName;
using tf_variables::StoreKey;
using tf_variables::StoreLocked;
using tf_variables::UpdateMutex;
using tf_variables::VarHandle;

class VarHandleOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    auto h = std::make_unique<VarHandle>();
    SL_RETURN_IF_ERROR(ctx->GetAttr("container", &h->container));
    SL_RETURN_IF_ERROR(ctx->GetAttr("shared_name", &h->name));
    SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &h->dtype));
    if (h->container.empty()) h->container = "localhost";  // TensorFlow's default container.
    if (ctx->device() == nullptr) return absl::InvalidArgumentError("VarHandleOp needs a device");
    h->device = ctx->device()->name();
    h->key = StoreKey("tf_resource", h->container, h->name);
    VarHandle* raw = h.release();
    handle_ = Tensor(DT_RESOURCE, TensorShape({}),
                     TensorBuffer::Wrap(raw, sizeof(VarHandle), [](void* p, size_t) { delete static_cast<VarHandle*>(p); }));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override { return ctx->set_output(0, handle_); }
  bool IsExpensive() const override { return false; }

 private:
  Tensor handle_;
};

class ReadVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("dtype", &dtype_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const VarHandle* h, HandleOf(ctx, ctx->input(0)));
    SL_RETURN_IF_ERROR(CheckDtype(*h, dtype_, "read"));
    absl::ReaderMutexLock lock(&UpdateMutex());
    SL_ASSIGN_OR_RETURN(Tensor value, ReadLocked(ctx, *h));
    return ctx->set_output(0, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
};

class AssignVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype_));
    return ctx->GetAttr("validate_shape", &validate_shape_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const VarHandle* h, HandleOf(ctx, ctx->input(0)));
    SL_RETURN_IF_ERROR(CheckDtype(*h, dtype_, "assign"));
    const Tensor& value = ctx->input(1);
    absl::MutexLock lock(&UpdateMutex());
    if (validate_shape_) {
      absl::StatusOr<Tensor> old = ctx->device()->variables()->Read(h->key);
      if (old.ok() && old->shape() != value.shape()) {
        return absl::InvalidArgumentError(absl::StrCat("Trying to assign to ", Describe(*h), " of shape ",
                                                       old->shape().DebugString(), " a value of shape ",
                                                       value.shape().DebugString(), " with validate_shape"));
      }
    }
    return StoreLocked(ctx, h->key, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  bool validate_shape_ = false;
};

// AssignAddVariableOp (kSign 1) and AssignSubVariableOp (kSign -1). The sum is a new tensor:
// readers holding the old value keep it.
template <typename T, int kSign>
class AssignUpdateVariableOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const VarHandle* h, HandleOf(ctx, ctx->input(0)));
    SL_RETURN_IF_ERROR(CheckDtype(*h, DataTypeToEnum<T>::value, "update"));
    const Tensor& value = ctx->input(1);
    absl::MutexLock lock(&UpdateMutex());
    SL_ASSIGN_OR_RETURN(Tensor old, ReadLocked(ctx, *h));
    if (old.shape() != value.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("Cannot update ", Describe(*h), " with shape ",
                                                     old.shape().DebugString(), " using a Tensor with shape ",
                                                     value.shape().DebugString(), ", shapes must be equal."));
    }
    SL_ASSIGN_OR_RETURN(Tensor sum, Tensor::Allocate(old.dtype(), old.shape()));
    const T* a = old.data<T>();
    const T* b = value.data<T>();
    T* out = sum.data<T>();
    for (int64_t i = 0; i < sum.NumElements(); ++i) {
      if constexpr (kSign > 0) {
        out[i] = T(a[i] + b[i]);
      } else {
        out[i] = T(a[i] - b[i]);
      }
    }
    return ctx->device()->variables()->Assign(h->key, sum);
  }
};

class VariableV2Op : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("container", &container_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("shared_name", &name_));
    if (container_.empty()) container_ = "localhost";
    if (name_.empty()) name_ = ctx->def().name();  // TensorFlow's default: the node's name.
    if (ctx->device() == nullptr) return absl::InvalidArgumentError("VariableV2 needs a device");
    key_ = StoreKey("tf_ref", container_, name_);
    Tensor key = Tensor::Scalar<tstring>(key_);
    absl::MutexLock lock(&UpdateMutex());
    return RecordAlias(ctx->device(), RefAliasName(ctx->def().name()), key);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    VariableStore* store = ctx->device()->variables();
    absl::ReaderMutexLock lock(&UpdateMutex());
    absl::StatusOr<Tensor> value = store->Read(key_);
    if (value.ok()) return ctx->set_output(0, *value);
    if (store->Read(RefAssignedName(name())).ok()) {
      // Uninitialized, in a graph that assigns it: Assign ignores what it gets here.
      return ctx->set_output(0, Tensor(ctx->expected_output_dtype(0), TensorShape({0})));
    }
    return absl::FailedPreconditionError(absl::StrCat("Attempting to use uninitialized value ", name_,
                                                      name_ == name() ? "" : absl::StrCat(" (node ", name(), ")")));
  }
  bool IsExpensive() const override { return false; }

 private:
  static absl::Status RecordAlias(Device* device, const std::string& name, const Tensor& value) {
    VariableStore* store = device->variables();
    (void)store->Erase(name);  // NOT_FOUND the first time.
    return store->Assign(name, value);
  }

  std::string container_, name_, key_;
};

class AssignOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("validate_shape", &validate_shape_));
    if (ctx->def().input_size() < 1 || absl::StartsWith(ctx->def().input(0), "^")) {
      return absl::InvalidArgumentError("Assign has no ref input");
    }
    ref_node_ = ctx->def().input(0);
    if (size_t colon = ref_node_.rfind(':'); colon != std::string::npos) ref_node_.resize(colon);
    if (ctx->device() == nullptr) return absl::InvalidArgumentError("Assign needs a device");
    absl::MutexLock lock(&UpdateMutex());
    VariableStore* store = ctx->device()->variables();
    if (store->Read(RefAssignedName(ref_node_)).ok()) return absl::OkStatus();
    return store->Assign(RefAssignedName(ref_node_), Tensor::Scalar<bool>(true));
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    VariableStore* store = ctx->device()->variables();
    const Tensor& value = ctx->input(1);
    absl::MutexLock lock(&UpdateMutex());
    absl::StatusOr<Tensor> alias = store->Read(RefAliasName(ref_node_));
    if (!alias.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Assign's ref input '", ref_node_,
                                                     "' is not a VariableV2 on this device (", ctx->device()->name(),
                                                     "): Sluice passes ref edges as values"));
    }
    const std::string key = alias->flat<tstring>()[0];
    absl::StatusOr<Tensor> old = store->Read(key);
    if (validate_shape_ && old.ok() && old->shape() != value.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("Assign requires shapes of both tensors to match. lhs shape= ",
                                                     old->shape().DebugString(), " rhs shape= ",
                                                     value.shape().DebugString()));
    }
    if (old.ok() && old->dtype() != value.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("Assign of ", DataTypeString(value.dtype()), " to a variable of ",
                                                     DataTypeString(old->dtype())));
    }
    if (old.ok() && old->shape() != value.shape()) SL_RETURN_IF_ERROR(store->Erase(key));
    SL_RETURN_IF_ERROR(store->Assign(key, value));
    return ctx->set_output(0, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool validate_shape_ = true;
  std::string ref_node_;
};

template <typename T>
using AssignAddVariableOp = AssignUpdateVariableOp<T, 1>;
template <typename T>
using AssignSubVariableOp = AssignUpdateVariableOp<T, -1>;

const bool registered = [] {
  RegisterCpuKernelTemplate<AssignAddVariableOp>("AssignAddVariableOp", NumericTypes{}, "dtype");
  RegisterCpuKernelTemplate<AssignSubVariableOp>("AssignSubVariableOp", NumericTypes{}, "dtype");
  return true;
}();

REGISTER_KERNEL_BUILDER(Name("VarHandleOp").Device(DEVICE_CPU), VarHandleOp);
REGISTER_KERNEL_BUILDER(Name("ReadVariableOp").Device(DEVICE_CPU), ReadVariableOp);
REGISTER_KERNEL_BUILDER(Name("AssignVariableOp").Device(DEVICE_CPU), AssignVariableOp);
REGISTER_KERNEL_BUILDER(Name("VariableV2").Device(DEVICE_CPU), VariableV2Op);
REGISTER_KERNEL_BUILDER(Name("Assign").Device(DEVICE_CPU), AssignOp);

}  // namespace
}  // namespace sluice
