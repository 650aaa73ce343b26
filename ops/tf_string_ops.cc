// TensorFlow's string and summary ops that its language bindings' tests use, with TensorFlow's
// signatures (written for Sluice from TensorFlow's documentation).
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("StringToHashBucketStrong")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Attr("key: list(int)")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("SipHash-2-4 of each string under the 128-bit key (key[0], key[1]), modulo num_buckets.");

REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("FarmHash's Fingerprint64 of each string, modulo num_buckets (TensorFlow's buckets).");

REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .SetShapeFn(shape_fn::Unchanged);

// Defined so that graphs which log tensors load and round-trip; Sluice has no summary writer,
// so running one is an error (no kernel).
REGISTER_OP("TensorSummary")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("T: type")
    .Attr("description: string = ''")
    .Attr("labels: list(string) = []")
    .Attr("display_name: string = ''")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    });

}  // namespace sluice
