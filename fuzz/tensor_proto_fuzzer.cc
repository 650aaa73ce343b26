// Bytes -> the tensor decoders: Sluice's TensorProto (Tensor::FromProto, FromWireProto), ONNX's
// TensorProto (TensorFromOnnx) and the RecvTensor wire form (rpc/tensor_coding.h). A decoded
// tensor must hold what its shape claims and encode back to something that decodes the same.
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "framework/tensor.h"
#include "frontend/onnx/onnx_tensor.h"
#include "proto/tensor.pb.h"
#include "rpc/tensor_coding.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tensor_proto_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Encodes `t` both ways and requires the same dtype, shape and bytes back.
void CheckRoundTrip(const sluice::Tensor& t) {
  if (!t.IsInitialized()) Fail("a decoded tensor is uninitialized", t.DebugString());
  for (int field = 0; field < 2; ++field) {
    // A compact wire tensor may fill 256 MiB from one value; written back one element per
    // repeated-field entry that took 13 s under ASan (a harness timeout, not a product one).
    if (field == 1 && t.NumElements() > (int64_t{1} << 20)) continue;
    sluice::TensorProto p;
    field ? t.AsProtoField(&p) : t.AsProtoTensorContent(&p);
    auto back = sluice::Tensor::FromProto(p);
    if (!back.ok()) Fail("a decoded tensor does not decode again", back.status().ToString());
    if (back->dtype() != t.dtype() || back->shape().dim_sizes() != t.shape().dim_sizes()) {
      Fail("a round trip changed the tensor", t.DebugString() + " -> " + back->DebugString());
    }
  }
}

void FuzzSluiceTensorProto(const uint8_t* data, size_t size) {
  sluice::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return;
  if (auto t = sluice::Tensor::FromWireProto(proto); t.ok()) CheckRoundTrip(*t);
  // FromProto (trusted files and graphs) may expand a compact tensor up to the tensor size
  // limit; skip protos that would make the fuzzer allocate more than it should.
  auto shape = sluice::TensorShape::FromProto(proto.tensor_shape());
  if (shape.ok() && shape->num_elements() <= (int64_t{1} << 20)) {
    if (auto t = sluice::Tensor::FromProto(proto); t.ok()) CheckRoundTrip(*t);
  }
}

void FuzzOnnxTensorProto(const uint8_t* data, size_t size) {
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return;
  auto t = sluice::TensorFromOnnx(proto);
  if (!t.ok()) return;
  onnx::TensorProto back;
  if (absl::Status s = sluice::TensorToOnnx(*t, "x", &back); !s.ok()) {
    Fail("TensorToOnnx of a decoded tensor", s.ToString());
  }
  auto again = sluice::TensorFromOnnx(back);
  if (!again.ok() || again->shape().dim_sizes() != t->shape().dim_sizes()) {
    Fail("an ONNX round trip changed the tensor", t->DebugString());
  }
}

void FuzzRecvTensorWire(const uint8_t* data, size_t size) {
  grpc::Slice slice(data, size);
  grpc::ByteBuffer buffer(&slice, 1);
  sluice::RecvTensorResponse response;
  if (sluice::DecodeRecvTensorResponse(buffer, &response).ok()) {
    // A dead tensor (an untaken branch) may come without a value; any other has one.
    if (response.tensor.IsInitialized() || !response.is_dead) CheckRoundTrip(response.tensor);
  }
  // The chunked decoder, given the same bytes twice (a second chunk).
  sluice::RecvTensorDecoder decoder;
  if (decoder.Add(buffer).ok() && !decoder.done()) decoder.Add(buffer).IgnoreError();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzSluiceTensorProto(data, size);
  FuzzOnnxTensorProto(data, size);
  FuzzRecvTensorWire(data, size);
  return 0;
}
