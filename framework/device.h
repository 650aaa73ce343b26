// A device: a name, attributes and the thread pool its kernels may use for intra-op work.
// Devices are created and owned by a worker; kernels see them through OpKernelContext.
//
//   Device cpu(attrs, &pool);
//   cpu.name();           // "/job:localhost/replica:0/task:0/device:CPU:0"
//   cpu.compute_pool()->ParallelFor(n, 4096, fn);
#ifndef SLUICE_FRAMEWORK_DEVICE_H_
#define SLUICE_FRAMEWORK_DEVICE_H_

#include <memory>
#include <string>

#include "framework/thread_pool.h"
#include "framework/variable_store.h"
#include "proto/device_attributes.pb.h"

namespace sluice {

inline constexpr char DEVICE_CPU[] = "CPU";

class Device {
 public:
  // `compute_pool` is not owned and must outlive the device.
  Device(DeviceAttributes attributes, ThreadPool* compute_pool)
      : attributes_(std::move(attributes)),
        compute_pool_(compute_pool),
        variables_(std::make_unique<VariableStore>(attributes_.name())) {}

  const std::string& name() const { return attributes_.name(); }
  const std::string& device_type() const { return attributes_.device_type(); }
  uint64_t incarnation() const { return attributes_.incarnation(); }
  const DeviceAttributes& attributes() const { return attributes_; }
  ThreadPool* compute_pool() const { return compute_pool_; }
  // The variables that live on this device, for as long as the device.
  VariableStore* variables() const { return variables_.get(); }

 private:
  DeviceAttributes attributes_;
  ThreadPool* compute_pool_;
  std::unique_ptr<VariableStore> variables_;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_DEVICE_H_
