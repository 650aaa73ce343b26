// Resources of one device that outlive steps and are named by handles (TensorFlow's
// ResourceMgr): summary writers today. A handle is a scalar DT_RESOURCE tensor that holds only
// names (device, container, name, type); kernels look the resource up by them at run time, so
// a handle survives a trip through the C API as a serialized ResourceHandleProto.
//
//   Tensor h = MakeResourceHandleTensor({device->name(), "", "logdir:/tmp/x", "SummaryWriter"});
//   SL_ASSIGN_OR_RETURN(ResourceHandle handle, ResourceHandleFromTensor(h));
//   SL_ASSIGN_OR_RETURN(std::shared_ptr<W> w, ResourceMgrOf(device).LookupOrCreate<W>(handle, make));
//
// Variables keep their own store (framework/variable_store.h).
#ifndef SLUICE_FRAMEWORK_RESOURCE_MGR_H_
#define SLUICE_FRAMEWORK_RESOURCE_MGR_H_

#include <memory>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/status.h"
#include "framework/tensor.h"
#include "proto/resource_handle.pb.h"

namespace sluice {

class Device;

// A resource; subclasses say what they are in `kTypeName` (a static constexpr char[]) so a
// handle of one type cannot reach a resource of another.
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
};

struct ResourceHandle {
  std::string device, container, name, type_name;
  std::string DebugString() const {
    return absl::StrCat(type_name, " '", name, "' (container '", container, "') on ", device);
  }
};

// A scalar DT_RESOURCE tensor holding `handle`.
Tensor MakeResourceHandleTensor(const ResourceHandle& handle);
// The handle a tensor made by MakeResourceHandleTensor (or ResourceHandleTensorFromProto)
// holds; INVALID_ARGUMENT for any other tensor.
absl::StatusOr<ResourceHandle> ResourceHandleFromTensor(const Tensor& t);
// TensorFlow's wire form of a handle, as the C API hands DT_RESOURCE values to clients.
ResourceHandleProto ResourceHandleToProto(const ResourceHandle& handle);
Tensor ResourceHandleTensorFromProto(const ResourceHandleProto& proto);

// Thread-safe.
class ResourceMgr {
 public:
  explicit ResourceMgr(std::string owner) : owner_(std::move(owner)) {}

  // NOT_FOUND naming the handle when there is none, INVALID_ARGUMENT when the handle's type is
  // not T's.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> Lookup(const ResourceHandle& handle) const {
    SL_RETURN_IF_ERROR(CheckType(handle, T::kTypeName));
    absl::MutexLock lock(&mu_);
    auto it = resources_.find(Key(handle));
    if (it == resources_.end()) return NotFound(handle);
    return std::static_pointer_cast<T>(it->second);
  }

  // The resource, made by `create` (called under the manager's lock) when there is none.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> LookupOrCreate(const ResourceHandle& handle,
                                                    absl::FunctionRef<absl::StatusOr<std::unique_ptr<T>>()> create) {
    SL_RETURN_IF_ERROR(CheckType(handle, T::kTypeName));
    absl::MutexLock lock(&mu_);
    auto it = resources_.find(Key(handle));
    if (it != resources_.end()) return std::static_pointer_cast<T>(it->second);
    absl::StatusOr<std::unique_ptr<T>> made = create();
    if (!made.ok()) return made.status();
    std::shared_ptr<T> shared(std::move(*made));
    resources_.emplace(Key(handle), shared);
    return shared;
  }

  // Forgets the resource (it is destroyed when its last user lets go); NOT_FOUND when absent.
  absl::Status Delete(const ResourceHandle& handle);
  // Forgets every resource.
  void Clear();

 private:
  using KeyT = std::tuple<std::string, std::string, std::string>;  // type, container, name
  static KeyT Key(const ResourceHandle& h) { return {h.type_name, h.container, h.name}; }
  static absl::Status CheckType(const ResourceHandle& handle, absl::string_view type);
  absl::Status NotFound(const ResourceHandle& handle) const;

  const std::string owner_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<KeyT, std::shared_ptr<ResourceBase>> resources_ ABSL_GUARDED_BY(mu_);
};

// The resources of `device`, made on first use. They live until ReleaseResourceMgr(device),
// which whoever owns the device calls before destroying it (the worker, the eager context).
// (A side table rather than a member of Device so that adding it did not rebuild every kernel;
// it can move into Device with the next change that touches device.h.)
ResourceMgr& ResourceMgrOf(const Device* device);
void ReleaseResourceMgr(const Device* device);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_RESOURCE_MGR_H_
