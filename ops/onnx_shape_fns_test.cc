// The ONNX ops' shape functions against ONNX's definitions, worked by hand: constant inputs
// read, clamping, negative axes and steps; unknown dims stay unknown; hostile constants are an
// error or an unknown shape, never a crash or a wrong size.
#include "ops/onnx_shape_fns.h"

#include <optional>
#include <string>
#include <vector>

#include "framework/node_def_util.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

PartialShape S(std::vector<int64_t> dims) { return PartialShape(absl::MakeConstSpan(dims)); }
Tensor I64(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())})); }

struct Input {
  PartialShape shape;
  std::optional<Tensor> value;
};

// Output `k` of `op` (attrs from `attrs`, defaults filled) for `inputs`; the status of the shape
// function in *status.
PartialShape Infer(const std::string& op, std::vector<Input> inputs, absl::Status* status = nullptr,
                   std::function<void(NodeDef*)> attrs = nullptr, int k = 0) {
  auto reg = OpRegistry::Global()->LookUp(op);
  EXPECT_OK(reg);
  NodeDef node;
  node.set_name("n");
  node.set_op(op);
  if (attrs) attrs(&node);
  AddDefaultsToNodeDef((*reg)->op_def, &node);
  std::vector<PartialShape> shapes;
  std::vector<const Tensor*> values;
  for (const Input& in : inputs) {
    shapes.push_back(in.shape);
    values.push_back(in.value ? &*in.value : nullptr);
  }
  int outputs = 0;
  EXPECT_OK(NumOutputsForNode(node, (*reg)->op_def, &outputs));
  InferenceContext c(node, (*reg)->op_def, shapes, values, outputs);
  absl::Status s = (*reg)->shape_fn(&c);
  if (status != nullptr) *status = s;
  return c.output(k);
}

void ListAttr(NodeDef* n, const char* name, int count) {
  auto* list = (*n->mutable_attr())[name].mutable_list();
  for (int i = 0; i < count; ++i) list->add_type(DT_INT64);
}

TEST(OnnxShapeFnsTest, SliceClampsAndStepsAsOnnxDefines) {
  auto slice = [](PartialShape in, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps) {
    return Infer("Onnx>Slice", {{in, {}}, {S({1}), I64(starts)}, {S({1}), I64(ends)}, {S({1}), I64(axes)},
                                {S({1}), I64(steps)}},
                 nullptr, [](NodeDef* n) {
                   (*n->mutable_attr())["T"].set_type(DT_FLOAT);
                   (*n->mutable_attr())["Tind"].set_type(DT_INT64);
                   ListAttr(n, "Taxes", 1);
                   ListAttr(n, "Tsteps", 1);
                 });
  };
  EXPECT_EQ(slice(S({2, 10}), {2}, {7}, {1}, {1}), S({2, 5}));
  EXPECT_EQ(slice(S({2, 10}), {2}, {7}, {1}, {2}), S({2, 3}));              // 2, 4, 6
  EXPECT_EQ(slice(S({2, 10}), {-3}, {INT64_MAX}, {-1}, {1}), S({2, 3}));    // The last three.
  EXPECT_EQ(slice(S({2, 10}), {INT64_MAX}, {INT64_MIN}, {1}, {-1}), S({2, 10}));  // Reversed.
  EXPECT_EQ(slice(S({2, 10}), {8}, {2}, {1}, {-3}), S({2, 2}));             // 8, 5
  EXPECT_EQ(slice(S({2, 10}), {7}, {2}, {1}, {1}), S({2, 0}));              // Empty.
  EXPECT_EQ(slice(S({2, -1}), {0}, {1}, {1}, {1}), S({2, -1}));             // Unknown stays.
  absl::Status bad;
  Infer("Onnx>Slice", {{S({2, 10}), {}}, {S({1}), I64({0})}, {S({1}), I64({1})}, {S({1}), I64({5})}, {S({1}), I64({1})}},
        &bad, [](NodeDef* n) {
          (*n->mutable_attr())["T"].set_type(DT_FLOAT);
          (*n->mutable_attr())["Tind"].set_type(DT_INT64);
          ListAttr(n, "Taxes", 1);
          ListAttr(n, "Tsteps", 1);
        });
  EXPECT_FALSE(bad.ok());  // Axis 5 of a 2-D tensor.
}

