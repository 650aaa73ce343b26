#include "fuzz/onnx_mutator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sluice {
namespace fuzz {
namespace {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

const int64_t kExtremeInts[] = {0, 1, -1, 2, -2, 3, 7, kInt64Min, kInt64Max, kInt64Min + 1,
                                int64_t{1} << 62, int64_t{1} << 31, -(int64_t{1} << 31),
                                std::numeric_limits<int32_t>::max(), 65536, int64_t{1} << 40};
const float kExtremeFloats[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e30f, -1e30f, 1e-30f, 3.4e38f,
                                std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
const int64_t kExtremeDims[] = {0, 1, 2, 3, -1, -7, int64_t{1} << 31, int64_t{1} << 40,
                                int64_t{1} << 62, kInt64Max};

// Attribute names real ops read, so a new attribute is usually one a converter looks at.
const char* const kAttrNames[] = {
    "axis", "axes", "kernel_shape", "strides", "pads", "dilations", "group", "perm",
    "keepdims", "alpha", "beta", "gamma", "epsilon", "mode", "scales", "sizes", "k",
    "blocksize", "to", "batch_dims", "split", "auto_pad", "ceil_mode", "count_include_pad",
    "output_padding", "output_shape", "transA", "transB", "largest", "sorted", "direction",
    "hidden_size", "reduction", "coordinate_transformation_mode", "exclusive", "reverse",
    "num_outputs", "value", "dtype", "shape", "seed", "high", "low", "mean", "scale",
    "storage_order", "p", "select_last_index", "noop_with_empty_axes", "start", "end",
    "upper", "center_point_box", "output_height", "output_width", "sampling_ratio",
    "spatial_scale", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"};

// Real ONNX ops across families, for op_type changes and new nodes.
const char* const kOps[] = {
    "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Relu", "Sigmoid", "Softmax", "LogSoftmax",
    "MatMul", "Gemm", "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
    "LpPool", "BatchNormalization", "InstanceNormalization", "LayerNormalization", "LRN",
    "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
    "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Expand", "Tile",
    "Pad", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth", "ReduceSum", "ReduceMean",
    "ReduceMax", "ReduceProd", "ArgMax", "ArgMin", "TopK", "CumSum", "Cast", "Shape", "Size",
    "ConstantOfShape", "Range", "OneHot", "Where", "Einsum", "Trilu", "Clip", "Neg", "Abs",
    "Sqrt", "Reciprocal", "Identity", "Dropout", "Hardmax", "NonZero", "Compress", "ReverseSequence",
    "RoiAlign", "NonMaxSuppression", "GridSample", "DFT", "STFT", "QuantizeLinear",
    "DequantizeLinear", "QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger",
    "LSTM", "GRU", "RNN", "Unique", "Col2Im", "CenterCropPad", "BitShift", "Det", "MaxUnpool",
    "MaxRoiPool", "Mean", "Max", "Min", "Sum", "Einsum", "EyeLike", "RandomNormalLike"};

// ONNX element types Sluice knows, and a few it does not.
const int kElemTypes[] = {TensorProto::FLOAT, TensorProto::DOUBLE, TensorProto::FLOAT16,
                          TensorProto::INT8, TensorProto::UINT8, TensorProto::INT16,
                          TensorProto::INT32, TensorProto::INT64, TensorProto::UINT64,
                          TensorProto::BOOL, TensorProto::STRING, TensorProto::BFLOAT16,
                          TensorProto::COMPLEX64, 0, 99};

template <typename T, size_t N>
const T& Pick(const T (&items)[N], std::mt19937* rng) {
  return items[(*rng)() % N];
}

uint32_t Below(std::mt19937* rng, uint32_t n) { return n == 0 ? 0 : (*rng)() % n; }

int64_t ExtremeInt(std::mt19937* rng) {
  return Below(rng, 4) == 0 ? static_cast<int64_t>((*rng)() % 9) - 4 : Pick(kExtremeInts, rng);
}

void SetExtremeValue(AttributeProto* attr, std::mt19937* rng) {
  const std::string name = attr->name();
  attr->Clear();
  attr->set_name(name);
  switch (Below(rng, 6)) {
    case 0:
      attr->set_type(AttributeProto::INT);
      attr->set_i(ExtremeInt(rng));
      break;
    case 1: {
      attr->set_type(AttributeProto::INTS);
      // Empty, a usual length, or oversized.
      const uint32_t n = Below(rng, 5) == 0 ? 0 : Below(rng, 8) == 0 ? 64 + Below(rng, 64) : 1 + Below(rng, 6);
      for (uint32_t i = 0; i < n; ++i) attr->add_ints(ExtremeInt(rng));
      break;
    }
    case 2:
      attr->set_type(AttributeProto::FLOAT);
      attr->set_f(Pick(kExtremeFloats, rng));
      break;
    case 3: {
      attr->set_type(AttributeProto::FLOATS);
      const uint32_t n = Below(rng, 5) == 0 ? 0 : 1 + Below(rng, 6);
      for (uint32_t i = 0; i < n; ++i) attr->add_floats(Pick(kExtremeFloats, rng));
      break;
    }
    case 4: {
      static const char* const kStrings[] = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID",
                                             "constant", "reflect", "edge", "nearest", "linear",
                                             "cubic", "half_pixel", "asymmetric", "tf_crop_and_resize",
                                             "bogus", "ij,jk->ik", "...", "RIGHT", "LEFT"};
      attr->set_type(AttributeProto::STRING);
      attr->set_s(Pick(kStrings, rng));
      break;
    }
    default: {  // A tensor attribute (Constant's value, ConstantOfShape's).
      attr->set_type(AttributeProto::TENSOR);
      TensorProto* t = attr->mutable_t();
      t->set_data_type(TensorProto::INT64);
      const uint32_t rank = Below(rng, 3);
      int64_t elements = 1;
      for (uint32_t i = 0; i < rank; ++i) {
        const int64_t d = Below(rng, 3);
        t->add_dims(d);
        elements *= d;
      }
      for (int64_t i = 0; i < elements; ++i) t->add_int64_data(ExtremeInt(rng));
      break;
    }
  }
}

// Every value name a node may read: graph inputs, initializers and node outputs.
std::vector<std::string> ValueNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& v : g.input()) names.push_back(v.name());
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) names.push_back(o);
  }
  return names;
}

