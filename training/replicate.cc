#include "training/replicate.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/graph.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "training/tensor_names.h"

namespace sluice {
namespace {

NodeDef ScalarConst(const std::string& name, DataType dt, double value) {
  NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  AddNodeAttr("dtype", dt, &n);
  Tensor t = dt == DT_DOUBLE ? Tensor::FromVector<double>({value}, TensorShape({}))
                             : Tensor::FromVector<float>({static_cast<float>(value)}, TensorShape({}));
  AddNodeAttr("value", t, &n);
  return n;
}

// Builds the nodes of the all-reduce: `Add` appends one, named `name` on `device`.
class GraphBuilder {
 public:
  explicit GraphBuilder(GraphDef* out) : out_(out) {}
  NodeDef* Add(const std::string& name, const std::string& op, const std::string& device,
               std::vector<std::string> inputs) {
    NodeDef* n = out_->add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    for (std::string& in : inputs) n->add_input(std::move(in));
    return n;
  }
  std::string Int64s(const std::string& name, const std::string& device, std::vector<int64_t> values) {
    NodeDef* n = Add(name, "Const", device, {});
    AddNodeAttr("dtype", DT_INT64, n);
    const int64_t size = static_cast<int64_t>(values.size());
    AddNodeAttr("value", Tensor::FromVector<int64_t>(values, TensorShape({size})), n);
    return name;
  }
  std::string Int32(const std::string& name, const std::string& device, int32_t value) {
    NodeDef* n = Add(name, "Const", device, {});
    AddNodeAttr("dtype", DT_INT32, n);
    AddNodeAttr("value", Tensor::FromVector<int32_t>({value}, TensorShape({})), n);
    return name;
  }

