// TF_DataType sizes and TF_Tensor. Numbers: a sluice::Tensor, sharing its reference-counted
// buffer with the runtime's values, so they cross the API without copies (TF_TensorBitcastFrom
// shares one tensor's buffer with another). Strings: an array of TF_TString in TensorFlow's
// layout (TStringArray), copied to and from the runtime's std::string elements.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/checked_size.h"
#include "framework/resource_mgr.h"
#include "framework/status.h"

namespace sluice {
namespace {

constexpr std::align_val_t kStringAlignment{kTensorAlignment};

absl::StatusOr<TensorShape> ShapeFromDims(const int64_t* dims, int num_dims) {
  if (num_dims < 0) return absl::InvalidArgumentError(absl::StrCat("negative num_dims ", num_dims));
  if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("dims is null");
  return TensorShape::FromDims(absl::Span<const int64_t>(dims, num_dims));
}

// Numbers and bool, whose elements are their bytes (TF_DataTypeSize > 0).
bool HasFixedSize(DataType dt) { return DataTypeIsSupported(dt) && DataTypeSize(dt) > 0; }

// The size of one element in a TF_Tensor's data: TF_TString for strings (TF_DataTypeSize says
// 0 for them, as in TensorFlow), the type's own size otherwise.
size_t CApiElementSize(DataType dt) {
  return dt == DT_STRING ? sizeof(TF_TString) : DataTypeSize(dt);
}

// The number of bytes a TF_Tensor of `shape` and type `dt` needs, or an error when it does not
// fit in size_t.
absl::StatusOr<size_t> ByteSize(DataType dt, const TensorShape& shape) {
  size_t elem = CApiElementSize(dt);
  uint64_t n = static_cast<uint64_t>(shape.num_elements());
  if (elem != 0 && n > std::numeric_limits<size_t>::max() / elem) {
    return absl::InvalidArgumentError(absl::StrCat("tensor of shape ", shape.DebugString(),
                                                   " is too large"));
  }
  return static_cast<size_t>(n) * elem;
}

// A TF_STRING TF_Tensor over `strings`: its `tensor` carries the dtype and shape only.
TF_Tensor* NewStringTensor(const TensorShape& shape, std::unique_ptr<TStringArray> strings) {
  return new TF_Tensor{Tensor(DT_STRING, shape, nullptr), std::move(strings)};
}

// The bytes of element `i` of `array` (`bytes` long), checked against what a well-formed
// TF_TString can hold; OFFSET strings must point inside the array.
absl::StatusOr<absl::string_view> ReadTString(const TF_TString* array, size_t bytes, int64_t i) {
  const TF_TString& s = array[i];
  size_t size = TF_TString_GetSize(&s);
  const char* data = nullptr;
  switch (TF_TString_GetType(&s)) {
    case TF_TSTR_SMALL:
      if (size > static_cast<size_t>(TF_TString_SmallCapacity)) {
        return absl::InvalidArgumentError(
            absl::StrCat("string ", i, " is SMALL with size ", size, ", over the ",
                         static_cast<int>(TF_TString_SmallCapacity), " bytes it can hold"));
      }
      data = s.u.smll.str;
      break;
    case TF_TSTR_LARGE:
      if (size > s.u.large.cap) {
        return absl::InvalidArgumentError(absl::StrCat("string ", i, " is LARGE with size ",
                                                       size, " over its capacity ",
                                                       s.u.large.cap));
      }
      data = s.u.large.ptr;
      break;
    case TF_TSTR_VIEW:
      data = s.u.view.ptr;
      break;
    case TF_TSTR_OFFSET: {
      // Offsets count from the element itself; the bytes must lie within the tensor's data.
      uint64_t begin = static_cast<uint64_t>(i) * sizeof(TF_TString) + s.u.offset.offset;
      uint64_t end;
      if (!CheckedAdd(begin, static_cast<uint64_t>(size), &end) || end > bytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "string ", i, " is an OFFSET string of ", size, " bytes at offset ", s.u.offset.offset,
            ", outside the tensor's ", bytes, " bytes"));
      }
      data = reinterpret_cast<const char*>(array) + begin;
      break;
    }
    default:
      break;
  }
  if (data == nullptr && size > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("string ", i, " has ", size, " bytes but a null data pointer"));
  }
  return absl::string_view(data, size);
}

