// TF_DataType sizes and TF_Tensor: a sluice::Tensor, sharing its reference-counted buffer with
// the runtime's values, so tensors cross the API without copies (TF_TensorBitcastFrom shares
// one tensor's buffer with another).
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"

namespace sluice {
namespace {

absl::StatusOr<TensorShape> ShapeFromDims(const int64_t* dims, int num_dims) {
  if (num_dims < 0) return absl::InvalidArgumentError(absl::StrCat("negative num_dims ", num_dims));
  if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("dims is null");
  return TensorShape::FromDims(absl::Span<const int64_t>(dims, num_dims));
}

// The number of bytes a tensor of `shape` and fixed-size type `dt` needs, or an error when it
// does not fit in size_t.
absl::StatusOr<size_t> ByteSize(DataType dt, const TensorShape& shape) {
  size_t elem = DataTypeSize(dt);
  uint64_t n = static_cast<uint64_t>(shape.num_elements());
  if (elem != 0 && n > std::numeric_limits<size_t>::max() / elem) {
    return absl::InvalidArgumentError(absl::StrCat("tensor of shape ", shape.DebugString(),
                                                   " is too large"));
  }
  return static_cast<size_t>(n) * elem;
}

}  // namespace

bool CanCrossCApi(DataType dt) { return DataTypeIsSupported(dt) && DataTypeSize(dt) > 0; }

}  // namespace sluice

using sluice::DataType;

extern "C" {

size_t TF_DataTypeSize(TF_DataType dt) {
  return sluice::DataTypeSize(static_cast<DataType>(dt));
}

TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data,
                        size_t len, void (*deallocator)(void* data, size_t len, void* arg),
                        void* deallocator_arg) {
  DataType dt = static_cast<DataType>(dtype);
  if (!sluice::CanCrossCApi(dt)) return nullptr;
  auto shape = sluice::ShapeFromDims(dims, num_dims);
  if (!shape.ok()) return nullptr;
  auto bytes = sluice::ByteSize(dt, *shape);
  if (!bytes.ok() || len < *bytes || (data == nullptr && *bytes > 0)) return nullptr;
  auto buffer = sluice::TensorBuffer::Wrap(
      data, len, [deallocator, deallocator_arg](void* d, size_t n) {
        if (deallocator != nullptr) deallocator(d, n, deallocator_arg);
      });
  return new TF_Tensor{sluice::Tensor(dt, *shape, std::move(buffer))};
}

TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len) {
  DataType dt = static_cast<DataType>(dtype);
  if (!sluice::CanCrossCApi(dt)) return nullptr;
  auto shape = sluice::ShapeFromDims(dims, num_dims);
  if (!shape.ok()) return nullptr;
  auto bytes = sluice::ByteSize(dt, *shape);
  if (!bytes.ok() || len != *bytes) return nullptr;
  auto tensor = sluice::Tensor::Allocate(dt, *shape);
  if (!tensor.ok()) return nullptr;
  return new TF_Tensor{*std::move(tensor)};
}

void TF_DeleteTensor(TF_Tensor* t) { delete t; }

TF_DataType TF_TensorType(const TF_Tensor* t) {
  return t == nullptr ? static_cast<TF_DataType>(0) : static_cast<TF_DataType>(t->tensor.dtype());
}

int TF_NumDims(const TF_Tensor* t) { return t == nullptr ? 0 : t->tensor.dims(); }

int64_t TF_Dim(const TF_Tensor* t, int dim_index) {
  if (t == nullptr || dim_index < 0 || dim_index >= t->tensor.dims()) return -1;
  return t->tensor.dim_size(dim_index);
}

size_t TF_TensorByteSize(const TF_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.AllocatedBytes();
}

void* TF_TensorData(const TF_Tensor* t) { return t == nullptr ? nullptr : t->tensor.raw_data(); }

int64_t TF_TensorElementCount(const TF_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.NumElements();
}

TF_Tensor* TF_TensorMaybeMove(TF_Tensor* tensor) {
  if (tensor == nullptr || !tensor->tensor.RefCountIsOne()) return nullptr;
  auto* moved = new TF_Tensor{std::move(tensor->tensor)};
  delete tensor;
  return moved;
}

void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type, TF_Tensor* to,
                          const int64_t* new_dims, int num_new_dims, TF_Status* status) {
  constexpr char kFn[] = "TF_TensorBitcastFrom";
  if (from == nullptr || to == nullptr) {
    sluice::SetStatus(status, sluice::NullArgument(kFn, from == nullptr ? "from" : "to"));
    return;
  }
  DataType from_dt = from->tensor.dtype();
  DataType to_dt = static_cast<DataType>(type);
  if (!sluice::CanCrossCApi(from_dt) || !sluice::CanCrossCApi(to_dt)) {
    sluice::SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                  kFn, ": both types need a fixed size, but it is from ",
                                  sluice::DataTypeString(from_dt), " to ",
                                  sluice::DataTypeString(to_dt))));
    return;
  }
  auto shape = sluice::ShapeFromDims(new_dims, num_new_dims);
  if (!shape.ok()) {
    sluice::SetStatus(status, sluice::AddContext(shape.status(), kFn));
    return;
  }
  auto bytes = sluice::ByteSize(to_dt, *shape);
  size_t from_bytes = from->tensor.AllocatedBytes();
  if (!bytes.ok() || *bytes != from_bytes) {
    sluice::SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                  kFn, ": ", sluice::DataTypeString(to_dt), " of shape ",
                                  shape->DebugString(), " does not cover exactly the ",
                                  from_bytes, " bytes of ", sluice::DataTypeString(from_dt),
                                  " of shape ", from->tensor.shape().DebugString())));
    return;
  }
  to->tensor = sluice::Tensor(to_dt, *shape, from->tensor.buffer());
  sluice::SetStatus(status, absl::OkStatus());
}

bool TF_TensorIsAligned(const TF_Tensor* t) {
  if (t == nullptr) return false;
  return reinterpret_cast<uintptr_t>(t->tensor.raw_data()) % sluice::kTensorAlignment == 0;
}

}  // extern "C"
