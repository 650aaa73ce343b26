// What the optimizer's passes share: reading constants (inline or hoisted), indexing a graph by
// name and by reader, and the small steps of a rewrite (forward a node, rewire readers, drop
// what nothing reads any more), plus the pattern helpers the fusions match with.
#ifndef SLUICE_OPTIMIZER_REWRITE_UTIL_H_
#define SLUICE_OPTIMIZER_REWRITE_UTIL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/hoisted_constants.h"
#include "framework/node_def_util.h"
#include "framework/tensor.h"
#include "optimizer/graph_item.h"
#include "proto/graph.pb.h"

namespace sluice {

// "node:0" and "node" name one tensor; the canonical name is "node" for output 0.
std::string Canonical(const std::string& t);

// The value of a Const node, if `tensor` names one's output 0: its inline value, or (for a
// hoisted Const) a copy of its value in `hoisted`, which passes may change freely.
std::optional<Tensor> ConstValue(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const HoistedConstants* hoisted, const std::string& tensor);
// The scalar value of a float Const node, if `tensor` names one.
std::optional<float> ConstScalar(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const HoistedConstants* hoisted, const std::string& tensor);

// A Const node of `value`, inline (the master hoists large ones again after the passes).
NodeDef ConstNode(const std::string& name, const std::string& device, const Tensor& value);

// What the fusing rewrites look up: nodes by name, how many data inputs read each tensor
// ("node:k"), and the graph's outputs, which must keep their names.
struct GraphIndex {
  absl::flat_hash_map<std::string, NodeDef*> by_name;
  absl::flat_hash_map<std::string, int> consumers;
  absl::flat_hash_map<std::string, std::vector<NodeDef*>> readers;  // Once per data input read.
  absl::flat_hash_set<std::string> protected_tensors;
  const HoistedConstants* hoisted = nullptr;
};
GraphIndex IndexGraph(GraphItem* graph);

// Turns a fused-away float node into an Identity of `input` under its own name and device, so
// a graph output it was stays fetchable.
void ForwardAs(NodeDef* node, const std::string& input);

// Drops the nodes whose output 0 is in `renamed` (its readers read the new tensor instead) and
// the nodes in `dropped`.
void Rewire(GraphDef* def, const absl::flat_hash_map<std::string, std::string>& renamed,
            const absl::flat_hash_set<std::string>& dropped);

// Drops the Consts in `candidates` that no node, graph input or graph output reads any more
// (weights a rewrite replaced), so they hold no memory; and the nodes in `dropped`, whose readers
// a rewrite already pointed elsewhere (their own reads do not keep a Const).
void DropUnreadConsts(GraphItem* graph, const absl::flat_hash_set<std::string>& candidates,
                      const absl::flat_hash_set<std::string>& dropped = {});

// Pattern matching for the fusions: what the nodes torch exports spell out.

// The node whose output 0 `tensor` is, if it is a float `op`.
NodeDef* FloatProducer(const GraphIndex& index, const std::string& tensor, const char* op);
// Whether a fusion may drop `n`: its output 0 is read by exactly `reads` data inputs and is no
// graph output.
bool Internal(const GraphIndex& index, const NodeDef& n, int reads);
// The one node reading output 0 of `n` (once), if it is a float `op`.
NodeDef* SoleReader(const GraphIndex& index, const NodeDef& n, const char* op);
// The value of a one-element numeric constant (Pow's exponent may be an integer) of rank 0 or
// 1, so that it broadcasts without raising the rank of a tensor of rank 1 or more.
std::optional<double> ConstNumber(const GraphIndex& index, const std::string& tensor);
// Whether `tensor` is a one-element constant within float rounding of `want`.
bool ConstNear(const GraphIndex& index, const std::string& tensor, double want);
bool SameTensor(const std::string& a, const std::string& b);
// A fused pattern's nodes: those in `span` go (into `dropped`), `kept` becomes the fused node
// under its own name; what any of them read may now be unread.
void DropFusedSpan(const std::vector<NodeDef*>& span, const NodeDef* kept, absl::flat_hash_set<std::string>* dropped,
                   absl::flat_hash_set<std::string>* maybe_unread);
// Of a two-input node, the index of the input that `pred` accepts (the first if both do), or -1.
int InputWhere(const NodeDef& n, const std::function<bool(const std::string&)>& pred);

// The 2-D float BatchMatMulV2 (ONNX MatMul) of a rank-2 A (any rank >= 2 if `batched_ok`) and
// a constant 2-D B whose output `tensor` is, read by that one node and not a graph output; B's
// value in `b`.
NodeDef* ConstWeightMatMul(const GraphItem& graph, const GraphIndex& index, const std::string& tensor,
                           std::optional<Tensor>* b, bool batched_ok = false);
// Turns `node` (keeping its name and device) into Gemm(a, b, c) with the given attrs.
void MakeGemm(NodeDef* node, const std::string& a, const std::string& b, const std::string& c, float alpha,
              float beta, int64_t trans_a, int64_t trans_b);

// Whether `node`'s assigned device (or, when none is assigned yet, the process's default) is
// a CPU: device-specific passes rewrite only those nodes.
bool OnCpu(const NodeDef& node);

}  // namespace sluice

#endif  // SLUICE_OPTIMIZER_REWRITE_UTIL_H_
