#include "master/placer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/device_name.h"
#include "framework/status.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

bool HasKernel(const Node& node, const DeviceAttributes& device) {
  return KernelRegistry::Global()->HasKernel(device.device_type(), node.def());
}

std::string DeviceList(const std::vector<DeviceAttributes>& devices) {
  return absl::StrJoin(devices, ", ", [](std::string* out, const DeviceAttributes& d) {
    absl::StrAppend(out, d.name());
  });
}

}  // namespace

absl::Status PlaceGraph(Graph* graph, const std::vector<DeviceAttributes>& devices,
                        const std::string& default_device) {
  if (devices.empty()) return absl::FailedPreconditionError("no devices to place the graph on");
  std::vector<DeviceName> parsed;
  for (const auto& d : devices) {
    SL_ASSIGN_OR_RETURN(DeviceName p, DeviceName::Parse(d.name()));
    parsed.push_back(p);
  }
  SL_ASSIGN_OR_RETURN(std::vector<Node*> order, graph->TopologicalOrder());
  for (Node* node : order) {
    if (node->def().attr().contains(kColocateWithInputAttr)) {
      const Edge* in = node->input_edge(0);
      if (in != nullptr) {
        node->set_assigned_device(in->src->assigned_device());
        continue;
      }
    }
    const std::string& request = node->def().device();
    if (!request.empty()) {
      auto spec = DeviceName::Parse(request);
      if (!spec.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node->name(), "': ",
                                                       spec.status().message()));
      }
      const DeviceAttributes* match = nullptr;
      const DeviceAttributes* first_matching = nullptr;
      for (size_t i = 0; i < devices.size() && match == nullptr; ++i) {
        if (!spec->Matches(parsed[i])) continue;
        if (first_matching == nullptr) first_matching = &devices[i];
        if (HasKernel(*node, devices[i])) match = &devices[i];
      }
      if (match == nullptr) {
        if (first_matching == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot assign a device for node '", node->name(), "': no device matches '",
              request, "'. Available devices: ", DeviceList(devices)));
        }
        // Devices match but none has a kernel: report the registry's explanation.
        return KernelRegistry::Global()->FindKernel(first_matching->device_type(), node->def()).status();
      }
      node->set_assigned_device(match->name());
      continue;
    }
    const DeviceAttributes* chosen = nullptr;
    for (const auto& d : devices) {
      if (d.name() == default_device && HasKernel(*node, d)) chosen = &d;
    }
    for (size_t i = 0; i < devices.size() && chosen == nullptr; ++i) {
      if (HasKernel(*node, devices[i])) chosen = &devices[i];
    }
    if (chosen == nullptr) {
      return KernelRegistry::Global()->FindKernel(devices[0].device_type(), node->def()).status();
    }
    node->set_assigned_device(chosen->name());
  }
  return absl::OkStatus();
}

}  // namespace sluice
