#include "ops/shape_inference.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/status.h"

namespace sluice {

InferenceContext::InferenceContext(const NodeDef& node, const OpDef& op_def,
                                   std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors, int num_outputs)
    : node_(node),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      outputs_(num_outputs) {
  input_tensors_.resize(inputs_.size(), nullptr);
}

absl::Status InferenceContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node_.name(), "' (op '", node_.op(), "'): ", message));
}

absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b) {
  // The unknown input itself, not a PartialShape() temporary: moving a fresh temporary into the
  // StatusOr copies InlinedVector's unused inline storage, which GCC flags as maybe uninitialized.
  if (a.unknown_rank()) return a;
  if (b.unknown_rank()) return b;
  int rank = std::max(a.rank(), b.rank());
  DimVector dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da < 0) {
      dims[i] = db;  // Unknown vs known: the known dim (or it fails at run time).
    } else if (db < 0) {
      dims[i] = da;
    } else if (da == db) {
      dims[i] = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("incompatible shapes for broadcasting: ",
                                                     a.DebugString(), " and ", b.DebugString()));
    }
  }
  return PartialShape(dims);
}

namespace shape_fn {

absl::Status Unknown(InferenceContext* c) {
  const PartialShape unknown;  // Copied, not a temporary per output: see BroadcastShapes.
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, unknown);
  return absl::OkStatus();
}

absl::Status Unchanged(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status BroadcastBinary(InferenceContext* c) {
  auto s = BroadcastShapes(c->input(0), c->input(1));
  if (!s.ok()) return c->Error(s.status().message());
  c->set_output(0, *s);
  return absl::OkStatus();
}

absl::Status BroadcastAll(InferenceContext* c) {
  if (c->num_inputs() == 0) return Unknown(c);
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    auto s = BroadcastShapes(out, c->input(i));
    if (!s.ok()) return c->Error(s.status().message());
    out = *std::move(s);
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

absl::Status FromShapeAttr(InferenceContext* c) {
  PartialShape shape;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

}  // namespace shape_fn
}  // namespace sluice
