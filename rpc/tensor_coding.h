// The wire form of a RecvTensor answer, written without copying the tensor: a small header
// slice (the RecvTensorResponse and TensorProto fields up to tensor_content's length), then a
// slice that points at the tensor's own buffer and holds a reference to it, then the trailing
// fields. The bytes are exactly a serialized rpc::RecvTensorResponse, so protobuf's parser
// reads them too; the decoder here also reads tensors past protobuf's 2 GiB message limit and
// copies the tensor's bytes once, into an aligned buffer.
//
// A tensor whose content exceeds one answer's share (gRPC messages stop at 4 GiB) goes in
// chunks: each answer carries the dtype and shape, a piece of tensor_content, and where the
// piece starts in how many bytes; the receiver asks for each next piece.
//
//   grpc::ByteBuffer wire = EncodeRecvTensorResponse(response);      // the first chunk
//   RecvTensorDecoder decoder;
//   SL_RETURN_IF_ERROR(decoder.Add(wire));
//   while (!decoder.done()) {   // ask for the chunk at decoder.received_bytes(), then
//     SL_RETURN_IF_ERROR(decoder.Add(EncodeRecvTensorResponse(response, decoder.received_bytes())));
//   }
//   Tensor t = decoder.response().tensor;
#ifndef SLUICE_RPC_TENSOR_CODING_H_
#define SLUICE_RPC_TENSOR_CODING_H_

#include <grpcpp/support/byte_buffer.h>

#include <memory>

#include "absl/status/status.h"
#include "proto/worker.pb.h"
#include "worker/worker_interface.h"

namespace sluice {

// Tensors smaller than this are copied into the header slice: below it a separate slice and
// its reference cost more than the copy.
inline constexpr size_t kZeroCopyMinBytes = 4096;

// Content bytes per answer: well under gRPC's 4 GiB message limit (a 32-bit length prefix),
// and big enough that the round trip for each next chunk costs nothing next to its transfer.
inline constexpr uint64_t kMaxRecvTensorChunkBytes = uint64_t{1} << 30;

// The answer holding content bytes [offset, offset + max_chunk_bytes) of response.tensor (all
// of a tensor without flat content, such as strings).
grpc::ByteBuffer EncodeRecvTensorResponse(const RecvTensorResponse& response, uint64_t offset = 0,
                                          uint64_t max_chunk_bytes = kMaxRecvTensorChunkBytes);

// A same-host answer (rpc/same_host_transfer.h): the tensor's dtype, shape and size, and
// where its bytes lie in this process's memory. `response.tensor` must stay where it is until
// the lease is released.
grpc::ByteBuffer EncodeSameHostAnswer(const RecvTensorResponse& response, uint64_t lease);
// The same for a receiver that takes the bytes on a sealed stream (rpc/sealed_stream.h).
grpc::ByteBuffer EncodeSealedStreamAnswer(const RecvTensorResponse& response, uint64_t lease,
                                          const rpc::SealedStream& stream);

// Assembles a tensor from one answer, or from the chunks of one, or from a same-host answer
// and the caller's copy of the bytes.
class RecvTensorDecoder {
 public:
  // INVALID_ARGUMENT for bytes that are not a RecvTensorResponse (with a tensor of a supported
  // dtype whose content matches its shape) or not the expected next chunk; RESOURCE_EXHAUSTED
  // when the tensor does not fit in memory.
  absl::Status Add(const grpc::ByteBuffer& buffer);
  bool done() const { return started_ && received_ == total_; }
  // Where the next chunk starts.
  uint64_t received_bytes() const { return received_; }
  // Complete once done().
  RecvTensorResponse& response() { return response_; }

  // Non-null after a same-host answer: the caller copies the tensor's bytes from there into
  // response().tensor (allocated, of the right size) and then calls SetReceivedFromSameHost.
  const rpc::SameHostSource* same_host_source() const {
    return same_host_ ? &same_host_source_ : nullptr;
  }
  void SetReceivedFromSameHost();
  // The same after reading the bytes from a sealed stream: bools are made 0 or 1, as for
  // bytes from the network.
  void SetReceivedFromStream();

 private:
  bool started_ = false;
  bool same_host_ = false;
  rpc::SameHostSource same_host_source_;
  uint64_t received_ = 0, total_ = 0;
  std::shared_ptr<TensorBuffer> content_;
  RecvTensorResponse response_;
};

// One answer holding the whole tensor.
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& buffer, RecvTensorResponse* response);

}  // namespace sluice

#endif  // SLUICE_RPC_TENSOR_CODING_H_