TEST(OnnxShapeFnsTest, ReshapeUnsqueezeConcatGatherPad) {
  auto t = [](NodeDef* n) { (*n->mutable_attr())["T"].set_type(DT_FLOAT); };
  EXPECT_EQ(Infer("Onnx>Reshape", {{S({2, 3, 4}), {}}, {S({2}), I64({0, -1})}}, nullptr, t), S({2, 12}));
  EXPECT_EQ(Infer("Onnx>Reshape", {{S({2, -1, 4}), {}}, {S({2}), I64({0, -1})}}, nullptr, t), S({2, -1}));
  EXPECT_EQ(Infer("Onnx>Unsqueeze", {{S({3, 4}), {}}, {S({2}), I64({0, -1})}}, nullptr, t), S({1, 3, 4, 1}));
  EXPECT_EQ(Infer("Onnx>Concat", {{S({2, 3}), {}}, {S({2, 5}), {}}}, nullptr,
                  [](NodeDef* n) {
                    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
                    (*n->mutable_attr())["N"].set_i(2);
                    (*n->mutable_attr())["axis"].set_i(-1);
                  }),
            S({2, 8}));
  EXPECT_EQ(Infer("Onnx>Gather", {{S({5, 6, 7}), {}}, {S({2, 3}), {}}}, nullptr,
                  [](NodeDef* n) {
                    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
                    (*n->mutable_attr())["Tind"].set_type(DT_INT64);
                    (*n->mutable_attr())["axis"].set_i(1);
                  }),
            S({5, 2, 3, 7}));
  auto pad = [](NodeDef* n) {
    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
    ListAttr(n, "Tvalue", 0);
    ListAttr(n, "Taxes", 0);
  };
  EXPECT_EQ(Infer("Onnx>Pad", {{S({1, 3, 5, 5}), {}}, {S({8}), I64({0, 0, 1, 2, 0, 0, 3, -1})}}, nullptr, pad),
            S({1, 3, 9, 6}));
  // 2^62 + 2^62 overflows: the dim becomes unknown, not a wrapped size.
  EXPECT_EQ(Infer("Onnx>Pad", {{S({int64_t{1} << 62}), {}}, {S({2}), I64({int64_t{1} << 62, int64_t{1} << 62})}},
                  nullptr, pad),
            S({-1}));
}

TEST(OnnxShapeFnsTest, NormalizationsKeepTheirInputsShape) {
  // The pipeline placement costs nodes by these shapes: DenseNet's unfolded BatchNorms once
  // left every later shape unknown, and its cut fell after six nodes.
  auto f = [](NodeDef* n) {
    for (const char* a : {"T", "T1", "T2"}) (*n->mutable_attr())[a].set_type(DT_FLOAT);
  };
  const std::vector<Input> bn = {{S({1, 96, 56, 56}), {}}, {S({96}), {}}, {S({96}), {}}, {S({96}), {}}, {S({96}), {}}};
  EXPECT_EQ(Infer("Onnx>BatchNormalization", bn, nullptr, f), S({1, 96, 56, 56}));
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(Infer("Onnx>BatchNormalization", bn, nullptr, f, k), S({96})) << k;
  // A malformed node without the statistics: y still follows x, the rest stay unknown.
  const std::vector<Input> short_bn = {{S({1, 8, 4, 4}), {}}, {S({8}), {}}, {S({8}), {}}};
  EXPECT_EQ(Infer("Onnx>BatchNormalization", short_bn, nullptr, f), S({1, 8, 4, 4}));
  EXPECT_TRUE(Infer("Onnx>BatchNormalization", short_bn, nullptr, f, 1).unknown_rank());
  auto t = [](NodeDef* n) { (*n->mutable_attr())["T"].set_type(DT_FLOAT); };
  EXPECT_EQ(Infer("Onnx>InstanceNormalization", {{S({2, 8, 5, 5}), {}}, {S({8}), {}}, {S({8}), {}}}, nullptr, t),
            S({2, 8, 5, 5}));
  EXPECT_EQ(Infer("Onnx>LRN", {{S({1, 64, 27, 27}), {}}}, nullptr,
                  [](NodeDef* n) {
                    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
                    (*n->mutable_attr())["size"].set_i(5);
                  }),
            S({1, 64, 27, 27}));
}

TEST(OnnxShapeFnsTest, RangeExpandConstantOfShapeAndMatMul) {
  auto i64 = [](NodeDef* n) { (*n->mutable_attr())["T"].set_type(DT_INT64); };
  EXPECT_EQ(Infer("Onnx>Range", {{S({}), I64({1})}, {S({}), I64({10})}, {S({}), I64({3})}}, nullptr, i64), S({3}));
  EXPECT_EQ(Infer("Onnx>Range", {{S({}), I64({10})}, {S({}), I64({1})}, {S({}), I64({1})}}, nullptr, i64), S({0}));
  EXPECT_EQ(Infer("Onnx>Expand", {{S({3, 1}), {}}, {S({3}), I64({2, 1, 4})}}, nullptr,
                  [](NodeDef* n) { (*n->mutable_attr())["T"].set_type(DT_FLOAT); }),
            S({2, 3, 4}));
  EXPECT_EQ(Infer("Onnx>ConstantOfShape", {{S({2}), I64({4, 5})}}, nullptr,
                  [](NodeDef* n) {
                    (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
                    Tensor::Scalar<float>(0).AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
                  }),
            S({4, 5}));
  EXPECT_EQ(Infer("BatchMatMulV2", {{S({7, 1, 2, 3}), {}}, {S({5, 4, 3}), {}}}, nullptr,
                  [](NodeDef* n) {
                    (*n->mutable_attr())["T"].set_type(DT_FLOAT);
                    (*n->mutable_attr())["adj_y"].set_b(true);
                  }),
            S({7, 5, 2, 4}));
}

}  // namespace
}  // namespace sluice
