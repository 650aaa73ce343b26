#include "optimizer/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "framework/checked_size.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "optimizer/rewrite_util.h"

namespace sluice {


absl::StatusOr<int> FuseMatMulAdds(GraphItem* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped;
  // The Reshapes around batched Gemms, each to go right before the node it feeds.
  absl::flat_hash_map<std::string, std::vector<NodeDef>> inserted;
  absl::flat_hash_set<std::string> maybe_unread;  // Biases of rank 3 and more, reshaped.
  for (NodeDef& add : *graph->graph.mutable_node()) {
    if (add.op() != "Add" || add.input_size() != 2 || !add.attr().contains("T") ||
        add.attr().at("T").type() != DT_FLOAT) {
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      std::optional<Tensor> b;
      NodeDef* mm = ConstWeightMatMul(*graph, index, add.input(i), &b, /*batched_ok=*/true);
      std::optional<Tensor> bias = ConstValue(index.by_name, index.hoisted, add.input(1 - i));
      if (mm == nullptr || dropped.contains(mm->name()) || !bias || bias->dtype() != DT_FLOAT) continue;
      const PartialShape& a_shape = graph->shapes.at(Canonical(mm->input(0)));
      const int rank = a_shape.rank();
      // A bias of one row (or one value) broadcasts over Gemm's rows as over the Add's.
      const int64_t k = b->dim_size(0), n = b->dim_size(1);
      const int64_t last = bias->dims() == 0 ? 1 : bias->dim_size(bias->dims() - 1);
      const bool row = bias->dims() <= rank && bias->NumElements() == last && (last == n || last == 1);
      if (!row) continue;
      const std::string a_in = mm->input(0), b_in = mm->input(1), c_in = add.input(1 - i);
      if (rank == 2) {
        dropped.insert(mm->name());
        MakeGemm(&add, a_in, b_in, c_in, 1.0f, 1.0f, 0, 0);
        ++fused;
        break;
      }
      // [..., K] x [K, N]: the rows of A as one [rows, K] matrix (Reshape forwards the buffer),
      // one Gemm, and the result's leading dims back. At most one leading dim may be unknown
      // (-1 in the shape); a 0 would read as "copy the input's dim".
      std::vector<int64_t> out_dims(a_shape.dims().begin(), a_shape.dims().end() - 1);
      out_dims.push_back(n);
      const int64_t a_k = a_shape.dim(rank - 1);
      if (std::count(out_dims.begin(), out_dims.end(), -1) > 1 ||
          std::count(out_dims.begin(), out_dims.end(), 0) > 0 || (a_k != k && a_k != -1)) {
        continue;
      }
      const std::string flat_shape = absl::StrCat(add.name(), "/rows_shape"), flat = absl::StrCat(add.name(), "/rows");
      const std::string gemm = absl::StrCat(add.name(), "/gemm"), out_shape = absl::StrCat(add.name(), "/out_shape");
      bool taken = false;
      for (const std::string& name : {flat_shape, flat, gemm, out_shape}) taken = taken || index.by_name.contains(name);
      if (taken) continue;
      auto reshape = [&](const std::string& name, const std::string& in, const std::string& shape) {
        NodeDef r;
        r.set_name(name);
        r.set_op("Onnx>Reshape");
        r.set_device(add.device());
        r.add_input(in);
        r.add_input(shape);
        (*r.mutable_attr())["T"].set_type(DT_FLOAT);
        (*r.mutable_attr())["allowzero"].set_i(0);
        return r;
      };
      const auto int64_vector = [](const std::vector<int64_t>& v) {
        Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(v.size())}));
        for (size_t j = 0; j < v.size(); ++j) t.flat<int64_t>()[j] = v[j];
        return t;
      };
      std::vector<NodeDef>& before = inserted[add.name()];
      std::string c = c_in;
      if (bias->dims() > 2) {  // Gemm's C has rank 2 at most: the row alone.
        c = absl::StrCat(add.name(), "/bias_row");
        if (index.by_name.contains(c)) continue;
        Tensor row_value(DT_FLOAT, TensorShape({last}));
        std::copy_n(bias->data<float>(), last, row_value.data<float>());
        before.push_back(ConstNode(c, add.device(), row_value));
        maybe_unread.insert(ParseTensorName(c_in)->node);
      }
      before.push_back(ConstNode(flat_shape, add.device(), int64_vector({-1, k})));
      before.push_back(reshape(flat, a_in, flat_shape));
      NodeDef g;
      g.set_name(gemm);
      g.set_device(add.device());
      MakeGemm(&g, flat, b_in, c, 1.0f, 1.0f, 0, 0);
      before.push_back(std::move(g));
      before.push_back(ConstNode(out_shape, add.device(), int64_vector(out_dims)));
      int64_t rows = 1;
      for (int d = 0; d + 1 < rank; ++d) rows = a_shape.dim(d) < 0 || rows < 0 ? -1 : rows * a_shape.dim(d);
      graph->shapes[flat] = PartialShape(std::vector<int64_t>{rows, k});
      graph->shapes[gemm] = PartialShape(std::vector<int64_t>{rows, n});
      dropped.insert(mm->name());
      add = reshape(add.name(), gemm, out_shape);
      ++fused;
      break;
    }
  }
  if (!dropped.empty()) Rewire(&graph->graph, {}, dropped);
  if (!inserted.empty()) {
    GraphDef ordered;
    for (NodeDef& n : *graph->graph.mutable_node()) {
      auto it = inserted.find(n.name());
      if (it != inserted.end()) {
        for (NodeDef& m : it->second) *ordered.add_node() = std::move(m);
      }
      *ordered.add_node() = std::move(n);
    }
    graph->graph.mutable_node()->Swap(ordered.mutable_node());
  }
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