 private:
  GraphDef* out_;
};

// About this much of a bucket per chunk of the ring.
constexpr int64_t kChunkBytes = int64_t{2} << 20;

bool NamesAVariable(const NodeDef& n) {
  return n.attr().contains("shared_name") &&
         (n.op() == "ReadVariable" || n.op() == "AssignVariable" || n.op() == "DestroyVariable" ||
          n.op() == "VarHandleOp");
}

}  // namespace

absl::Status Replicate(const ReplicaPlan& plan, GraphDef* def,
                       std::function<std::string(const std::string&)>* tensor_of) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Graph::FromGraphDef(*def, *OpRegistry::Global()));
  // The update: everything downstream of a gradient.
  absl::flat_hash_set<std::string> update;
  std::vector<const Node*> stack;
  for (const Node* n : graph->nodes()) {
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl() &&
          plan.gradients.contains(ShortTensorName(absl::StrCat(e->src->name(), ":", e->src_output)))) {
        if (update.insert(n->name()).second) stack.push_back(n);
      }
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (update.insert(e->dst->name()).second) stack.push_back(e->dst);
    }
  }
  // The replicas' work: everything downstream of a split input, short of the update.
  absl::flat_hash_set<std::string> batch;
  for (const std::string& name : plan.split_inputs) {
    const Node* n = graph->FindNode(name);
    if (n != nullptr && batch.insert(name).second) stack.push_back(n);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (batch.insert(e->dst->name()).second) stack.push_back(e->dst);
    }
  }
  const int replicas = static_cast<int>(plan.replica_devices.size());
  auto replicated = [&](const std::string& node) {
    return batch.contains(node) && !update.contains(node);
  };
  auto replica_prefix = [](int i) { return absl::StrCat("replica_", i, "/"); };

  GraphDef out;
  *out.mutable_library() = def->library();
  *out.mutable_versions() = def->versions();
  absl::flat_hash_map<std::string, std::string> averages;  // Replicated tensor -> its average.
  auto average = [&](const std::string& tensor) -> absl::StatusOr<std::string> {
    const std::string key = ShortTensorName(tensor);
    auto it = averages.find(key);
    if (it != averages.end()) return it->second;
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(key));
    const Node* src = graph->FindNode(id.node);
    const DataType dt = src->output_types()[id.index];
    if (dt != DT_FLOAT && dt != DT_DOUBLE) {
      return absl::UnimplementedError(absl::StrCat(
          "data-parallel training averages '", key, "' over the replicas, but it is ",
          DataTypeString(dt), " (only float and double can be averaged)"));
    }
    std::string base = absl::StrCat("average/", id.node, "_", id.index);
    NodeDef sum;
    sum.set_name(base + "/sum");
    sum.set_op("AddN");
    sum.set_device(plan.update_device);
    for (int i = 0; i < replicas; ++i) sum.add_input(replica_prefix(i) + key);
    AddNodeAttr("N", replicas, &sum);
    AddNodeAttr("T", dt, &sum);
    NodeDef scale = ScalarConst(base + "/scale", dt, 1.0 / replicas);
    scale.set_device(plan.update_device);
    NodeDef mean;
    mean.set_name(base);
    mean.set_op("Mul");
    mean.set_device(plan.update_device);
    mean.add_input(sum.name());
    mean.add_input(scale.name());
    AddNodeAttr("T", dt, &mean);
    *out.add_node() = std::move(sum);
    *out.add_node() = std::move(scale);
    *out.add_node() = std::move(mean);
    averages[key] = base;
    return base;
  };

  for (const NodeDef& n : def->node()) {
    if (replicated(n.name())) {
      for (int i = 0; i < replicas; ++i) {
        NodeDef copy = n;
        copy.set_name(replica_prefix(i) + n.name());
        copy.set_device(plan.replica_devices[i]);
        if (plan.split_inputs.contains(n.name()) && copy.attr().contains("shape")) {
          // Each replica is fed a share of the batch: its first dimension is not the model's.
          AttrValue& shape = (*copy.mutable_attr())["shape"];
          if (shape.shape().dim_size() > 0) shape.mutable_shape()->mutable_dim(0)->set_size(-1);
        }
        for (std::string& in : *copy.mutable_input()) {
          if (replicated(NodeOf(in))) in = Prefixed(replica_prefix(i), in);
        }
        *out.add_node() = std::move(copy);
      }
      continue;
    }
    NodeDef copy = n;
    copy.set_device(plan.update_device);
    copy.clear_input();
    for (const std::string& in : n.input()) {
      if (!replicated(NodeOf(in))) {
        copy.add_input(in);
      } else if (absl::StartsWith(in, "^")) {
        for (int i = 0; i < replicas; ++i) copy.add_input(Prefixed(replica_prefix(i), in));
      } else {
        SL_ASSIGN_OR_RETURN(std::string avg, average(in), "node '", n.name(), "'");
        copy.add_input(avg);
      }
    }
    *out.add_node() = std::move(copy);
  }
  for (const std::string& t : plan.reported) {
    if (!replicated(NodeOf(t))) continue;
    SL_RETURN_IF_ERROR(average(t).status(), "reported output '", t, "'");
  }
  *def = std::move(out);
  // Replicated tensors that neither an update nor the client reads have no average: "".
  *tensor_of = [update, batch, averages](const std::string& tensor) {
    auto it = averages.find(ShortTensorName(tensor));
    if (it != averages.end()) return it->second;
    const std::string node = NodeOf(tensor);
    return batch.contains(node) && !update.contains(node) ? std::string() : tensor;
  };
  return absl::OkStatus();
}

namespace {

// The names of the nodes downstream of `roots` (roots included).
absl::flat_hash_set<std::string> Downstream(const Graph& graph, const std::vector<const Node*>& roots) {
  absl::flat_hash_set<std::string> seen;
  std::vector<const Node*> stack;
  for (const Node* n : roots) {
    if (n != nullptr && seen.insert(n->name()).second) stack.push_back(n);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (seen.insert(e->dst->name()).second) stack.push_back(e->dst);
    }
  }
  return seen;
}

// A tensor to average, in the order the backward pass makes them.
struct Averaged {
  std::string tensor;
  int64_t elements;
  DataType dtype;
};

struct Bucket {
  DataType dtype;
  std::vector<std::pair<std::string, int64_t>> tensors;
  int64_t elements = 0;
};

