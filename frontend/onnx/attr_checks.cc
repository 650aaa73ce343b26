#include "frontend/onnx/attr_checks.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/checked_size.h"
#include "framework/status.h"

namespace sluice {
namespace {

// Ops whose shape inference computes window geometry from these attributes.
bool IsWindowOp(const std::string& op) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool",
      "LpPool",  "MaxUnpool",     "DeformConv",  "Col2Im",      "MaxRoiPool"};
  return ops->contains(op);
}

std::string NodeLabel(const onnx::NodeProto& node) {
  const std::string& name = !node.name().empty() ? node.name() : node.output_size() > 0 ? node.output(0) : node.op_type();
  return absl::StrCat("ONNX node '", name, "' (", node.op_type(), ")");
}

absl::Status CheckInts(const onnx::NodeProto& node, const onnx::AttributeProto& a, int64_t lo, int64_t hi) {
  for (int64_t v : a.ints()) {
    if (v < lo || v > hi) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": attribute ", a.name(), " [", absl::StrJoin(a.ints(), ","),
          "] must have values in [", lo, ", ", hi, "]"));
    }
  }
  if (a.has_i() && (a.i() < lo || a.i() > hi)) {
    return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": attribute ", a.name(), " ",
                                                   a.i(), " must be in [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckNode(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  for (const auto& a : node.attribute()) {
    const std::string& name = a.name();
    if (IsWindowOp(op)) {
      if (name == "strides" || name == "dilations" || name == "kernel_shape") {
        SL_RETURN_IF_ERROR(CheckInts(node, a, 1, kMaxWindowAttr));
      } else if (name == "pads" || name == "output_padding") {
        SL_RETURN_IF_ERROR(CheckInts(node, a, 0, kMaxWindowAttr));
      } else if (name == "group") {
        SL_RETURN_IF_ERROR(CheckInts(node, a, 1, kMaxWindowAttr));
      }
    } else if ((op == "SpaceToDepth" || op == "DepthToSpace") && name == "blocksize") {
      SL_RETURN_IF_ERROR(CheckInts(node, a, 1, kMaxWindowAttr));
    } else if (op == "Split" && name == "num_outputs") {
      SL_RETURN_IF_ERROR(CheckInts(node, a, 1, kMaxWindowAttr));
    } else if (op == "GroupNormalization" && name == "num_groups") {
      SL_RETURN_IF_ERROR(CheckInts(node, a, 1, kMaxWindowAttr));
    } else if (op == "Upsample" && name == "scales") {
      // Upsample-7's scales multiply the input dims into output dims.
      for (float s : a.floats()) {
        if (!std::isfinite(s) || s <= 0 || s > kMaxWindowAttr) {
          return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": scale ", s,
                                                         " must be positive and at most ", kMaxWindowAttr));
        }
      }
    }
  }
  return absl::OkStatus();
}

// Ranks of the values whose type the graph declares (inputs, initializers, value_info).
absl::flat_hash_map<std::string, int> DeclaredRanks(const onnx::GraphProto& g) {
  absl::flat_hash_map<std::string, int> ranks;
  for (const auto* values : {&g.input(), &g.value_info()}) {
    for (const auto& v : *values) {
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape()) {
        ranks[v.name()] = v.type().tensor_type().shape().dim_size();
      }
    }
  }
  for (const auto& t : g.initializer()) ranks[t.name()] = t.dims_size();
  return ranks;
}

// ONNX 1.12's Conv and ConvTranspose shape inference index the weight's dims and the spatial
// attributes by the data's rank unchecked: a weight of rank 1 read past its dims (SIGSEGV).
absl::Status CheckConvRanks(const onnx::NodeProto& node, const absl::flat_hash_map<std::string, int>& ranks) {
  if (node.op_type() != "Conv" && node.op_type() != "ConvTranspose") return absl::OkStatus();
  auto rank_of = [&](int input) {
    if (node.input_size() <= input) return -1;
    auto it = ranks.find(node.input(input));
    return it == ranks.end() ? -1 : it->second;
  };
  const int x_rank = rank_of(0), w_rank = rank_of(1);
  if (w_rank >= 0 && w_rank < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(NodeLabel(node), ": the weight has rank ", w_rank, "; it needs at least 3"));
  }
  if (x_rank >= 0 && x_rank < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(NodeLabel(node), ": the input has rank ", x_rank, "; it needs at least 3"));
  }
  if (x_rank >= 0 && w_rank >= 0 && x_rank != w_rank) {
    return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": the input has rank ", x_rank,
                                                   " but the weight rank ", w_rank));
  }
  return absl::OkStatus();
}

