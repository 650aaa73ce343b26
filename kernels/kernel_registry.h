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
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
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

// Thread-safe: registration happens at static initialization, lookups from any thread.
class KernelRegistry {
 public:
  static KernelRegistry* Global();

  // Several registrations may match a node; the highest priority wins, and a tie at the top is
  // an error at lookup (not at registration).
  void Register(const KernelDef& def, std::string class_name, KernelFactory factory);

  // The registration for `node` (attrs defaults already filled) on `device_type`: NOT_FOUND
  // naming the node and listing every kernel registered for the op when none matches. The
  // returned pointer is owned by the registry and lives as long as it does.
  absl::StatusOr<const KernelRegistration*> FindKernel(absl::string_view device_type,
                                                       const NodeDef& node) const;
  // FindKernel(device_type, node).ok(), without building the error text: for callers that
  // try devices in turn (the placer).
  bool HasKernel(absl::string_view device_type, const NodeDef& node) const;
  // Builds and initializes the kernel for `node` on `device`; `functions` serves kernels that
  // call functions of the graph's library, `constants` the values of hoisted Consts.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateOpKernel(Device* device, const NodeDef& node,
                                                           const OpDef& op_def,
                                                           FunctionRuntime* functions = nullptr,
                                                           const HoistedConstants* constants = nullptr) const;
  // In registration order.
  std::vector<const KernelRegistration*> All() const;
  std::vector<const KernelRegistration*> ForOp(absl::string_view op) const;

 private:
  // (op, device type), looked up without copying the node's strings.
  using Key = std::pair<std::string, std::string>;
  using KeyView = std::pair<absl::string_view, absl::string_view>;
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(KeyView k) const { return absl::HashOf(k.first, k.second); }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(KeyView a, KeyView b) const { return a == b; }
  };

  // The best match among the (op, device) registrations; *tie when another has its priority.
  const KernelRegistration* BestMatch(absl::string_view device_type, const NodeDef& node,
                                      bool* tie) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Owns every registration, in registration order (the order error messages list them in).
  std::vector<std::unique_ptr<KernelRegistration>> kernels_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Key, std::vector<const KernelRegistration*>, KeyHash, KeyEq> by_op_device_
      ABSL_GUARDED_BY(mu_);
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