// Keeps a tensor's data consistent with new dims when it is small, so the change reaches
// past the "data does not match dims" check sometimes; otherwise leaves the mismatch.
void ResizeData(TensorProto* t, std::mt19937* rng) {
  int64_t elements = 1;
  for (int64_t d : t->dims()) {
    if (d < 0 || d > 64) return;
    elements *= d;
    if (elements > 256) return;
  }
  t->clear_raw_data();
  t->clear_float_data();
  t->clear_int32_data();
  t->clear_int64_data();
  t->clear_double_data();
  t->clear_uint64_data();
  t->clear_string_data();
  for (int64_t i = 0; i < elements; ++i) {
    switch (t->data_type()) {
      case TensorProto::FLOAT: t->add_float_data(Pick(kExtremeFloats, rng)); break;
      case TensorProto::DOUBLE: t->add_double_data(Pick(kExtremeFloats, rng)); break;
      case TensorProto::INT64: t->add_int64_data(ExtremeInt(rng)); break;
      case TensorProto::UINT64: t->add_uint64_data(static_cast<uint64_t>(ExtremeInt(rng))); break;
      case TensorProto::STRING: t->add_string_data("s"); break;
      default: t->add_int32_data(static_cast<int32_t>(ExtremeInt(rng))); break;
    }
  }
}