// Inputs whose dims ONNX 1.12's shape inference reads without checking their rank: a declared
// rank other than this one crashed it (SIGSEGV; found by the structured fuzzer: RNN with an X
// of rank 1, STFT with a signal of rank 1). -1: any rank.
struct RankRule {
  const char* op;
  std::vector<std::pair<const char*, int>> inputs;  // In order: name, rank.
};

const std::vector<RankRule>& RankRules() {
  static const auto* rules = new std::vector<RankRule>{
      {"RNN", {{"X", 3}, {"W", 3}, {"R", 3}, {"B", 2}, {"sequence_lens", 1}, {"initial_h", 3}}},
      {"GRU", {{"X", 3}, {"W", 3}, {"R", 3}, {"B", 2}, {"sequence_lens", 1}, {"initial_h", 3}}},
      {"LSTM", {{"X", 3}, {"W", 3}, {"R", 3}, {"B", 2}, {"sequence_lens", 1}, {"initial_h", 3},
                {"initial_c", 3}, {"P", 2}}},
      {"STFT", {{"signal", 3}, {"frame_step", 0}, {"window", 1}, {"frame_length", 0}}},
  };
  return *rules;
}

absl::Status CheckDeclaredRanks(const onnx::NodeProto& node, const absl::flat_hash_map<std::string, int>& ranks) {
  for (const RankRule& rule : RankRules()) {
    if (node.op_type() != rule.op || !node.domain().empty()) continue;
    for (int i = 0; i < node.input_size() && i < static_cast<int>(rule.inputs.size()); ++i) {
      if (node.input(i).empty()) continue;
      auto it = ranks.find(node.input(i));
      const auto& [name, rank] = rule.inputs[i];
      if (it != ranks.end() && rank >= 0 && it->second != rank) {
        return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": input ", name, " has rank ",
                                                       it->second, "; it needs rank ", rank));
      }
    }
  }
  return absl::OkStatus();
}

// Lengths of the 1-D values whose shape the graph declares with a known dim.
absl::flat_hash_map<std::string, int64_t> DeclaredLengths(const onnx::GraphProto& g) {
  absl::flat_hash_map<std::string, int64_t> lengths;
  for (const auto* values : {&g.input(), &g.value_info()}) {
    for (const auto& v : *values) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
      const auto& shape = v.type().tensor_type().shape();
      if (shape.dim_size() == 1 && shape.dim(0).has_dim_value()) lengths[v.name()] = shape.dim(0).dim_value();
    }
  }
  for (const auto& t : g.initializer()) {
    if (t.dims_size() == 1) lengths[t.name()] = t.dims(0);
  }
  return lengths;
}

// Inputs that hold one value per dim of some tensor (a shape, axes, pads, scales): ONNX's
// shape inference sizes an output's rank from their declared length. Length 2^31 made it
// build an output of rank 2^31, about 100 GB of dims (found by the structured fuzzer).
const absl::flat_hash_map<std::string, std::vector<int>>& PerDimInputs() {
  static const auto* inputs = new absl::flat_hash_map<std::string, std::vector<int>>{
      {"ConstantOfShape", {0}}, {"Expand", {1}},  {"Reshape", {1}},  {"Tile", {1}},
      {"Resize", {1, 2, 3}},    {"Upsample", {1}}, {"Unsqueeze", {1}}, {"Squeeze", {1}},
      {"Pad", {1}},             {"Slice", {1, 2, 3, 4}}, {"CenterCropPad", {1}},
      {"Col2Im", {1, 2}},       {"ReduceSum", {1}},
  };
  return *inputs;
}

