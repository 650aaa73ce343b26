#include "framework/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "framework/status.h"

namespace sluice {

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input == i) return e;
  }
  return nullptr;
}

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  if (def.name().empty()) return absl::InvalidArgumentError("a node has an empty name");
  if (by_name_.contains(def.name())) {
    return absl::InvalidArgumentError(absl::StrCat("duplicate node name '", def.name(), "'"));
  }
  auto op_def = ops_->LookUpOpDef(def.op());
  if (!op_def.ok()) {
    return absl::Status(op_def.status().code(),
                        absl::StrCat("node '", def.name(), "': ", op_def.status().message()));
  }
  AddDefaultsToNodeDef(**op_def, &def);
  SL_RETURN_IF_ERROR(ValidateNodeDefAttrs(def, **op_def));
  auto node = std::make_unique<Node>();
  node->id_ = static_cast<int>(nodes_.size());
  node->op_def_ = *op_def;
  SL_RETURN_IF_ERROR(InOutTypesForNode(def, **op_def, &node->input_types_, &node->output_types_));
  node->def_ = std::move(def);
  Node* raw = node.get();
  by_name_[raw->name()] = raw;
  nodes_.push_back(std::move(node));
  ++num_live_;
  return raw;
}

absl::Status Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  if (src_output < 0 || src_output >= src->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", dst->name(), "' input ", dst_input, " refers to output ", src_output,
        " of node '", src->name(), "', which has ", src->num_outputs(), " outputs"));
  }
  if (dst_input < 0 || dst_input >= dst->num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat("node '", dst->name(), "' has no input ",
                                                   dst_input));
  }
  DataType got = src->output_types()[src_output];
  DataType want = dst->input_types()[dst_input];
  if (got != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", dst_input, " of node '", dst->name(), "' was passed ", DataTypeString(got),
        " from ", src->name(), ":", src_output, " incompatible with expected ",
        DataTypeString(want)));
  }
  edges_.push_back(std::make_unique<Edge>(Edge{src, src_output, dst, dst_input}));
  src->out_edges_.push_back(edges_.back().get());
  dst->in_edges_.push_back(edges_.back().get());
  return absl::OkStatus();
}

void Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControl() && e->src == src) return;
  }
  edges_.push_back(std::make_unique<Edge>(Edge{src, kControlSlot, dst, kControlSlot}));
  src->out_edges_.push_back(edges_.back().get());
  dst->in_edges_.push_back(edges_.back().get());
}

void Graph::RemoveEdge(const Edge* edge) {
  auto erase = [edge](std::vector<const Edge*>& v) {
    v.erase(std::remove(v.begin(), v.end(), edge), v.end());
  };
  erase(edge->src->out_edges_);
  erase(edge->dst->in_edges_);
  // The Edge object stays owned by edges_ until the graph goes away; it is unreachable now.
}

void Graph::RemoveNode(Node* node) {
  std::vector<const Edge*> edges = node->in_edges_;
  edges.insert(edges.end(), node->out_edges_.begin(), node->out_edges_.end());
  for (const Edge* e : edges) RemoveEdge(e);
  by_name_.erase(node->name());
  nodes_[node->id_].reset();
  --num_live_;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_live_);
  for (const auto& n : nodes_) {
    if (n) out.push_back(n.get());
  }
  return out;
}

std::vector<int> Graph::InEdgeCounts(std::vector<Node*>* sources) const {
  std::vector<int> pending(nodes_.size(), 0);
  for (const auto& n : nodes_) {
    if (!n) continue;
    pending[n->id_] = static_cast<int>(n->in_edges_.size());
    if (pending[n->id_] == 0) sources->push_back(n.get());
  }
  return pending;
}

absl::Status Graph::CycleError(const std::vector<int>& pending) const {
  for (const auto& n : nodes_) {
    if (n && pending[n->id_] > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph has a cycle through node '", n->name(), "'"));
    }
  }
  return absl::InternalError("a topological order missed nodes that wait for no input");
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  std::vector<Node*> ready, order;
  std::vector<int> pending = InEdgeCounts(&ready);
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    for (const Edge* e : n->out_edges_) {
      if (--pending[e->dst->id_] == 0) ready.push_back(e->dst);
    }
  }
  if (static_cast<int>(order.size()) != num_live_) return CycleError(pending);
  return order;
}

absl::StatusOr<std::vector<Node*>> Graph::BreadthFirstTopologicalOrder() const {
  std::vector<Node*> order;
  std::vector<int> pending = InEdgeCounts(&order);
  for (size_t k = 0; k < order.size(); ++k) {  // `order` is its own queue.
    for (const Edge* e : order[k]->out_edges_) {
      if (--pending[e->dst->id_] == 0) order.push_back(e->dst);
    }
  }
  if (static_cast<int>(order.size()) != num_live_) return CycleError(pending);
  return order;
}

absl::StatusOr<std::unique_ptr<Graph>> Graph::FromGraphDef(const GraphDef& def,
                                                           const OpDefLookup& ops) {
  auto g = std::make_unique<Graph>(&ops);
  g->library_ = def.library();
  g->versions_ = def.versions();
  for (const NodeDef& nd : def.node()) {
    SL_ASSIGN_OR_RETURN(Node * n, g->AddNode(nd));
    SL_RETURN_IF_ERROR(ValidateNodeDef(n->def(), n->op_def()));
  }
  for (const auto& node : g->nodes_) {
    int data_index = 0;
    for (const std::string& input : node->def_.input()) {
      auto id = ParseTensorName(input);
      if (!id.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node->name(), "': ", id.status().message()));
      }
      Node* src = g->FindNode(id->node);
      if (src == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node->name(), "' has input '",
                                                       input, "' from a node that does not exist"));
      }
      if (id->index == kControlSlot) {
        g->AddControlEdge(src, node.get());
      } else {
        SL_RETURN_IF_ERROR(g->AddEdge(src, id->index, node.get(), data_index++));
      }
    }
  }
  SL_RETURN_IF_ERROR(g->TopologicalOrder().status());
  return g;
}

void Graph::ToGraphDef(GraphDef* def) const {
  def->Clear();
  *def->mutable_library() = library_;
  *def->mutable_versions() = versions_;
  for (const auto& n : nodes_) {
    if (!n) continue;
    NodeDef* nd = def->add_node();
    *nd = n->def_;
    nd->clear_input();
    if (!n->assigned_device_.empty()) nd->set_device(n->assigned_device_);
    std::vector<const Edge*> data(n->num_inputs(), nullptr);
    std::vector<const Edge*> control;
    for (const Edge* e : n->in_edges_) {
      if (e->IsControl()) {
        control.push_back(e);
      } else {
        data[e->dst_input] = e;
      }
    }
    for (const Edge* e : data) {
      if (e == nullptr) continue;  // Only during rewrites; a finished graph has every input.
      nd->add_input(TensorId{e->src->name(), e->src_output}.ToString());
    }
    for (const Edge* e : control) nd->add_input(absl::StrCat("^", e->src->name()));
  }
}

absl::Status CheckGraphSize(const GraphDef& graph, int64_t max_nodes) {
  if (max_nodes <= 0) return absl::OkStatus();
  int64_t nodes = graph.node_size();
  for (const FunctionDef& f : graph.library().function()) nodes += f.node_def_size();
  if (nodes > max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the graph has ", nodes, " nodes (function bodies included), over the limit of ", max_nodes));
  }
  return absl::OkStatus();
}

}  // namespace sluice