void MutateAttribute(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  if (g->node_size() == 0) return;
  NodeProto* node = g->mutable_node(Below(rng, g->node_size()));
  if (node->attribute_size() > 0 && Below(rng, 2) == 0) {
    SetExtremeValue(node->mutable_attribute(Below(rng, node->attribute_size())), rng);
    return;
  }
  const std::string name = Pick(kAttrNames, rng);
  for (auto& a : *node->mutable_attribute()) {
    if (a.name() == name) {
      SetExtremeValue(&a, rng);
      return;
    }
  }
  AttributeProto* a = node->add_attribute();
  a->set_name(name);
  SetExtremeValue(a, rng);
}

void MutateDims(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  if (g->initializer_size() > 0 && Below(rng, 2) == 0) {
    TensorProto* t = g->mutable_initializer(Below(rng, g->initializer_size()));
    if (t->dims_size() > 0 && Below(rng, 3) != 0) {
      t->set_dims(Below(rng, t->dims_size()), Pick(kExtremeDims, rng));
    } else if (Below(rng, 2) == 0) {
      t->add_dims(Pick(kExtremeDims, rng));
    } else {
      t->clear_dims();
    }
    if (Below(rng, 2) == 0) ResizeData(t, rng);
    return;
  }
  if (g->input_size() == 0) return;
  auto* type = g->mutable_input(Below(rng, g->input_size()))->mutable_type();
  if (!type->has_tensor_type()) return;
  auto* shape = type->mutable_tensor_type()->mutable_shape();
  if (shape->dim_size() > 0 && Below(rng, 3) != 0) {
    shape->mutable_dim(Below(rng, shape->dim_size()))->set_dim_value(Pick(kExtremeDims, rng));
  } else if (Below(rng, 2) == 0) {
    shape->add_dim()->set_dim_value(Pick(kExtremeDims, rng));
  } else {
    type->mutable_tensor_type()->clear_shape();
  }
}

void MutateType(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  const int type = Pick(kElemTypes, rng);
  if (g->initializer_size() > 0 && Below(rng, 2) == 0) {
    TensorProto* t = g->mutable_initializer(Below(rng, g->initializer_size()));
    t->set_data_type(type);
    if (Below(rng, 2) == 0) ResizeData(t, rng);
    return;
  }
  auto* values = Below(rng, 2) == 0 ? g->mutable_input() : g->mutable_output();
  if (values->empty()) return;
  auto* tt = values->Mutable(Below(rng, values->size()))->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
}

void Rewire(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  if (g->node_size() == 0) return;
  NodeProto* node = g->mutable_node(Below(rng, g->node_size()));
  std::vector<std::string> names = ValueNames(*g);
  names.push_back("");  // An omitted optional input.
  const std::string& pick = names[Below(rng, names.size())];
  if (node->input_size() > 0 && Below(rng, 3) != 0) {
    node->set_input(Below(rng, node->input_size()), pick);
  } else if (Below(rng, 2) == 0) {
    node->add_input(pick);
  } else if (node->input_size() > 0) {
    node->mutable_input()->RemoveLast();
  }
}

void ChangeOp(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  if (g->node_size() == 0) return;
  g->mutable_node(Below(rng, g->node_size()))->set_op_type(Pick(kOps, rng));
}

void AddNode(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  std::vector<std::string> names = ValueNames(*g);
  NodeProto* node = g->add_node();
  node->set_op_type(Pick(kOps, rng));
  node->set_name("fuzz_" + std::to_string((*rng)() % 100000));
  const uint32_t inputs = names.empty() ? 0 : 1 + Below(rng, 3);
  for (uint32_t i = 0; i < inputs; ++i) node->add_input(names[Below(rng, names.size())]);
  const std::string out = node->name() + "_out";
  node->add_output(out);
  if (Below(rng, 2) == 0) {
    AttributeProto* a = node->add_attribute();
    a->set_name(Pick(kAttrNames, rng));
    SetExtremeValue(a, rng);
  }
  // Make it a graph output so that it is not pruned away before it runs.
  auto* value = g->add_output();
  value->set_name(out);
  if (Below(rng, 2) == 0) value->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
}

void DropNode(ModelProto* model, std::mt19937* rng) {
  auto* nodes = model->mutable_graph()->mutable_node();
  if (nodes->empty()) return;
  nodes->DeleteSubrange(Below(rng, nodes->size()), 1);
}

