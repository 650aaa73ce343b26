#include "kernels/cwise_ops.h"

namespace sluice {

absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& a, const TensorShape& b) {
  const int rank = std::max(a.dims(), b.dims());
  DimVector out(rank), as(rank), bs(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: ", a.DebugString(),
                                                     " vs. ", b.DebugString()));
    }
    out[i] = std::max(da, db);
    if (da == 0 || db == 0) out[i] = 0;
    as[i] = da;  // Sizes for now; turned into strides below.
    bs[i] = db;
  }
  BroadcastPlan plan;
  plan.out_shape = TensorShape(out);
  // Merge adjacent dims whose broadcast pattern (a repeats? b repeats?) is the same.
  DimVector dims, a_rep, b_rep;
  for (int i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;  // Size-1 output dims do not move any offset.
    bool ar = as[i] == 1 && out[i] != 1, br = bs[i] == 1 && out[i] != 1;
    if (!dims.empty() && a_rep.back() == ar && b_rep.back() == br) {
      dims.back() *= out[i];
    } else {
      dims.push_back(out[i]);
      a_rep.push_back(ar);
      b_rep.push_back(br);
    }
  }
  const int n = static_cast<int>(dims.size());
  plan.dims = dims;
  plan.a_strides.resize(n);
  plan.b_strides.resize(n);
  int64_t sa = 1, sb = 1;
  for (int i = n - 1; i >= 0; --i) {
    plan.a_strides[i] = a_rep[i] ? 0 : sa;
    plan.b_strides[i] = b_rep[i] ? 0 : sb;
    if (!a_rep[i]) sa *= dims[i];
    if (!b_rep[i]) sb *= dims[i];
  }
  return plan;
}

int64_t NumBroadcastRuns(const BroadcastPlan& plan) {
  int64_t runs = 1;
  for (size_t i = 0; i + 1 < plan.dims.size(); ++i) runs *= plan.dims[i];
  return runs;
}

absl::StatusOr<NaryBroadcastPlan> MakeNaryBroadcastPlan(const std::vector<TensorShape>& shapes) {
  int rank = 0;
  for (const TensorShape& s : shapes) rank = std::max(rank, s.dims());
  const size_t n = shapes.size();
  DimVector out(rank, 1);
  std::vector<DimVector> sizes(n, DimVector(rank, 1));
  for (int i = 0; i < rank; ++i) {
    for (size_t k = 0; k < n; ++k) {
      int j = shapes[k].dims() - rank + i;
      int64_t d = j >= 0 ? shapes[k].dim_size(j) : 1;
      sizes[k][i] = d;
      if (d == 1) continue;
      if (out[i] != 1 && out[i] != d) {
        std::string all;
        for (const TensorShape& s : shapes) absl::StrAppend(&all, all.empty() ? "" : " vs. ", s.DebugString());
        return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: ", all));
      }
      out[i] = d;
    }
  }
  NaryBroadcastPlan plan;
  plan.out_shape = TensorShape(out);
  // Merge adjacent dims where every input repeats (or not) the same way.
  DimVector dims;
  std::vector<std::vector<bool>> rep;  // Per merged dim, per input.
  for (int i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    std::vector<bool> r(n);
    for (size_t k = 0; k < n; ++k) r[k] = sizes[k][i] == 1;
    if (!dims.empty() && rep.back() == r) {
      dims.back() *= out[i];
    } else {
      dims.push_back(out[i]);
      rep.push_back(r);
    }
  }
  plan.dims = dims;
  plan.strides.assign(n, DimVector(dims.size(), 0));
  for (size_t k = 0; k < n; ++k) {
    int64_t stride = 1;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
      if (rep[i][k]) continue;
      plan.strides[k][i] = stride;
      stride *= dims[i];
    }
  }
  return plan;
}

}  // namespace sluice