// Copies the TF_TStrings of a TF_STRING tensor into a DT_STRING runtime tensor.
absl::StatusOr<Tensor> StringsToRuntime(const TF_Tensor& t) {
  const int64_t n = t.tensor.NumElements();
  const TF_TString* array = t.strings->data();
  const size_t bytes = t.strings->bytes();
  // TF_NewTensor and TF_AllocateTensor checked this; it is what makes the reads below safe.
  if (static_cast<uint64_t>(n) > bytes / sizeof(TF_TString) || (n > 0 && array == nullptr)) {
    return absl::InternalError(absl::StrCat("a TF_STRING tensor of ", n, " elements has only ",
                                            bytes, " bytes of TF_TString"));
  }
  std::vector<absl::string_view> views(static_cast<size_t>(n));
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    SL_ASSIGN_OR_RETURN(views[i], ReadTString(array, bytes, i));
    if (!CheckedAdd(total, static_cast<uint64_t>(views[i].size()), &total) ||
        total > kMaxTensorBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the strings of a TF_STRING tensor of shape ", t.tensor.shape().DebugString(),
                       " add up to more than ", kMaxTensorBytes, " bytes"));
    }
  }
  SL_ASSIGN_OR_RETURN(Tensor value, Tensor::Allocate(DT_STRING, t.tensor.shape()));
  absl::Span<tstring> out = value.flat<tstring>();
  for (int64_t i = 0; i < n; ++i) out[i].assign(views[i].data(), views[i].size());
  return value;
}

// Copies the elements of a DT_STRING runtime tensor into new, library-owned TF_TStrings.
absl::StatusOr<TF_Tensor*> StringsFromRuntime(const Tensor& value) {
  const int64_t n = value.NumElements();
  if (n > 0 && value.raw_data() == nullptr) {
    return absl::FailedPreconditionError("a string tensor without a value cannot cross the C API");
  }
  std::unique_ptr<TStringArray> strings = TStringArray::Allocate(n);
  if (strings == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory for the TF_TStrings of a string tensor of shape ",
        value.shape().DebugString()));
  }
  absl::Span<const tstring> in = value.flat<const tstring>();
  for (int64_t i = 0; i < n; ++i) {
    TF_TString* s = &strings->data()[i];
    char* bytes = TF_TString_ResizeUninitialized(s, in[i].size());
    if (bytes == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of memory copying string ", i, " (",
                                                       in[i].size(), " bytes) of a tensor"));
    }
    if (!in[i].empty()) std::memcpy(bytes, in[i].data(), in[i].size());
  }
  return NewStringTensor(value.shape(), std::move(strings));
}

}  // namespace

std::unique_ptr<TStringArray> TStringArray::Allocate(int64_t num_elements) {
  if (num_elements < 0 ||
      static_cast<uint64_t>(num_elements) > kMaxTensorBytes / sizeof(TF_TString)) {
    return nullptr;
  }
  std::unique_ptr<TStringArray> array(new TStringArray);
  array->owns_memory_ = true;
  if (num_elements == 0) return array;
  size_t bytes = static_cast<size_t>(num_elements) * sizeof(TF_TString);
  void* data = ::operator new(bytes, kStringAlignment, std::nothrow);
  if (data == nullptr) return nullptr;
  array->data_ = static_cast<TF_TString*>(data);
  array->bytes_ = bytes;
  array->num_owned_ = num_elements;
  for (int64_t i = 0; i < num_elements; ++i) TF_TString_Init(&array->data_[i]);
  return array;
}

std::unique_ptr<TStringArray> TStringArray::Wrap(void* data, size_t len, Deallocator deallocator,
                                                 void* deallocator_arg) {
  std::unique_ptr<TStringArray> array(new TStringArray);
  array->data_ = static_cast<TF_TString*>(data);
  array->bytes_ = len;
  array->deallocator_ = deallocator;
  array->deallocator_arg_ = deallocator_arg;
  return array;
}

TStringArray::~TStringArray() {
  if (!owns_memory_) {
    if (deallocator_ != nullptr) deallocator_(data_, bytes_, deallocator_arg_);
    return;
  }
  for (int64_t i = 0; i < num_owned_; ++i) TF_TString_Dealloc(&data_[i]);
  if (data_ != nullptr) ::operator delete(data_, kStringAlignment);
}

bool CanCrossCApi(DataType dt) { return dt == DT_STRING || HasFixedSize(dt); }

