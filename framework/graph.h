// An in-memory dataflow graph built from a GraphDef: nodes with resolved OpDefs and types,
// data edges (src:k -> dst input i) and control edges (slot kControlSlot).
//
//   SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, Graph::FromGraphDef(def, registry));
//   for (Node* n : g->nodes()) { for (const Edge* e : n->in_edges()) { ... } }
//   GraphDef back;  g->ToGraphDef(&back);
#ifndef SLUICE_FRAMEWORK_GRAPH_H_
#define SLUICE_FRAMEWORK_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "framework/node_def_util.h"
#include "framework/types.h"
#include "proto/graph.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {

// Where a Graph finds OpDefs; the op registry implements it.
class OpDefLookup {
 public:
  virtual ~OpDefLookup() = default;
  // NOT_FOUND for unknown ops; the returned OpDef outlives the lookup.
  virtual absl::StatusOr<const OpDef*> LookUpOpDef(absl::string_view op) const = 0;
};

class Node;

struct Edge {
  Node* src;
  int src_output;  // kControlSlot for control edges.
  Node* dst;
  int dst_input;   // kControlSlot for control edges.
  bool IsControl() const { return src_output == kControlSlot; }
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  NodeDef* mutable_def() { return &def_; }
  const OpDef& op_def() const { return *op_def_; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The device the placer assigned (full name); empty before placement.
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string d) { assigned_device_ = std::move(d); }
  // The edge feeding data input `i`, or null.
  const Edge* input_edge(int i) const;

 private:
  friend class Graph;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
  std::string assigned_device_;
};

// Nodes a session's graph may have unless a server says otherwise, function bodies included:
// far beyond real models (a large transformer has tens of thousands), and a bound on what one
// client can make a master or worker hold and process.
inline constexpr int64_t kDefaultMaxGraphNodes = 1000000;

// RESOURCE_EXHAUSTED when `graph` has more than `max_nodes` nodes, counting those of its
// function library (`max_nodes` <= 0: no limit).
absl::Status CheckGraphSize(const GraphDef& graph, int64_t max_nodes);

class Graph {
 public:
  explicit Graph(const OpDefLookup* ops) : ops_(ops) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Builds and checks a graph: unknown ops, invalid NodeDefs, duplicate names, inputs from
  // nodes that do not exist or outputs they do not have, type mismatches on edges and cycles
  // are errors that name the node.
  static absl::StatusOr<std::unique_ptr<Graph>> FromGraphDef(const GraphDef& def,
                                                             const OpDefLookup& ops);

  // Adds a node (defaults filled, validated); its inputs are wired with AddEdge.
  absl::StatusOr<Node*> AddNode(NodeDef def);
  // Data edge src:src_output -> dst:dst_input, type-checked.
  absl::Status AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  void AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* edge);
  void RemoveNode(Node* node);  // Also removes its edges.

  Node* FindNode(absl::string_view name) const;
  // Live nodes in id order.
  std::vector<Node*> nodes() const;
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  Node* node(int id) const { return nodes_[id].get(); }
  int num_nodes() const { return num_live_; }

  // Nodes in an order where every node follows its inputs; error naming a node on a cycle.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;
  // The same, breadth first: the nodes without inputs in id order, then each node as soon as
  // its last input is placed, taking out-edges in the order they were added. For callers that
  // show the order (the C API's import), so it follows the GraphDef's.
  absl::StatusOr<std::vector<Node*>> BreadthFirstTopologicalOrder() const;

  // Writes nodes in id order, inputs rebuilt from edges, device from assigned_device when set.
  void ToGraphDef(GraphDef* def) const;
  const FunctionDefLibrary& library() const { return library_; }
  FunctionDefLibrary* mutable_library() { return &library_; }
  const VersionDef& versions() const { return versions_; }
  const OpDefLookup& ops() const { return *ops_; }

 private:
  // In-edge counts by id, and the nodes that have none, in id order.
  std::vector<int> InEdgeCounts(std::vector<Node*>* sources) const;
  // The error for an order that missed nodes: one with in-edges left is on a cycle.
  absl::Status CycleError(const std::vector<int>& pending) const;

  const OpDefLookup* ops_;
  std::vector<std::unique_ptr<Node>> nodes_;  // Indexed by id; removed nodes are null.
  std::vector<std::unique_ptr<Edge>> edges_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  int num_live_ = 0;
  FunctionDefLibrary library_;
  VersionDef versions_;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_GRAPH_H_
