// The wire form of a RecvTensor answer, written without copying the tensor: a small header
// slice (the RecvTensorResponse and TensorProto fields up to tensor_content's length), then a
// slice that points at the tensor's own buffer and holds a reference to it, then the trailing
// fields. The bytes are exactly a serialized rpc::RecvTensorResponse, so protobuf's parser
// reads them too; the decoder here also reads tensors past protobuf's 2 GiB message limit and
// copies the tensor's bytes once, into an aligned buffer.
//
//   grpc::ByteBuffer wire = EncodeRecvTensorResponse(response);
//   RecvTensorResponse back;
//   SL_RETURN_IF_ERROR(DecodeRecvTensorResponse(wire, &back));
#ifndef SLUICE_WORKER_TENSOR_CODING_H_
#define SLUICE_WORKER_TENSOR_CODING_H_

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "worker/worker_interface.h"

namespace sluice {

// Tensors smaller than this are copied into the header slice: below it a separate slice and
// its reference cost more than the copy.
inline constexpr size_t kZeroCopyMinBytes = 4096;

grpc::ByteBuffer EncodeRecvTensorResponse(const RecvTensorResponse& response);

// INVALID_ARGUMENT for bytes that are not a RecvTensorResponse (with a tensor of a supported
// dtype whose content matches its shape); RESOURCE_EXHAUSTED when the tensor does not fit in
// memory.
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, RecvTensorResponse* response);

}  // namespace sluice

#endif  // SLUICE_WORKER_TENSOR_CODING_H_
