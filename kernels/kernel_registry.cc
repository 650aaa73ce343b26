#include "kernels/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/node_def_util.h"
#include "framework/status.h"

namespace sluice {

KernelDefBuilder& KernelDefBuilder::Device(const char* device_type) {
  def_.set_device_type(device_type);
  return *this;
}

KernelDefBuilder& KernelDefBuilder::TypeConstraint(const char* attr, DataType allowed) {
  return TypeConstraint(attr, absl::Span<const DataType>(&allowed, 1));
}

KernelDefBuilder& KernelDefBuilder::TypeConstraint(const char* attr,
                                                   absl::Span<const DataType> allowed) {
  auto* c = def_.add_constraint();
  c->set_name(attr);
  for (DataType dt : allowed) c->mutable_allowed_values()->mutable_list()->add_type(dt);
  return *this;
}

KernelDefBuilder& KernelDefBuilder::HostMemory(const char* arg) {
  def_.add_host_memory_arg(arg);
  return *this;
}

KernelDefBuilder& KernelDefBuilder::Priority(int priority) {
  def_.set_priority(priority);
  return *this;
}

KernelDefBuilder& KernelDefBuilder::Label(const char* label) {
  def_.set_label(label);
  return *this;
}

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(const KernelDef& def, std::string class_name, KernelFactory factory) {
  auto r = std::make_unique<KernelRegistration>();
  r->def = def;
  r->class_name = std::move(class_name);
  r->factory = std::move(factory);
  absl::MutexLock lock(&mu_);
  by_op_device_[Key(r->def.op(), r->def.device_type())].push_back(r.get());
  kernels_.push_back(std::move(r));
}

std::string KernelDefSummary(const KernelDef& def) {
  std::string s = absl::StrCat("device='", def.device_type(), "'");
  for (const auto& c : def.constraint()) {
    std::vector<std::string> types;
    for (int t : c.allowed_values().list().type()) {
      types.push_back(DataType_Name(static_cast<DataType>(t)));
    }
    absl::StrAppend(&s, "; ", c.name(), " in [", absl::StrJoin(types, ", "), "]");
  }
  if (!def.label().empty()) absl::StrAppend(&s, "; label='", def.label(), "'");
  return s;
}

namespace {

bool ConstraintsMatch(const KernelDef& def, const NodeDef& node) {
  for (const auto& c : def.constraint()) {
    auto it = node.attr().find(c.name());
    if (it == node.attr().end()) return false;
    const auto& allowed = c.allowed_values().list().type();
    auto contains = [&](int t) {
      for (int a : allowed) {
        if (a == t) return true;
      }
      return false;
    };
    if (it->second.value_case() == AttrValue::kType) {
      if (!contains(it->second.type())) return false;
    } else if (it->second.value_case() == AttrValue::kList) {
      for (int t : it->second.list().type()) {
        if (!contains(t)) return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

const KernelRegistration* KernelRegistry::BestMatch(absl::string_view device_type,
                                                    const NodeDef& node, bool* tie) const {
  *tie = false;
  auto it = by_op_device_.find(KeyView(node.op(), device_type));
  if (it == by_op_device_.end()) return nullptr;
  const KernelRegistration* best = nullptr;
  for (const KernelRegistration* k : it->second) {
    if (!ConstraintsMatch(k->def, node)) continue;
    if (best == nullptr || k->def.priority() > best->def.priority()) {
      best = k;
      *tie = false;
    } else if (k->def.priority() == best->def.priority()) {
      *tie = true;
    }
  }
  return best;
}

bool KernelRegistry::HasKernel(absl::string_view device_type, const NodeDef& node) const {
  absl::ReaderMutexLock lock(&mu_);
  bool tie;
  return BestMatch(device_type, node, &tie) != nullptr && !tie;
}

absl::StatusOr<const KernelRegistration*> KernelRegistry::FindKernel(absl::string_view device_type,
                                                                     const NodeDef& node) const {
  absl::ReaderMutexLock lock(&mu_);
  bool tie;
  const KernelRegistration* best = BestMatch(device_type, node, &tie);
  if (best != nullptr && tie) {
    return absl::InternalError(absl::StrCat("several kernels with equal priority match node '",
                                            node.name(), "' (op '", node.op(), "') on ",
                                            device_type));
  }
  if (best != nullptr) return best;
  // Nothing matches: only now list what is registered for the op, on every device.
  std::vector<std::string> registered;
  for (const auto& k : kernels_) {
    if (k->def.op() == node.op()) registered.push_back(KernelDefSummary(k->def));
  }
  std::vector<std::string> attrs;
  for (const auto& [name, value] : node.attr()) {
    if (value.value_case() == AttrValue::kType ||
        (value.value_case() == AttrValue::kList && value.list().type_size() > 0)) {
      attrs.push_back(absl::StrCat(name, "=", SummarizeAttrValue(value)));
    }
  }
  std::sort(attrs.begin(), attrs.end());
  return absl::NotFoundError(absl::StrCat(
      "no kernel registered for op '", node.op(), "' on device ", device_type, " with attrs {",
      absl::StrJoin(attrs, ", "), "} for node '", node.name(), "'. Registered kernels:\n  ",
      registered.empty() ? "<none>" : absl::StrJoin(registered, "\n  ")));
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateOpKernel(Device* device,
                                                                         const NodeDef& node,
                                                                         const OpDef& op_def,
                                                                         FunctionRuntime* functions,
                                                                         const HoistedConstants* constants) const {
  SL_ASSIGN_OR_RETURN(const KernelRegistration* reg, FindKernel(device->device_type(), node));
  DataTypeVector in, out;
  SL_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &in, &out));
  std::unique_ptr<OpKernel> kernel = reg->factory();
  kernel->def_ = node;
  kernel->input_types_ = in;
  kernel->output_types_ = out;
  OpKernelConstruction ctx(kernel->def_, op_def, device, in, out, functions, constants);
  SL_RETURN_IF_ERROR(kernel->Init(&ctx), "node '", node.name(), "' (op '", node.op(), "')");
  // Kernels read attrs only in Init: keep the NodeDef for names and messages, but not a second
  // copy of tensor-valued attrs (a Const's weights live in the kernel's own Tensor).
  for (auto& [name, value] : *kernel->def_.mutable_attr()) {
    // Swapped out, not cleared: a cleared string keeps its capacity.
    if (value.value_case() == AttrValue::kTensor) std::string().swap(*value.mutable_tensor()->mutable_tensor_content());
  }
  return kernel;
}

std::vector<const KernelRegistration*> KernelRegistry::All() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<const KernelRegistration*> out;
  for (const auto& k : kernels_) out.push_back(k.get());
  return out;
}

std::vector<const KernelRegistration*> KernelRegistry::ForOp(absl::string_view op) const {
  std::vector<const KernelRegistration*> out;
  for (const KernelRegistration* k : All()) {
    if (k->def.op() == op) out.push_back(k);
  }
  return out;
}

}  // namespace sluice
