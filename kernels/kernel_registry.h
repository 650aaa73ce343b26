// Binding kernels to ops: REGISTER_KERNEL_BUILDER names an op, a device type and attr
// constraints; CreateOpKernel picks the matching registration for a node.
//
//   REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                           MatMulOp<float>);
//   SL_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
//                       KernelRegistry::Global()->CreateOpKernel(device, node_def, op_def));
#ifndef SLUICE_KERNELS_KERNEL_REGISTRY_H_
#define SLUICE_KERNELS_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/op_kernel.h"
#include "proto/kernel_def.pb.h"

namespace sluice {

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(const char* op) { def_.set_op(op); }
  KernelDefBuilder& Device(const char* device_type);
  KernelDefBuilder& TypeConstraint(const char* attr, DataType allowed);
  KernelDefBuilder& TypeConstraint(const char* attr, absl::Span<const DataType> allowed);
  template <typename T>
  KernelDefBuilder& TypeConstraint(const char* attr) {
    return TypeConstraint(attr, DataTypeToEnum<T>::value);
  }
  KernelDefBuilder& HostMemory(const char* arg);
  KernelDefBuilder& Priority(int priority);
  KernelDefBuilder& Label(const char* label);
  const KernelDef& Build() const { return def_; }

 private:
  KernelDef def_;
};

// TensorFlow's spelling: Name("Op").Device(DEVICE_CPU)...
class Name : public KernelDefBuilder {
 public:
  explicit Name(const char* op) : KernelDefBuilder(op) {}
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>()>;

struct KernelRegistration {
  KernelDef def;
  std::string class_name;
  KernelFactory factory;
};

class KernelRegistry {
 public:
  static KernelRegistry* Global();

  void Register(const KernelDef& def, std::string class_name, KernelFactory factory);

  // The registration for `node` (attrs defaults already filled) on `device_type`: NOT_FOUND
  // naming the node and listing every kernel registered for the op when none matches.
  absl::StatusOr<const KernelRegistration*> FindKernel(absl::string_view device_type,
                                                       const NodeDef& node) const;
  // Builds and initializes the kernel for `node` on `device`; `functions` serves kernels that
  // call functions of the graph's library.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateOpKernel(Device* device, const NodeDef& node,
                                                           const OpDef& op_def,
                                                           FunctionRuntime* functions = nullptr) const;
  std::vector<const KernelRegistration*> All() const;
  std::vector<const KernelRegistration*> ForOp(absl::string_view op) const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<KernelRegistration>> kernels_ ABSL_GUARDED_BY(mu_);
};

// "DEVICE op attr-constraints" on one line, for error messages and tools.
std::string KernelDefSummary(const KernelDef& def);

namespace kernel_factory {
struct KernelRegistrar {
  KernelRegistrar(const KernelDefBuilder& builder, const char* class_name, KernelFactory factory) {
    KernelRegistry::Global()->Register(builder.Build(), class_name, std::move(factory));
  }
};
}  // namespace kernel_factory

#define SL_REGISTER_KERNEL_UNIQ_(ctr, builder, ...)                                \
  static ::sluice::kernel_factory::KernelRegistrar sl_kernel_registrar_##ctr(       \
      ::sluice::builder, #__VA_ARGS__,                                              \
      []() -> std::unique_ptr<::sluice::OpKernel> { return std::make_unique<__VA_ARGS__>(); })
#define SL_REGISTER_KERNEL_(ctr, builder, ...) SL_REGISTER_KERNEL_UNIQ_(ctr, builder, __VA_ARGS__)
#define REGISTER_KERNEL_BUILDER(builder, ...) SL_REGISTER_KERNEL_(__COUNTER__, builder, __VA_ARGS__)

}  // namespace sluice

#endif  // SLUICE_KERNELS_KERNEL_REGISTRY_H_
