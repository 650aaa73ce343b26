#include "framework/resource_mgr.h"

#include "framework/device.h"

namespace sluice {
namespace {

constexpr uint64_t kHandleMagic = 0x534c5552534348ull;  // "SLURSCH"

struct HandlePayload {
  uint64_t magic = kHandleMagic;
  ResourceHandle handle;
};

}  // namespace

Tensor MakeResourceHandleTensor(const ResourceHandle& handle) {
  auto* payload = new HandlePayload{kHandleMagic, handle};
  return Tensor(DT_RESOURCE, TensorShape({}),
                TensorBuffer::Wrap(payload, sizeof(HandlePayload),
                                   [](void* p, size_t) { delete static_cast<HandlePayload*>(p); }));
}

absl::StatusOr<ResourceHandle> ResourceHandleFromTensor(const Tensor& t) {
  const auto& buf = t.buffer();
  if (t.dtype() != DT_RESOURCE || t.dims() != 0 || buf == nullptr || buf->size() != sizeof(HandlePayload) ||
      static_cast<const HandlePayload*>(buf->data())->magic != kHandleMagic) {
    return absl::InvalidArgumentError(absl::StrCat("expected a resource handle, got a ", DataTypeString(t.dtype()),
                                                   " tensor of shape ", t.shape().DebugString()));
  }
  return static_cast<const HandlePayload*>(buf->data())->handle;
}

ResourceHandleProto ResourceHandleToProto(const ResourceHandle& handle) {
  ResourceHandleProto proto;
  proto.set_device(handle.device);
  proto.set_container(handle.container);
  proto.set_name(handle.name);
  proto.set_maybe_type_name(handle.type_name);
  return proto;
}

Tensor ResourceHandleTensorFromProto(const ResourceHandleProto& proto) {
  return MakeResourceHandleTensor({proto.device(), proto.container(), proto.name(), proto.maybe_type_name()});
}

absl::Status ResourceMgr::CheckType(const ResourceHandle& handle, absl::string_view type) {
  if (handle.type_name != type) {
    return absl::InvalidArgumentError(absl::StrCat("the handle names ", handle.DebugString(), ", not a ", type));
  }
  return absl::OkStatus();
}

absl::Status ResourceMgr::NotFound(const ResourceHandle& handle) const {
  return absl::NotFoundError(absl::StrCat("Resource ", handle.DebugString(), " does not exist on ", owner_));
}

absl::Status ResourceMgr::Delete(const ResourceHandle& handle) {
  std::shared_ptr<ResourceBase> gone;  // Destroyed after the lock is released.
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(Key(handle));
  if (it == resources_.end()) return NotFound(handle);
  gone = std::move(it->second);
  resources_.erase(it);
  return absl::OkStatus();
}

void ResourceMgr::Clear() {
  absl::flat_hash_map<KeyT, std::shared_ptr<ResourceBase>> gone;
  absl::MutexLock lock(&mu_);
  gone.swap(resources_);
}

namespace {

struct Managers {
  absl::Mutex mu;
  absl::flat_hash_map<const Device*, std::unique_ptr<ResourceMgr>> by_device ABSL_GUARDED_BY(mu);
};

Managers& AllManagers() {
  static Managers* managers = new Managers();  // Never destroyed: devices may outlive main().
  return *managers;
}

}  // namespace

ResourceMgr& ResourceMgrOf(const Device* device) {
  Managers& all = AllManagers();
  absl::MutexLock lock(&all.mu);
  std::unique_ptr<ResourceMgr>& mgr = all.by_device[device];
  if (mgr == nullptr) mgr = std::make_unique<ResourceMgr>(device == nullptr ? "no device" : device->name());
  return *mgr;
}

void ReleaseResourceMgr(const Device* device) {
  std::unique_ptr<ResourceMgr> gone;  // Its resources are destroyed outside the table's lock.
  Managers& all = AllManagers();
  {
    absl::MutexLock lock(&all.mu);
    auto it = all.by_device.find(device);
    if (it == all.by_device.end()) return;
    gone = std::move(it->second);
    all.by_device.erase(it);
  }
}

}  // namespace sluice