// Cuts `ordered` (gradients in the order they are made) into buckets of one dtype each, laid
// out from the end: the last bucket closes at about cap / 16 bytes, each earlier one at twice
// the size of the one after it, up to `cap`. A first bucket of under half its size joins the
// one after it.
std::vector<Bucket> TaperedBuckets(const std::vector<Averaged>& ordered, int64_t cap) {
  std::vector<Bucket> reversed;
  int64_t limit = std::max<int64_t>(1, cap / 16);
  int64_t bytes = 0;
  for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
    const int64_t bytes_per = it->dtype == DT_DOUBLE ? 8 : 4;
    if (reversed.empty() || reversed.back().dtype != it->dtype || bytes >= limit) {
      if (!reversed.empty()) limit = limit > cap / 2 ? cap : limit * 2;
      reversed.push_back(Bucket{it->dtype, {}, 0});
      bytes = 0;
    }
    Bucket& b = reversed.back();
    b.tensors.emplace_back(it->tensor, it->elements);
    b.elements += it->elements;
    bytes += it->elements * bytes_per;
  }
  if (reversed.size() >= 2 && reversed.back().dtype == reversed[reversed.size() - 2].dtype &&
      bytes < limit / 2) {
    Bucket first = std::move(reversed.back());
    reversed.pop_back();
    Bucket& next = reversed.back();
    next.tensors.insert(next.tensors.end(), first.tensors.begin(), first.tensors.end());
    next.elements += first.elements;
  }
  std::vector<Bucket> buckets(reversed.rbegin(), reversed.rend());
  for (Bucket& b : buckets) std::reverse(b.tensors.begin(), b.tensors.end());
  return buckets;
}

}  // namespace

