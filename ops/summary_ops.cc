// TensorFlow's summary writers (summary_ops.cc of TensorFlow's kernels: the names, inputs and
// attrs tfjs-node's tensorBoard() and tf.summary use), writing TensorBoard event files.
//
//   w = SummaryWriter(shared_name="logdir:/tmp/run")     a handle naming the writer
//   CreateSummaryFileWriter(w, logdir, max_queue, flush_millis, filename_suffix)
//   WriteScalarSummary(w, step, tag, value)  WriteSummary(w, step, tensor, tag, metadata)
//   FlushSummaryWriter(w)  CloseSummaryWriter(w)
//
// The writer lives in its device's resources (framework/resource_mgr.h) from
// CreateSummaryFileWriter until CloseSummaryWriter or the device's end; kernels in
// kernels/summary_ops.cc, the file format in kernels/event_file_writer.h.
#include "absl/strings/str_cat.h"
#include "ops/op_registry.h"
#include "ops/shape_inference.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("SummaryWriter")
    .Output("writer: resource")
    .Attr("shared_name: string = ''")
    .Attr("container: string = ''")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    })
    .Doc("A handle to the summary writer (container, shared_name) of this device; an empty "
         "shared_name names the node's own writer.");

REGISTER_OP("CreateSummaryFileWriter")
    .Input("writer: resource")
    .Input("logdir: string")
    .Input("max_queue: int32")
    .Input("flush_millis: int32")
    .Input("filename_suffix: string")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Makes the writer, unless it exists: a new event file in logdir (created with its "
         "parents), events queued until max_queue are waiting or flush_millis have passed.");

REGISTER_OP("WriteScalarSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tag: string")
    .Input("value: T")
    .Attr(absl::StrCat("T: ", kNumericTypes))
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Queues an event with one simple_value (the scalar as float) under tag.");

REGISTER_OP("WriteSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tensor: T")
    .Input("tag: string")
    .Input("summary_metadata: string")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Queues an event holding the tensor under tag with the serialized SummaryMetadata.");

REGISTER_OP("WriteRawProtoSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tensor: string")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Queues one event whose summary merges the serialized Summary protos in tensor.");

REGISTER_OP("FlushSummaryWriter")
    .Input("writer: resource")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Writes every queued event to the file and flushes it.");

REGISTER_OP("CloseSummaryWriter")
    .Input("writer: resource")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Flushes and closes the writer and forgets it; a later CreateSummaryFileWriter with the "
         "same handle opens a new file.");

}  // namespace sluice
