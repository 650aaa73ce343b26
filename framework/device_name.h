// Device names: "/job:worker/replica:0/task:1/device:CPU:0", partial specifications such as
// "/job:worker/task:1" or "/device:CPU:*", and the legacy "/cpu:0" form.
//
//   SL_ASSIGN_OR_RETURN(DeviceName spec, DeviceName::Parse(node.device()));
//   SL_ASSIGN_OR_RETURN(DeviceName full, DeviceName::Parse(device.name()));
//   if (spec.Matches(full)) { ... }
#ifndef SLUICE_FRAMEWORK_DEVICE_NAME_H_
#define SLUICE_FRAMEWORK_DEVICE_NAME_H_

#include <string>

#include "absl/status/statusor.h"

namespace sluice {

struct DeviceName {
  bool has_job = false;
  std::string job;
  bool has_replica = false;
  int replica = 0;
  bool has_task = false;
  int task = 0;
  bool has_type = false;
  std::string type;  // Upper case: "CPU".
  bool has_id = false;
  int id = 0;

  static absl::StatusOr<DeviceName> Parse(absl::string_view name);
  static std::string Full(absl::string_view job, int replica, int task, absl::string_view type,
                          int id);

  // True when every field this (partial) name sets equals the other's.
  bool Matches(const DeviceName& full) const;
  bool IsFullySpecified() const { return has_job && has_replica && has_task && has_type && has_id; }
  // "/job:J/replica:R/task:T" (the process that owns the device).
  std::string TaskName() const;
  std::string ToString() const;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_DEVICE_NAME_H_