absl::StatusOr<Tensor> ToRuntimeTensor(const TF_Tensor& t) {
  if (t.tensor.dtype() == DT_RESOURCE) {
    // Only NewCApiTensor makes these: the bytes are a serialized ResourceHandleProto.
    const auto& buf = t.tensor.buffer();
    ResourceHandleProto proto;
    if (buf == nullptr || !ParseFromBytes(buf->data(), buf->size(), &proto)) {
      return absl::InvalidArgumentError("a TF_RESOURCE tensor does not hold a serialized ResourceHandleProto");
    }
    return ResourceHandleTensorFromProto(proto);
  }
  if (t.strings == nullptr) return t.tensor;  // Shares the buffer: no copy.
  return StringsToRuntime(t);
}

absl::StatusOr<TF_Tensor*> NewCApiTensor(Tensor value) {
  if (value.dtype() == DT_RESOURCE && value.dims() == 0) {
    // As TensorFlow hands a resource to clients: a scalar whose bytes are the serialized
    // ResourceHandleProto (TF_TensorByteSize says how many).
    absl::StatusOr<ResourceHandle> handle = ResourceHandleFromTensor(value);
    if (handle.ok()) {
      const std::string bytes = ResourceHandleToProto(*handle).SerializeAsString();
      auto* copy = new char[bytes.size() + 1];
      std::memcpy(copy, bytes.data(), bytes.size());
      return new TF_Tensor{Tensor(DT_RESOURCE, TensorShape({}),
                                  TensorBuffer::Wrap(copy, bytes.size(),
                                                     [](void* p, size_t) { delete[] static_cast<char*>(p); }))};
    }
  }
  if (!CanCrossCApi(value.dtype())) {
    return absl::UnimplementedError(absl::StrCat("a ", DataTypeString(value.dtype()),
                                                 " tensor cannot cross the C API"));
  }
  if (value.dtype() == DT_STRING) return StringsFromRuntime(value);
  return new TF_Tensor{std::move(value)};  // Shares the buffer: no copy.
}

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
  if (dt == sluice::DT_STRING) {
    // The elements are read in place, as TF_TString structs: they must be aligned as such.
    if (reinterpret_cast<uintptr_t>(data) % alignof(TF_TString) != 0) return nullptr;
    return sluice::NewStringTensor(
        *shape, sluice::TStringArray::Wrap(data, len, deallocator, deallocator_arg));
  }
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
  if (dt == sluice::DT_STRING) {
    auto strings = sluice::TStringArray::Allocate(shape->num_elements());
    if (strings == nullptr) return nullptr;
    return sluice::NewStringTensor(*shape, std::move(strings));
  }
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
  if (t == nullptr) return 0;
  if (t->strings != nullptr) return t->strings->bytes();
  if (t->tensor.dtype() == sluice::DT_RESOURCE) return t->tensor.buffer() == nullptr ? 0 : t->tensor.buffer()->size();
  return t->tensor.AllocatedBytes();
}

void* TF_TensorData(const TF_Tensor* t) {
  if (t == nullptr) return nullptr;
  return t->strings != nullptr ? static_cast<void*>(t->strings->data()) : t->tensor.raw_data();
}

int64_t TF_TensorElementCount(const TF_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.NumElements();
}

TF_Tensor* TF_TensorMaybeMove(TF_Tensor* tensor) {
  if (tensor == nullptr) return nullptr;
  // String elements are never shared (the runtime gets copies), so they always move.
  if (tensor->strings == nullptr && !tensor->tensor.RefCountIsOne()) return nullptr;
  auto* moved = new TF_Tensor{std::move(tensor->tensor), std::move(tensor->strings)};
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
  // As in TensorFlow, only types of a fixed size (TF_DataTypeSize > 0): not TF_STRING, whose
  // elements own memory.
  if (!sluice::HasFixedSize(from_dt) || !sluice::HasFixedSize(to_dt)) {
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
  to->strings.reset();  // `to` may have been a string tensor: its elements go as deletion would.
  sluice::SetStatus(status, absl::OkStatus());
}

bool TF_TensorIsAligned(const TF_Tensor* t) {
  if (t == nullptr) return false;
  return reinterpret_cast<uintptr_t>(TF_TensorData(t)) % sluice::kTensorAlignment == 0;
}

}  // extern "C"
