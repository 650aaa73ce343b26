// TFE_TensorHandle: an immutable value on the eager CPU device.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/eager_internal.h"

namespace sluice {
namespace {

// TensorFlow's wording for a null handle.
absl::Status InvalidHandle() { return absl::InvalidArgumentError("Invalid handle"); }

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

struct TFE_TensorDebugInfo {
  std::vector<int64_t> dims;
};

extern "C" {

TFE_TensorHandle* TFE_NewTensorHandle(const TF_Tensor* t, TF_Status* status) {
  if (t == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_NewTensorHandle", "t"));
    return nullptr;
  }
  absl::StatusOr<sluice::Tensor> value = sluice::ToRuntimeTensor(*t);
  if (!value.ok()) {
    SetStatus(status, sluice::AddContext(value.status(), "TFE_NewTensorHandle"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return new TFE_TensorHandle{*std::move(value)};
}

void TFE_DeleteTensorHandle(TFE_TensorHandle* h) { delete h; }

TF_DataType TFE_TensorHandleDataType(TFE_TensorHandle* h) {
  return h == nullptr ? static_cast<TF_DataType>(0) : static_cast<TF_DataType>(h->tensor.dtype());
}

int TFE_TensorHandleNumDims(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return -1;
  }
  SetStatus(status, absl::OkStatus());
  return h->tensor.shape().dims();
}

int64_t TFE_TensorHandleNumElements(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return -1;
  }
  SetStatus(status, absl::OkStatus());
  return h->tensor.shape().num_elements();
}

int64_t TFE_TensorHandleDim(TFE_TensorHandle* h, int dim_index, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return -1;
  }
  const int rank = h->tensor.shape().dims();
  if (dim_index < 0 || dim_index >= rank) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          "TFE_TensorHandleDim: dimension ", dim_index, " of a tensor of rank ", rank)));
    return -1;
  }
  SetStatus(status, absl::OkStatus());
  return h->tensor.shape().dim_size(dim_index);
}

const char* TFE_TensorHandleDeviceName(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return sluice::kEagerDeviceName;
}

const char* TFE_TensorHandleBackingDeviceName(TFE_TensorHandle* h, TF_Status* status) {
  return TFE_TensorHandleDeviceName(h, status);
}

TFE_TensorHandle* TFE_TensorHandleCopySharingTensor(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return new TFE_TensorHandle{h->tensor};
}

TF_Tensor* TFE_TensorHandleResolve(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return nullptr;
  }
  absl::StatusOr<TF_Tensor*> t = sluice::NewCApiTensor(h->tensor);
  if (!t.ok()) {
    SetStatus(status, sluice::AddContext(t.status(), "TFE_TensorHandleResolve"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return *t;
}

TFE_TensorHandle* TFE_TensorHandleCopyToDevice(TFE_TensorHandle* h, TFE_Context* ctx, const char* device_name,
                                               TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return nullptr;
  }
  if (ctx == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_TensorHandleCopyToDevice", "ctx"));
    return nullptr;
  }
  if (!sluice::IsEagerCpuDevice(device_name == nullptr ? "" : device_name)) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          "TFE_TensorHandleCopyToDevice: no device '", device_name, "': this context has only ",
                          sluice::kEagerDeviceName)));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return new TFE_TensorHandle{h->tensor};  // Values are immutable: sharing is a copy.
}

TFE_TensorDebugInfo* TFE_TensorHandleTensorDebugInfo(TFE_TensorHandle* h, TF_Status* status) {
  if (h == nullptr) {
    SetStatus(status, sluice::InvalidHandle());
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  auto dims = h->tensor.shape().dim_sizes();
  return new TFE_TensorDebugInfo{std::vector<int64_t>(dims.begin(), dims.end())};
}

void TFE_DeleteTensorDebugInfo(TFE_TensorDebugInfo* debug_info) { delete debug_info; }

int TFE_TensorDebugInfoOnDeviceNumDims(TFE_TensorDebugInfo* debug_info) {
  return debug_info == nullptr ? -1 : static_cast<int>(debug_info->dims.size());
}

int64_t TFE_TensorDebugInfoOnDeviceDim(TFE_TensorDebugInfo* debug_info, int dim_index) {
  if (debug_info == nullptr || dim_index < 0 || dim_index >= static_cast<int>(debug_info->dims.size())) return -1;
  return debug_info->dims[dim_index];
}

}  // extern "C"