absl::Status ReplicateAllReduce(const AllReducePlan& plan, GraphDef* def,
                                std::function<std::string(const std::string&)>* tensor_of,
                                std::function<std::string(const std::string&, int)>* replica_tensor) {
  const int replicas = static_cast<int>(plan.replica_devices.size());
  if (replicas < 2) return absl::InvalidArgumentError("an all-reduce needs two replicas or more");
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Graph::FromGraphDef(*def, *OpRegistry::Global()));
  // What the batch feeds, and what the gradients feed: written tensors of the first but not
  // the second differ between replicas and are averaged too.
  std::vector<const Node*> roots;
  for (const std::string& name : plan.split_inputs) roots.push_back(graph->FindNode(name));
  const absl::flat_hash_set<std::string> batch = Downstream(*graph, roots);
  roots.clear();
  for (const auto& [tensor, elements] : plan.gradients) roots.push_back(graph->FindNode(NodeOf(tensor)));
  const absl::flat_hash_set<std::string> from_gradients = Downstream(*graph, roots);
  std::vector<std::pair<std::string, int64_t>> averaged = plan.gradients;
  for (const auto& [tensor, elements] : plan.written) {
    const std::string node = NodeOf(tensor);
    if (batch.contains(node) && !from_gradients.contains(node)) averaged.emplace_back(tensor, elements);
  }
  auto replica_prefix = [](int i) { return absl::StrCat("replica_", i, "/"); };
  auto device = [&](int i) { return plan.replica_devices[i]; };

  GraphDef out;
  *out.mutable_library() = def->library();
  *out.mutable_versions() = def->versions();
  GraphBuilder b(&out);

  // The buckets: gradients of one dtype, in the order they are made. Only the last bucket's
  // all-reduce has no backward pass left to hide behind, so the buckets are laid out from the
  // end: the last holds about bucket_bytes / 16, each one before it twice as much as the next,
  // up to bucket_bytes (DDP's buckets are all alike and leave a full one for the end).
  std::vector<Averaged> ordered;
  for (const auto& [tensor, elements] : averaged) {
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(tensor));
    const Node* src = graph->FindNode(id.node);
    if (src == nullptr || id.index >= static_cast<int>(src->output_types().size())) {
      return absl::InvalidArgumentError(absl::StrCat("gradient '", tensor, "' is not in the graph"));
    }
    const DataType dt = src->output_types()[id.index];
    if (dt != DT_FLOAT && dt != DT_DOUBLE) {
      return absl::UnimplementedError(absl::StrCat("all-reduce of gradient '", tensor, "', a ",
                                                   DataTypeString(dt), " (only float and double)"));
    }
    if (elements <= 0) continue;  // Nothing to sum; it is read as it is.
    ordered.push_back({ShortTensorName(tensor), elements, dt});
  }
  std::vector<Bucket> buckets = TaperedBuckets(ordered, plan.bucket_bytes);

  // reduced[gradient][i]: the gradient's mean, on replica i.
  absl::flat_hash_map<std::string, std::vector<std::string>> reduced;
  for (size_t k = 0; k < buckets.size(); ++k) {
    Bucket& bucket = buckets[k];
    const std::string base = absl::StrCat("allreduce/bucket_", k);
    const int64_t bytes_per = bucket.dtype == DT_DOUBLE ? 8 : 4;
    // Every gradient starts a multiple of `unit` elements (64 bytes) into the bucket, zeros
    // padding the one before: the chunks and the gradients cut from a bucket are then
    // aligned, and Split hands them out as views instead of copies (kernels/tf_slice_ops.cc).
    const int64_t unit = static_cast<int64_t>(kTensorAlignment) / bytes_per;
    std::vector<int64_t> pads;  // Per gradient.
    bucket.elements = 0;
    for (const auto& [tensor, elements] : bucket.tensors) {
      pads.push_back((unit - elements % unit) % unit);
      bucket.elements += elements + pads.back();
    }
    // A few MiB per chunk, a multiple of the replicas: each link then carries the next chunk
    // while the one before is added and passed on (the ring is pipelined). Whole units each,
    // where the bucket has units enough.
    const int64_t rounds = std::max<int64_t>(
        1, (bucket.elements * bytes_per + replicas * kChunkBytes - 1) / (replicas * kChunkBytes));
    const int chunks = static_cast<int>(std::min<int64_t>(replicas * rounds, bucket.elements));
    const int64_t step = bucket.elements / unit >= chunks ? unit : 1;
    const int64_t steps = bucket.elements / step;
    std::vector<int64_t> chunk_sizes(chunks, steps / chunks * step);
    for (int j = 0; j < steps % chunks; ++j) chunk_sizes[j] += step;
    chunk_sizes.back() += bucket.elements % step;
    // The pieces a bucket is cut back into: each gradient and the padding after it.
    std::vector<int64_t> piece_sizes;
    std::vector<int> piece_of;  // Per gradient: its index among the pieces.
    for (size_t t = 0; t < bucket.tensors.size(); ++t) {
      piece_of.push_back(static_cast<int>(piece_sizes.size()));
      piece_sizes.push_back(bucket.tensors[t].second);
      if (pads[t] > 0) piece_sizes.push_back(pads[t]);
    }
    const int m = static_cast<int>(bucket.tensors.size());
    const int pieces_n = static_cast<int>(piece_sizes.size());
    // Each replica: its gradients flattened, concatenated and cut into chunks.
    std::vector<std::string> split(replicas);
    for (int i = 0; i < replicas; ++i) {
      const std::string at = absl::StrCat(base, "/replica_", i);
      const std::string flat_shape = b.Int64s(at + "/flat_shape", device(i), {-1});
      std::vector<std::string> flats;
      for (int t = 0; t < m; ++t) {
        NodeDef* flat = b.Add(absl::StrCat(at, "/flat_", t), "Reshape", device(i),
                              {Prefixed(replica_prefix(i), bucket.tensors[t].first), flat_shape});
        AddNodeAttr("T", bucket.dtype, flat);
        AddNodeAttr("Tshape", DT_INT64, flat);
        flats.push_back(flat->name());
        if (pads[t] > 0) {
          NodeDef* pad = b.Add(absl::StrCat(at, "/pad_", t), "Const", device(i), {});
          AddNodeAttr("dtype", bucket.dtype, pad);
          Tensor zeros(bucket.dtype, TensorShape({pads[t]}));
          std::memset(zeros.raw_data(), 0, zeros.AllocatedBytes());
          AddNodeAttr("value", zeros, pad);
          flats.push_back(pad->name());
        }
      }
      std::string joined = flats[0];
      const std::string axis = b.Int32(at + "/axis", device(i), 0);
      if (flats.size() > 1) {
        std::vector<std::string> inputs = flats;
        inputs.push_back(axis);
        NodeDef* concat = b.Add(at + "/concat", "ConcatV2", device(i), inputs);
        AddNodeAttr("N", static_cast<int>(flats.size()), concat);
        AddNodeAttr("T", bucket.dtype, concat);
        AddNodeAttr("Tidx", DT_INT32, concat);
        joined = concat->name();
      }
      NodeDef* cut = b.Add(at + "/chunks", "SplitV", device(i),
                           {joined, b.Int64s(at + "/chunk_sizes", device(i), chunk_sizes), axis});
      AddNodeAttr("num_split", chunks, cut);
      AddNodeAttr("T", bucket.dtype, cut);
      AddNodeAttr("Tlen", DT_INT64, cut);
      split[i] = cut->name();
    }
    // Chunk j, owned by replica o = j mod replicas: summed from replica o+1 around the ring
    // to replica o, and scaled there.
    std::vector<std::string> mean(chunks);
    for (int j = 0; j < chunks; ++j) {
      const int owner = j % replicas;
      std::string acc = absl::StrCat(split[(owner + 1) % replicas], ":", j);
      for (int s = 2; s <= replicas; ++s) {
        const int r = (owner + s) % replicas;
        NodeDef* add = b.Add(absl::StrCat(base, "/chunk_", j, "/sum_", s), "AddV2", device(r),
                             {acc, absl::StrCat(split[r], ":", j)});
        AddNodeAttr("T", bucket.dtype, add);
        acc = add->name();
      }
      NodeDef* scale = b.Add(absl::StrCat(base, "/chunk_", j, "/scale"), "Const", device(owner), {});
      AddNodeAttr("dtype", bucket.dtype, scale);
      AddNodeAttr("value",
                  bucket.dtype == DT_DOUBLE ? Tensor::FromVector<double>({1.0 / replicas}, TensorShape({}))
                                            : Tensor::FromVector<float>({1.0f / replicas}, TensorShape({})),
                  scale);
      NodeDef* avg = b.Add(absl::StrCat(base, "/chunk_", j, "/mean"), "Mul", device(owner), {acc, scale->name()});
      AddNodeAttr("T", bucket.dtype, avg);
      mean[j] = avg->name();
    }
    // Every replica gathers the chunks and cuts them back into its gradients' shapes.
    for (int i = 0; i < replicas; ++i) {
      const std::string at = absl::StrCat(base, "/replica_", i);
      std::string gathered = mean[0];
      if (chunks > 1) {
        std::vector<std::string> inputs = mean;
        inputs.push_back(at + "/axis");
        NodeDef* concat = b.Add(at + "/gathered", "ConcatV2", device(i), inputs);
        AddNodeAttr("N", chunks, concat);
        AddNodeAttr("T", bucket.dtype, concat);
        AddNodeAttr("Tidx", DT_INT32, concat);
        gathered = concat->name();
      }
      std::string pieces = gathered;
      if (pieces_n > 1) {
        NodeDef* cut = b.Add(at + "/pieces", "SplitV", device(i),
                             {gathered, b.Int64s(at + "/piece_sizes", device(i), piece_sizes), at + "/axis"});
        AddNodeAttr("num_split", pieces_n, cut);
        AddNodeAttr("T", bucket.dtype, cut);
        AddNodeAttr("Tlen", DT_INT64, cut);
        pieces = cut->name();
      }
      for (int t = 0; t < m; ++t) {
        const std::string& tensor = bucket.tensors[t].first;
        NodeDef* shape = b.Add(absl::StrCat(at, "/shape_", t), "Shape", device(i),
                               {Prefixed(replica_prefix(i), tensor)});
        AddNodeAttr("T", bucket.dtype, shape);
        AddNodeAttr("out_type", DT_INT64, shape);
        NodeDef* back = b.Add(absl::StrCat(at, "/mean_", t), "Reshape", device(i),
                              {pieces_n > 1 ? absl::StrCat(pieces, ":", piece_of[t]) : pieces, shape->name()});
        AddNodeAttr("T", bucket.dtype, back);
        AddNodeAttr("Tshape", DT_INT64, back);
        reduced[tensor].resize(replicas);
        reduced[tensor][i] = back->name();
      }
    }
  }

  // Every node, once per replica; gradient reads go to the means.
  for (const NodeDef& n : def->node()) {
    for (int i = 0; i < replicas; ++i) {
      NodeDef copy = n;
      copy.set_name(replica_prefix(i) + n.name());
      copy.set_device(device(i));
      if (plan.split_inputs.contains(n.name()) && copy.attr().contains("shape")) {
        AttrValue& shape = (*copy.mutable_attr())["shape"];
        if (shape.shape().dim_size() > 0) shape.mutable_shape()->mutable_dim(0)->set_size(-1);
      }
      if (NamesAVariable(copy)) {
        AttrValue& name = (*copy.mutable_attr())["shared_name"];
        name.set_s(absl::StrCat(name.s(), "/replica_", i));
      }
      for (std::string& in : *copy.mutable_input()) {
        auto it = absl::StartsWith(in, "^") ? reduced.end() : reduced.find(ShortTensorName(in));
        in = it != reduced.end() ? it->second[i] : Prefixed(replica_prefix(i), in);
      }
      *out.add_node() = std::move(copy);
    }
  }
  // The reported outputs: their mean over the replicas, on replica 0.
  absl::flat_hash_map<std::string, std::string> averages;
  for (const std::string& t : plan.reported) {
    const std::string key = ShortTensorName(t);
    if (averages.contains(key)) continue;
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(key));
    const Node* src = graph->FindNode(id.node);
    if (src == nullptr) return absl::InvalidArgumentError(absl::StrCat("reported output '", t, "' is not in the graph"));
    const DataType dt = src->output_types()[id.index];
    if (dt != DT_FLOAT && dt != DT_DOUBLE) {
      averages[key] = replica_prefix(0) + key;  // Not averaged: replica 0's.
      continue;
    }
    const std::string base = absl::StrCat("average/", id.node, "_", id.index);
    std::vector<std::string> inputs;
    for (int i = 0; i < replicas; ++i) inputs.push_back(replica_prefix(i) + key);
    NodeDef* sum = b.Add(base + "/sum", "AddN", device(0), inputs);
    AddNodeAttr("N", replicas, sum);
    AddNodeAttr("T", dt, sum);
    NodeDef* scale = b.Add(base + "/scale", "Const", device(0), {});
    AddNodeAttr("dtype", dt, scale);
    AddNodeAttr("value",
                dt == DT_DOUBLE ? Tensor::FromVector<double>({1.0 / replicas}, TensorShape({}))
                                : Tensor::FromVector<float>({1.0f / replicas}, TensorShape({})),
                scale);
    NodeDef* avg = b.Add(base, "Mul", device(0), {sum->name(), scale->name()});
    AddNodeAttr("T", dt, avg);
    averages[key] = base;
  }
  *def = std::move(out);
  *tensor_of = [averages, replica_prefix](const std::string& tensor) {
    auto it = averages.find(ShortTensorName(tensor));
    return it != averages.end() ? it->second : Prefixed(replica_prefix(0), tensor);
  };
  *replica_tensor = [reduced, replica_prefix](const std::string& tensor, int i) {
    auto it = reduced.find(ShortTensorName(tensor));
    return it != reduced.end() ? it->second[i] : Prefixed(replica_prefix(i), tensor);
  };
  return absl::OkStatus();
}

}  // namespace sluice
