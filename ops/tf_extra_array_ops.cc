// More of TensorFlow's array and math ops, with TensorFlow's names, inputs and attrs (written
// for Sluice from TensorFlow's documented signatures), for clients such as tfjs-node that run
// each of their kernels as one TensorFlow op: the unsorted segment reductions, ReverseV2,
// SpaceToBatchND, BatchToSpaceND, LinSpace, Unique, UniqueV2, SparseToDense, Bincount,
// TensorScatterUpdate, Cumprod and Einsum. Kernels: kernels/tf_extra_array_ops.cc (Cumprod in
// cumsum_op.cc, Einsum in einsum_op.cc).
#include "absl/strings/str_cat.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

// Output 0 is a vector whose length is the scalar integer input `i` when that is a known
// constant (LinSpace's num, Bincount's size), else a vector of unknown length.
absl::Status VectorOfInputLength(InferenceContext* c, int i) {
  int64_t n = -1;
  if (const Tensor* t = c->input_tensor(i); t != nullptr && t->NumElements() == 1) {
    if (t->dtype() == DT_INT32) n = t->data<int32_t>()[0];
    if (t->dtype() == DT_INT64) n = t->data<int64_t>()[0];
    // A negative value is the kernel's error to report; the shape stays unknown.
    if (n < 0) n = -1;
  }
  int64_t dims[] = {n};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// The unsorted segment reductions: [num_segments] + data.shape[rank(segment_ids):].
absl::Status UnsortedSegmentShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& ids = c->input(1);
  if (data.unknown_rank() || ids.unknown_rank()) {
    // Copied from one object, not a temporary: GCC flags copying a PartialShape() temporary's
    // unused inline storage as uninitialized (as ops/tf_array_ops.cc notes).
    static const PartialShape* const unknown = new PartialShape();
    c->set_output(0, *unknown);
    return absl::OkStatus();
  }
  if (ids.rank() > data.rank()) {
    return c->Error(absl::StrCat("segment_ids of rank ", ids.rank(), " is longer than data's shape ",
                                 data.DebugString()));
  }
  int64_t num = -1;
  if (const Tensor* t = c->input_tensor(2); t != nullptr && t->NumElements() == 1) {
    num = t->dtype() == DT_INT32 ? t->data<int32_t>()[0] : t->data<int64_t>()[0];
    if (num < 0) return c->Error(absl::StrCat("num_segments ", num, " is negative"));
  }
  std::vector<int64_t> dims = {num};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// Registers one unsorted segment reduction; `types` is TensorFlow's set for it.
void RegisterUnsortedSegment(const char* name, const char* types) {
  OpRegistry::Global()->Register(OpDefBuilder(name)
                                     .Input("data: T")
                                     .Input("segment_ids: Tindices")
                                     .Input("num_segments: Tnumsegments")
                                     .Output("output: T")
                                     .Attr(absl::StrCat("T: ", types))
                                     .Attr("Tindices: {int16, int32, int64}")
                                     .Attr("Tnumsegments: {int32, int64} = DT_INT32")
                                     .SetShapeFn(UnsortedSegmentShape));
}

[[maybe_unused]] const bool kUnsortedSegmentsRegistered = [] {
  RegisterUnsortedSegment("UnsortedSegmentSum", "numbertype");
  RegisterUnsortedSegment("UnsortedSegmentProd", "numbertype");
  RegisterUnsortedSegment("UnsortedSegmentMax", "realnumbertype");
  RegisterUnsortedSegment("UnsortedSegmentMin", "realnumbertype");
  return true;
}();

}  // namespace

REGISTER_OP("ReverseV2")
    .Input("tensor: T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, float, double, "
          "complex64, complex128, string}")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("SpaceToBatchND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tblock_shape: {int32, int64} = DT_INT32")
    .Attr("Tpaddings: {int32, int64} = DT_INT32");

REGISTER_OP("BatchToSpaceND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("crops: Tcrops")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tblock_shape: {int32, int64} = DT_INT32")
    .Attr("Tcrops: {int32, int64} = DT_INT32");

REGISTER_OP("LinSpace")
    .Input("start: T")
    .Input("stop: T")
    .Input("num: Tidx")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) { return VectorOfInputLength(c, 2); });

REGISTER_OP("Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32");

REGISTER_OP("UniqueV2")
    .Input("x: T")
    .Input("axis: Taxis")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("Taxis: {int32, int64} = DT_INT64")
    .Attr("out_idx: {int32, int64} = DT_INT32");

REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}");

REGISTER_OP("Bincount")
    .Input("arr: int32")
    .Input("size: int32")
    .Input("weights: T")
    .Output("bins: T")
    .Attr("T: {int32, int64, float, double}")
    .SetShapeFn([](InferenceContext* c) { return VectorOfInputLength(c, 1); });

REGISTER_OP("TensorScatterUpdate")
    .Input("tensor: T")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64, uint16}")
    .Attr("bad_indices_policy: string = ''")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Cumprod")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Einsum")
    .Input("inputs: N * T")
    .Output("output: T")
    .Attr("equation: string")
    .Attr("N: int >= 1")
    .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}");

}  // namespace sluice
