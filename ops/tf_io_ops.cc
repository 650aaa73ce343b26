// TensorFlow's checkpoint ops (io_ops.cc's V2 savers), with TensorFlow's names, inputs and
// attrs: what a SavedModel's saver runs to restore its variables, and what tf.compat.v1's Saver
// and TensorFlow 2's tf.train.Checkpoint put in graphs to save them. The format is TensorFlow's
// tensor bundle (kernels/tensor_bundle.h).
#include "ops/op_registry.h"
#include "ops/shape_inference.h"

namespace sluice {

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext*) { return absl::OkStatus(); })  // Known only at run time.
    .Doc("The tensors saved under tensor_names in the checkpoint at prefix, which must have the "
         "types in dtypes; shape_and_slices must be empty strings (whole tensors).");

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Writes the tensors under tensor_names as a one-shard checkpoint at prefix.");

REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Merges the checkpoints into one at destination_prefix (their data shards are moved); "
         "with delete_old_dirs, the sources' directories are removed when left empty.");

REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    })
    .Doc("basename-SSSSS-of-NNNNN.");

REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    })
    .Doc("basename-\?\?\?\?\?-of-NNNNN.");

}  // namespace sluice