absl::Status CheckPerDimInputLengths(const onnx::NodeProto& node,
                                     const absl::flat_hash_map<std::string, int64_t>& lengths) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return absl::OkStatus();
  auto it = PerDimInputs().find(node.op_type());
  if (it == PerDimInputs().end()) return absl::OkStatus();
  for (int i : it->second) {
    if (i >= node.input_size() || node.input(i).empty()) continue;
    auto len = lengths.find(node.input(i));
    if (len != lengths.end() && len->second > kMaxPerDimInputLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": input ", i, " ('", node.input(i), "') declares ", len->second,
          " elements, one per dim of a tensor; at most ", kMaxPerDimInputLength, " are accepted"));
    }
  }
  return absl::OkStatus();
}

// Bytes per element of the fixed-size ONNX element types; 0 for the others.
int64_t OnnxElementBytes(int type) {
  switch (type) {
    case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8: case onnx::TensorProto::BOOL:
    case onnx::TensorProto::FLOAT8E4M3FN: case onnx::TensorProto::FLOAT8E4M3FNUZ:
    case onnx::TensorProto::FLOAT8E5M2: case onnx::TensorProto::FLOAT8E5M2FNUZ:
      return 1;
    case onnx::TensorProto::UINT16: case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

// ONNX's shape inference trusts initializers: it took a negative dim as GatherND's shape and
// read past the data's dims (SIGSEGV), and copied raw_data of 11 bytes into a vector of two
// int64s (a heap overflow, reading Slice's starts).
absl::Status CheckInitializers(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer()) {
    int64_t elements = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || !CheckedMul(elements, d, &elements)) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' has dims [",
                                                       absl::StrJoin(t.dims(), ","),
                                                       "]: negative, or too many elements"));
      }
    }
    const bool packed_4bit = t.data_type() == onnx::TensorProto::INT4 || t.data_type() == onnx::TensorProto::UINT4;
    const int64_t element_bytes = OnnxElementBytes(t.data_type());
    int64_t bytes = 0;
    if (t.has_raw_data() && packed_4bit) {
      // Two 4-bit elements per byte, the last byte half used when the count is odd.
      bytes = elements / 2 + elements % 2;
      if (static_cast<int64_t>(t.raw_data().size()) != bytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "initializer '", t.name(), "' of ", elements, " 4-bit elements needs ", bytes,
            " bytes of raw_data but has ", t.raw_data().size()));
      }
    } else if (t.has_raw_data() && element_bytes > 0 &&
               (!CheckedMul(elements, element_bytes, &bytes) ||
                static_cast<int64_t>(t.raw_data().size()) != bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", t.name(), "' of ", elements, " elements needs ", bytes,
          " bytes of raw_data but has ", t.raw_data().size()));
    }
  }
  return absl::OkStatus();
}

// `outer_lengths`: the declared lengths of the enclosing graphs' values, which a subgraph
// may read (its own declarations shadow them).
absl::Status CheckGraph(const onnx::GraphProto& g,
                        const absl::flat_hash_map<std::string, int64_t>& outer_lengths = {}) {
  SL_RETURN_IF_ERROR(CheckInitializers(g));
  const absl::flat_hash_map<std::string, int> ranks = DeclaredRanks(g);
  absl::flat_hash_map<std::string, int64_t> lengths = DeclaredLengths(g);
  for (const auto& [name, length] : outer_lengths) lengths.emplace(name, length);
  for (const auto& node : g.node()) {
    SL_RETURN_IF_ERROR(CheckNode(node));
    SL_RETURN_IF_ERROR(CheckPerDimInputLengths(node, lengths));
    SL_RETURN_IF_ERROR(CheckConvRanks(node, ranks));
    SL_RETURN_IF_ERROR(CheckDeclaredRanks(node, ranks));
    for (const auto& a : node.attribute()) {
      if (a.has_g()) SL_RETURN_IF_ERROR(CheckGraph(a.g(), lengths));
      for (const auto& sub : a.graphs()) SL_RETURN_IF_ERROR(CheckGraph(sub, lengths));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAttrsBeforeOnnx(const onnx::ModelProto& model) {
  SL_RETURN_IF_ERROR(CheckGraph(model.graph()));
  for (const auto& f : model.functions()) {
    for (const auto& node : f.node()) SL_RETURN_IF_ERROR(CheckNode(node), "function '", f.name(), "'");
  }
  return absl::OkStatus();
}

}  // namespace sluice