void ChangeOpset(ModelProto* model, std::mt19937* rng) {
  if (model->opset_import_size() == 0) model->add_opset_import()->set_domain("");
  auto* opset = model->mutable_opset_import(Below(rng, model->opset_import_size()));
  static const int64_t kVersions[] = {1, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, -1, 1000};
  opset->set_version(Pick(kVersions, rng));
  if (Below(rng, 4) == 0) model->set_ir_version(Below(rng, 12));
}

void MutateInitializerValues(ModelProto* model, std::mt19937* rng) {
  auto* g = model->mutable_graph();
  if (g->initializer_size() == 0) return;
  ResizeData(g->mutable_initializer(Below(rng, g->initializer_size())), rng);
}

ModelProto MakeModel(const std::vector<NodeProto>& nodes, int rank, int64_t opset) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("seed");
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  for (int i = 0; i < rank; ++i) tt->mutable_shape()->add_dim()->set_dim_value(i == 0 ? 1 : 2 + i);
  for (const auto& n : nodes) *g->add_node() = n;
  auto* y = g->add_output();
  y->set_name(nodes.back().output(0));
  return m;
}

NodeProto Node(const char* op, std::vector<std::string> inputs, const char* output) {
  NodeProto n;
  n.set_op_type(op);
  for (auto& i : inputs) n.add_input(i);
  n.add_output(output);
  return n;
}

}  // namespace

ModelProto SeedOnnxModel(unsigned which) {
  switch (which % 4) {
    case 0:
      return MakeModel({Node("Relu", {"x"}, "y")}, 2, 17);
    case 1: {
      NodeProto pool = Node("MaxPool", {"x"}, "y");
      AttributeProto* k = pool.add_attribute();
      k->set_name("kernel_shape");
      k->set_type(AttributeProto::INTS);
      k->add_ints(2);
      k->add_ints(2);
      return MakeModel({pool}, 4, 13);
    }
    case 2: {
      ModelProto m = MakeModel({Node("Reshape", {"x", "shape"}, "y")}, 3, 14);
      TensorProto* shape = m.mutable_graph()->add_initializer();
      shape->set_name("shape");
      shape->set_data_type(TensorProto::INT64);
      shape->add_dims(2);
      shape->add_int64_data(-1);
      shape->add_int64_data(4);
      return m;
    }
    default:
      return MakeModel({Node("Add", {"x", "x"}, "s"), Node("Softmax", {"s"}, "y")}, 2, 13);
  }
}

void MutateOnnxModel(ModelProto* model, std::mt19937* rng) {
  if (!model->has_graph()) *model = SeedOnnxModel((*rng)());
  switch (Below(rng, 10)) {
    case 0: case 1: case 2: MutateAttribute(model, rng); break;
    case 3: MutateDims(model, rng); break;
    case 4: MutateType(model, rng); break;
    case 5: Rewire(model, rng); break;
    case 6: ChangeOp(model, rng); break;
    case 7: Below(rng, 3) == 0 ? DropNode(model, rng) : AddNode(model, rng); break;
    case 8: ChangeOpset(model, rng); break;
    default: MutateInitializerValues(model, rng); break;
  }
}

void CrossOverOnnxModels(const ModelProto& from, ModelProto* into, std::mt19937* rng) {
  if (!from.has_graph() || !into->has_graph()) return;
  const auto& src = from.graph();
  auto* dst = into->mutable_graph();
  switch (Below(rng, 3)) {
    case 0:
      if (src.node_size() > 0) *dst->add_node() = src.node(Below(rng, src.node_size()));
      break;
    case 1:
      if (src.initializer_size() > 0) {
        *dst->add_initializer() = src.initializer(Below(rng, src.initializer_size()));
      }
      break;
    default:
      if (src.input_size() > 0) *dst->add_input() = src.input(Below(rng, src.input_size()));
      break;
  }
}

}  // namespace fuzz
}  // namespace sluice
