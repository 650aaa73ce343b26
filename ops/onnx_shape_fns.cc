#include "ops/onnx_shape_fns.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "framework/checked_size.h"
#include "framework/status.h"

namespace sluice {
namespace onnx_shape_fn {
namespace {

// The values of a constant 1-D (or scalar) int32/int64 input, if known.
std::optional<std::vector<int64_t>> Ints(const Tensor* t) {
  if (t == nullptr || t->dims() > 1) return std::nullopt;
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t->NumElements(); ++i) {
    if (t->dtype() == DT_INT64) {
      v.push_back(t->flat<int64_t>()[i]);
    } else if (t->dtype() == DT_INT32) {
      v.push_back(t->flat<int32_t>()[i]);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

// `axis` in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int> Axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Input `i` when the node has it (an optional ONNX input is a list of zero or one).
const Tensor* OptionalInput(InferenceContext* c, int i) { return i < c->num_inputs() ? c->input_tensor(i) : nullptr; }

int64_t IntAttr(InferenceContext* c, const char* name, int64_t fallback) {
  int64_t v = fallback;
  if (!GetNodeAttr(c->attrs(), name, &v).ok()) return fallback;
  return v;
}

// How many tensors a list(type) attr says an optional input list holds.
int ListSize(InferenceContext* c, const char* name) {
  const AttrValue* a = c->attrs().Find(name);
  return a == nullptr ? 0 : a->list().type_size();
}

// Output 0 of `rank` unknown dims (of unknown rank when `rank` is negative).
void SetUnknownRank(InferenceContext* c, int rank) {
  if (rank < 0) return;  // Outputs start unknown.
  c->set_output(0, PartialShape(std::vector<int64_t>(rank, -1)));
}

}  // namespace

absl::Status Unsqueeze(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto axes = Ints(c->input_tensor(1));
  if (in.unknown_rank() || !axes) return absl::OkStatus();
  const int rank = in.rank() + static_cast<int>(axes->size());
  std::vector<bool> added(rank, false);
  for (int64_t a : *axes) {
    auto axis = Axis(a, rank);
    if (!axis || added[*axis]) return c->Error("Unsqueeze: bad axes");
    added[*axis] = true;
  }
  std::vector<int64_t> dims;
  int next = 0;
  for (int i = 0; i < rank; ++i) dims.push_back(added[i] ? 1 : in.dim(next++));
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status Squeeze(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) return absl::OkStatus();
  std::vector<bool> drop(in.rank(), false);
  if (ListSize(c, "Taxes") > 0) {
    auto axes = Ints(c->input_tensor(1));
    if (!axes) return absl::OkStatus();
    for (int64_t a : *axes) {
      auto axis = Axis(a, in.rank());
      if (!axis || in.dim(*axis) > 1 || in.dim(*axis) == 0) return c->Error("Squeeze: bad axes");
      drop[*axis] = true;
    }
  } else {
    for (int i = 0; i < in.rank(); ++i) {
      if (in.dim(i) < 0) return absl::OkStatus();  // Which dims go is not known.
      drop[i] = in.dim(i) == 1;
    }
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (!drop[i]) dims.push_back(in.dim(i));
  }
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status Concat(InferenceContext* c) {
  int rank = -1;
  for (int i = 0; i < c->num_inputs(); ++i) {
    if (c->input(i).unknown_rank()) continue;
    if (rank >= 0 && c->input(i).rank() != rank) return c->Error("Concat: inputs of different ranks");
    rank = c->input(i).rank();
  }
  if (rank < 0) return absl::OkStatus();
  auto axis = Axis(IntAttr(c, "axis", 0), rank);
  if (!axis) return c->Error("Concat: bad axis");
  std::vector<int64_t> dims(rank, -1);
  int64_t total = 0;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& s = c->input(i);
    if (s.unknown_rank() || s.dim(*axis) < 0 || total < 0 || !CheckedAdd(total, s.dim(*axis), &total)) total = -1;
    for (int d = 0; d < rank && !s.unknown_rank(); ++d) {
      if (d != *axis && s.dim(d) >= 0) dims[d] = s.dim(d);
    }
  }
  dims[*axis] = total;
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status Slice(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) return absl::OkStatus();
  const int has_axes = ListSize(c, "Taxes"), has_steps = ListSize(c, "Tsteps");
  auto starts = Ints(c->input_tensor(1)), ends = Ints(c->input_tensor(2));
  std::optional<std::vector<int64_t>> axes, steps;
  if (has_axes) axes = Ints(OptionalInput(c, 3));
  if (has_steps) steps = Ints(OptionalInput(c, 3 + has_axes));
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  if (!starts || !ends || (has_axes && !axes) || (has_steps && !steps)) {
    SetUnknownRank(c, in.rank());
    return absl::OkStatus();
  }
  const size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
    return c->Error("Slice: inputs of different lengths");
  }
  std::vector<bool> seen(in.rank(), false);
  for (size_t k = 0; k < n; ++k) {
    auto axis = Axis(axes ? (*axes)[k] : static_cast<int64_t>(k), in.rank());
    const int64_t step = steps ? (*steps)[k] : 1;
    if (!axis || seen[*axis] || step == 0) return c->Error("Slice: bad axes or steps");
    seen[*axis] = true;
    const int64_t d = in.dim(*axis);
    if (d < 0) continue;  // Stays unknown.
    int64_t s = (*starts)[k], e = (*ends)[k];
    if (s < 0) s = s < -d ? 0 : s + d;  // Without overflow for INT64_MIN-like values.
    if (e < 0) e = e < -d ? -1 : e + d;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = s > e ? (s - e - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1 : 0;
    }
    dims[*axis] = len;
  }
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status Expand(InferenceContext* c) {
  auto shape = Ints(c->input_tensor(1));
  if (!shape) {
    const PartialShape& s = c->input(1);
    if (s.rank() == 1 && s.dim(0) >= 0 && !c->input(0).unknown_rank()) {
      SetUnknownRank(c, static_cast<int>(std::max<int64_t>(s.dim(0), c->input(0).rank())));
    }
    return absl::OkStatus();
  }
  for (int64_t d : *shape) {
    if (d < 0) return c->Error("Expand: a negative dim");
  }
  SL_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(c->input(0), PartialShape(absl::MakeConstSpan(*shape))));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Pad(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) return absl::OkStatus();
  auto pads = Ints(c->input_tensor(1));
  const int has_value = ListSize(c, "Tvalue"), has_axes = ListSize(c, "Taxes");
  std::optional<std::vector<int64_t>> axes;
  if (has_axes) axes = Ints(OptionalInput(c, 2 + has_value));
  if (!pads || (has_axes && !axes)) {
    SetUnknownRank(c, in.rank());
    return absl::OkStatus();
  }
  std::vector<int64_t> axis_list;
  if (axes) {
    for (int64_t a : *axes) {
      auto axis = Axis(a, in.rank());
      if (!axis) return c->Error("Pad: bad axes");
      axis_list.push_back(*axis);
    }
  } else {
    for (int i = 0; i < in.rank(); ++i) axis_list.push_back(i);
  }
  const size_t n = axis_list.size();
  if (pads->size() != 2 * n) return c->Error("Pad: pads of the wrong length");
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  for (size_t k = 0; k < n; ++k) {
    int64_t& d = dims[axis_list[k]];
    int64_t grown = 0;
    if (d < 0 || !CheckedAdd(d, (*pads)[k], &grown) || !CheckedAdd(grown, (*pads)[k + n], &grown) || grown < 0) {
      d = -1;
      continue;
    }
    d = grown;
  }
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status Gather(InferenceContext* c) {
  const PartialShape &data = c->input(0), &indices = c->input(1);
  if (data.unknown_rank() || indices.unknown_rank()) return absl::OkStatus();
  auto axis = Axis(IntAttr(c, "axis", 0), data.rank());
  if (!axis) return c->Error("Gather: bad axis");
  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + *axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.dims().begin() + *axis + 1, data.dims().end());
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status ConstantOfShape(InferenceContext* c) {
  auto shape = Ints(c->input_tensor(0));
  if (shape) {
    for (int64_t d : *shape) {
      if (d < 0) return c->Error("ConstantOfShape: a negative dim");
    }
    c->set_output(0, PartialShape(absl::MakeConstSpan(*shape)));
  } else if (c->input(0).rank() == 1 && c->input(0).dim(0) >= 0) {
    SetUnknownRank(c, static_cast<int>(c->input(0).dim(0)));
  }
  return absl::OkStatus();
}

absl::Status Range(InferenceContext* c) {
  int64_t values[3];
  for (int i = 0; i < 3; ++i) {
    auto v = Ints(c->input_tensor(i));
    if (!v || v->size() != 1) {
      SetUnknownRank(c, 1);
      return absl::OkStatus();
    }
    values[i] = (*v)[0];
  }
  const int64_t start = values[0], limit = values[1], delta = values[2];
  if (delta == 0) return c->Error("Range: delta 0");
  // Whole numbers only (float ranges stay unknown), in double against overflow.
  const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  const int64_t dims[] = {n > 0 ? static_cast<int64_t>(n) : 0};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status Flatten(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    SetUnknownRank(c, 2);
    return absl::OkStatus();
  }
  int64_t axis = IntAttr(c, "axis", 1);
  if (axis < 0) axis += in.rank();
  if (axis < 0 || axis > in.rank()) return c->Error("Flatten: bad axis");
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in.rank(); ++i) {
    int64_t& p = i < axis ? outer : inner;
    if (p < 0 || in.dim(i) < 0 || !CheckedMul(p, in.dim(i), &p)) p = -1;
  }
  const int64_t dims[] = {outer, inner};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status Gemm(InferenceContext* c) {
  const PartialShape &a = c->input(0), &b = c->input(1);
  if (a.rank() != 2 || b.rank() != 2) {
    SetUnknownRank(c, 2);
    return absl::OkStatus();
  }
  const bool ta = IntAttr(c, "transA", 0) != 0, tb = IntAttr(c, "transB", 0) != 0;
  const int64_t dims[] = {a.dim(ta ? 1 : 0), b.dim(tb ? 0 : 1)};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status BatchMatMul(InferenceContext* c) {
  const PartialShape &x = c->input(0), &y = c->input(1);
  if (x.rank() < 2 || y.rank() < 2) return absl::OkStatus();
  bool adj_x = false, adj_y = false;
  GetNodeAttr(c->attrs(), "adj_x", &adj_x).IgnoreError();
  GetNodeAttr(c->attrs(), "adj_y", &adj_y).IgnoreError();
  SL_ASSIGN_OR_RETURN(PartialShape batch,
                      BroadcastShapes(PartialShape(x.dims().subspan(0, x.rank() - 2)),
                                      PartialShape(y.dims().subspan(0, y.rank() - 2))));
  std::vector<int64_t> dims(batch.dims().begin(), batch.dims().end());
  dims.push_back(x.dim(x.rank() - (adj_x ? 1 : 2)));
  dims.push_back(y.dim(y.rank() - (adj_y ? 2 : 1)));
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status GlobalPool(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.rank() < 2) return absl::OkStatus();
  std::vector<int64_t> dims(in.rank(), 1);
  dims[0] = in.dim(0);
  dims[1] = in.dim(1);
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

absl::Status AllLikeInput(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return absl::OkStatus();
}

absl::Status FirstLikeInput(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status BatchNormalization(InferenceContext* c) {
  c->set_output(0, c->input(0));
  if (c->num_inputs() > 3) {
    for (int i = 1; i < c->num_outputs(); ++i) c->set_output(i, c->input(3));
  }
  return absl::OkStatus();
}

}  // namespace onnx_shape_fn
}  // namespace sluice