absl::StatusOr<int> FoldTransposesIntoMatMuls(GraphItem* graph) {
  int folded = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped;
  for (NodeDef& mm : *graph->graph.mutable_node()) {
    if (mm.op() != "BatchMatMulV2" || mm.input_size() != 2 || mm.attr().at("T").type() != DT_FLOAT ||
        mm.attr().at("adj_y").b()) {
      continue;
    }
    NodeDef* t = FloatProducer(index, mm.input(1), "Onnx>Transpose");
    if (t == nullptr || !Internal(index, *t, 1) || dropped.contains(t->name())) continue;
    auto shape = graph->shapes.find(Canonical(t->input(0)));
    if (shape == graph->shapes.end() || shape->second.rank() < 2) continue;
    const int rank = shape->second.rank();
    std::vector<int64_t> perm(t->attr().at("perm").list().i().begin(), t->attr().at("perm").list().i().end());
    if (perm.empty()) {
      for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int>(perm.size()) != rank) continue;
    // Transpose(y, perm) is Transpose(y, perm') with its last two axes swapped, perm' = perm with
    // its last two entries swapped. Worth it when perm moves y's innermost axis off the end and
    // perm' keeps it there: rows then copy whole (or not at all, when perm' is the identity).
    if (perm[rank - 2] != rank - 1) continue;
    std::swap(perm[rank - 2], perm[rank - 1]);
    bool identity = true;
    for (int i = 0; i < rank; ++i) identity = identity && perm[i] == i;
    (*mm.mutable_attr())["adj_y"].set_b(true);
    if (identity) {
      mm.set_input(1, t->input(0));
      dropped.insert(t->name());
    } else {
      auto* list = (*t->mutable_attr())["perm"].mutable_list();
      list->clear_i();
      for (int64_t p : perm) list->add_i(p);
      std::vector<int64_t> dims;
      for (int i = 0; i < rank; ++i) dims.push_back(shape->second.dim(perm[i]));
      graph->shapes[Canonical(t->name())] = PartialShape(dims);
    }
    ++folded;
  }
  if (!dropped.empty()) Rewire(&graph->graph, {}, dropped);
  return folded;
}

}  // namespace sluice
