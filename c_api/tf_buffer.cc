// TF_Buffer: serialized protos in and out of the C API, and the two conversions every proto
// crossing it goes through.
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"

namespace sluice {
namespace {

void FreeBufferData(void* data, size_t) { std::free(data); }

}  // namespace

absl::Status MessageToBuffer(const google::protobuf::MessageLite& message, TF_Buffer* out) {
  if (out->data != nullptr) {
    return absl::InvalidArgumentError("the output TF_Buffer must be empty (data == NULL)");
  }
  size_t size = message.ByteSizeLong();
  void* data = std::malloc(size > 0 ? size : 1);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory serializing ", size, " bytes"));
  }
  if (!message.SerializeToArray(data, static_cast<int>(size))) {
    std::free(data);
    return absl::InternalError(absl::StrCat("failed to serialize a ", message.GetTypeName()));
  }
  out->data = data;
  out->length = size;
  out->data_deallocator = FreeBufferData;
  return absl::OkStatus();
}

bool ParseFromBytes(const void* data, size_t length, google::protobuf::MessageLite* message) {
  if (data == nullptr && length > 0) return false;
  // protobuf takes an int length.
  if (length > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  return message->ParseFromArray(data, static_cast<int>(length));
}

}  // namespace sluice

extern "C" {

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  auto* buf = new TF_Buffer{nullptr, 0, nullptr};
  if (proto == nullptr || proto_len == 0) return buf;
  void* copy = std::malloc(proto_len);
  if (copy == nullptr) return buf;
  std::memcpy(copy, proto, proto_len);
  buf->data = copy;
  buf->length = proto_len;
  buf->data_deallocator = sluice::FreeBufferData;
  return buf;
}

TF_Buffer* TF_NewBuffer(void) { return new TF_Buffer{nullptr, 0, nullptr}; }

void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->data_deallocator != nullptr) {
    buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
  }
  delete buffer;
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) {
  return buffer == nullptr ? TF_Buffer{nullptr, 0, nullptr} : *buffer;
}

}  // extern "C"
