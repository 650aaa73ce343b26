// Checks the gradient functions of activation_gradients.cc, reduction_gradients.cc,
// indexing_gradients.cc, normalization_gradients.cc and second_order_gradients.cc against
// central finite differences in double precision. As in gradient_check_nn_test.cc, outputs are weighted by a random input
// before summing, so that a gradient routed to the wrong element shows.
#include "frontend/gradients/gradient_check_util.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using gradient_check::Case;
using gradient_check::Check;
using gradient_check::FloatAttr;
using gradient_check::GradientOp;
using gradient_check::Int64Tensor;
using gradient_check::IntAttr;
using gradient_check::IntsAttr;
using gradient_check::Node;
using gradient_check::StringAttr;

onnx::TensorProto DoubleTensor(const std::string& name, const std::vector<double>& values,
                               const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::DOUBLE);
  for (int64_t d : dims) t.add_dims(d);
  for (double v : values) t.add_double_data(v);
  return t;
}

std::vector<onnx::NodeProto> Weighted(const std::string& op, std::vector<std::string> in, const std::string& weights,
                                      std::vector<onnx::AttributeProto> attrs = {}) {
  return {Node(op, std::move(in), "t", std::move(attrs)), Node("Mul", {"t", weights}, "y")};
}

TEST(GradientCheckMoreTest, Activations) {
  Check({"elu", Weighted("Elu", {"a"}, "b", {FloatAttr("alpha", 0.7f)}), {{3, 4}, {3, 4}}});
  Check({"selu", Weighted("Selu", {"a"}, "b"), {{3, 4}, {3, 4}}});
  Check({"selu_attrs", Weighted("Selu", {"a"}, "b", {FloatAttr("alpha", 1.5f), FloatAttr("gamma", 0.8f)}),
         {{3, 4}, {3, 4}}});
  Check({"celu", Weighted("Celu", {"a"}, "b", {FloatAttr("alpha", 0.8f)}), {{3, 4}, {3, 4}}});
  Check({"softplus", Weighted("Softplus", {"a"}, "b"), {{3, 4}, {3, 4}}, -4, 4});
  Check({"softsign", Weighted("Softsign", {"a"}, "b"), {{3, 4}, {3, 4}}});
  // alpha 0.4: the linear part is -1.25 < x < 1.25, so both clipped sides are sampled.
  Check({"hard_sigmoid", Weighted("HardSigmoid", {"a"}, "b", {FloatAttr("alpha", 0.4f), FloatAttr("beta", 0.5f)}),
         {{4, 5}, {4, 5}}});
  Case hard_swish{"hard_swish", Weighted("HardSwish", {"a"}, "b"), {{4, 5}, {4, 5}}, -5, 5};
  hard_swish.opset = 14;
  Check(hard_swish);
  Check({"thresholded_relu", Weighted("ThresholdedRelu", {"a"}, "b", {FloatAttr("alpha", 0.5f)}), {{3, 4}, {3, 4}}});
}

TEST(GradientCheckMoreTest, PReluBothInputsBroadcast) {
  // The slope broadcasts along the batch, along the last dim, or is one value.
  Check({"prelu_channels", Weighted("PRelu", {"a", "b"}, "c"), {{2, 3, 4}, {3, 1}, {2, 3, 4}}});
  Check({"prelu_last", Weighted("PRelu", {"a", "b"}, "c"), {{2, 3, 4}, {4}, {2, 3, 4}}});
  Check({"prelu_scalar", Weighted("PRelu", {"a", "b"}, "c"), {{3, 4}, {1}, {3, 4}}});
  Check({"prelu_full", Weighted("PRelu", {"a", "b"}, "c"), {{3, 4}, {3, 4}, {3, 4}}});
}

TEST(GradientCheckMoreTest, Reductions) {
  Check({"reduce_prod", Weighted("ReduceProd", {"a"}, "b", {IntsAttr("axes", {1}), IntAttr("keepdims", 0)}),
         {{2, 3, 4}, {2, 4}}});
  Check({"reduce_prod_all", Weighted("ReduceProd", {"a"}, "b"), {{2, 3}, {1, 1}}});
  // Zeros: a row with one zero (the zero's gradient is the product of the others), a row with
  // two (every gradient is zero), a row with none.
  Check({"reduce_prod_zeros",
         {Node("Mul", {"a", "mask"}, "m"), Node("ReduceProd", {"m"}, "t", {IntsAttr("axes", {1})}),
          Node("Mul", {"t", "b"}, "y")},
         {{3, 3}, {3, 1}},
         -2,
         2,
         {DoubleTensor("mask", {1, 0, 1, 0, 1, 0, 1, 1, 1}, {3, 3})}});
  Check({"reduce_l1", Weighted("ReduceL1", {"a"}, "b", {IntsAttr("axes", {0, 2})}), {{2, 3, 4}, {1, 3, 1}}});
  Check({"reduce_l2", Weighted("ReduceL2", {"a"}, "b", {IntsAttr("axes", {-1}), IntAttr("keepdims", 0)}),
         {{2, 3, 4}, {2, 3}}});
  Check({"reduce_l2_all", Weighted("ReduceL2", {"a"}, "b", {IntAttr("keepdims", 0)}), {{2, 3}, {}}});
  Check({"reduce_log_sum", Weighted("ReduceLogSum", {"a"}, "b", {IntsAttr("axes", {1})}), {{2, 3, 4}, {2, 1, 4}}, 0.5,
         2});
  Check({"reduce_log_sum_exp", Weighted("ReduceLogSumExp", {"a"}, "b", {IntsAttr("axes", {0}), IntAttr("keepdims", 0)}),
         {{3, 4}, {4}}});
  Check({"reduce_sum_square", Weighted("ReduceSumSquare", {"a"}, "b", {IntsAttr("axes", {1, 2})}),
         {{2, 3, 4}, {2, 1, 1}}});
}

TEST(GradientCheckMoreTest, PadConstant) {
  // Pads [begin..., end...]; the constant value ("b") is differentiated too.
  Check({"pad", Weighted("Pad", {"a", "pads", "b"}, "c"), {{2, 3}, {}, {3, 6}}, -2, 2,
         {Int64Tensor("pads", {0, 1, 1, 2}, {4})}});
  Check({"pad_crop", Weighted("Pad", {"a", "pads"}, "b"), {{3, 4, 2}, {4, 3, 3}}, -2, 2,
         {Int64Tensor("pads", {1, -1, 0, 0, 0, 1}, {6})}});
}

TEST(GradientCheckMoreTest, Tile) {
  Check({"tile_2d", Weighted("Tile", {"a", "r"}, "b"), {{2, 3}, {4, 6}}, -2, 2, {Int64Tensor("r", {2, 2}, {2})}});
  Check({"tile_3d", Weighted("Tile", {"a", "r"}, "b"), {{2, 1, 3}, {2, 3, 6}}, -2, 2,
         {Int64Tensor("r", {1, 3, 2}, {3})}});
}

TEST(GradientCheckMoreTest, CumSum) {
  for (int exclusive : {0, 1}) {
    for (int reverse : {0, 1}) {
      Check({"cumsum", Weighted("CumSum", {"a", "axis"}, "b", {IntAttr("exclusive", exclusive), IntAttr("reverse", reverse)}),
             {{3, 4}, {3, 4}}, -2, 2, {Int64Tensor("axis", {1}, {})}});
    }
  }
  Check({"cumsum_axis0", Weighted("CumSum", {"a", "axis"}, "b"), {{3, 2, 2}, {3, 2, 2}}, -2, 2,
         {Int64Tensor("axis", {-3}, {})}});
}

TEST(GradientCheckMoreTest, GatherAndScatter) {
  // Repeated and negative indices: the gradient accumulates.
  Check({"gather_elements", Weighted("GatherElements", {"a", "i"}, "b", {IntAttr("axis", 1)}), {{3, 4}, {3, 3}}, -2, 2,
         {Int64Tensor("i", {0, 0, 3, -1, 2, 1, 1, 1, 1}, {3, 3})}});
  Check({"gather_elements_axis0", Weighted("GatherElements", {"a", "i"}, "b"), {{3, 2}, {2, 2}}, -2, 2,
         {Int64Tensor("i", {2, 0, 2, 2}, {2, 2})}});
  Check({"gather_nd", Weighted("GatherND", {"a", "i"}, "b"), {{3, 4}, {3}}, -2, 2,
         {Int64Tensor("i", {0, 1, 2, 3, 0, 1}, {3, 2})}});
  // ScatterND with respect to data (the overwritten rows get nothing) and updates.
  Check({"scatter_nd_rows", Weighted("ScatterND", {"a", "i", "b"}, "c"), {{4, 3}, {2, 3}, {4, 3}}, -2, 2,
         {Int64Tensor("i", {1, 3}, {2, 1})}});
  Check({"scatter_nd_elements", Weighted("ScatterND", {"a", "i", "b"}, "c"), {{3, 3}, {2}, {3, 3}}, -2, 2,
         {Int64Tensor("i", {0, 1, 2, 2}, {2, 2})}});
  Case add{"scatter_nd_add", Weighted("ScatterND", {"a", "i", "b"}, "c", {StringAttr("reduction", "add")}),
           {{4, 3}, {3, 3}, {4, 3}}, -2, 2, {Int64Tensor("i", {1, 3, 1}, {3, 1})}};
  add.opset = 16;
  Check(add);
  Check({"scatter_elements", Weighted("ScatterElements", {"a", "i", "b"}, "c", {IntAttr("axis", 1)}),
         {{3, 4}, {3, 2}, {3, 4}}, -2, 2, {Int64Tensor("i", {0, 2, 3, 1, 1, 0}, {3, 2})}});
}

TEST(GradientCheckMoreTest, LayerNormalization) {
  Case last{"layer_norm_last", Weighted("LayerNormalization", {"a", "b", "c"}, "d", {FloatAttr("epsilon", 1e-3f)}),
            {{2, 3, 4}, {4}, {4}, {2, 3, 4}}};
  last.opset = 17;
  Check(last);
  // Axis 1 normalizes [3, 4]; scale covers it all, B broadcasts along the rows; no B.
  Case inner{"layer_norm_axis1", Weighted("LayerNormalization", {"a", "b", "c"}, "d", {IntAttr("axis", 1)}),
             {{2, 3, 4}, {3, 4}, {4}, {2, 3, 4}}};
  inner.opset = 17;
  Check(inner);
  Case no_bias{"layer_norm_no_bias", Weighted("LayerNormalization", {"a", "b"}, "c", {IntAttr("axis", -2)}),
               {{2, 3, 4}, {3, 4}, {2, 3, 4}}};
  no_bias.opset = 17;
  Check(no_bias);
}

TEST(GradientCheckMoreTest, InstanceNormalization) {
  Check({"instance_norm", Weighted("InstanceNormalization", {"a", "b", "c"}, "d", {FloatAttr("epsilon", 1e-3f)}),
         {{2, 3, 2, 3}, {3}, {3}, {2, 3, 2, 3}}});
  Check({"instance_norm_1d", Weighted("InstanceNormalization", {"a", "b", "c"}, "d"), {{2, 2, 5}, {2}, {2}, {2, 2, 5}}});
}

// ConvTranspose's double kernel still accumulates in float, which small steps cannot see
// through; the sum is linear in each input, so a large step is exact.
void CheckLinear(Case c) {
  c.eps = 1e-2;
  c.abs_tolerance = 1e-4;
  Check(c);
}

TEST(GradientCheckMoreTest, ConvTranspose) {
  CheckLinear({"conv_transpose_strides_pads_output_padding",
               Weighted("ConvTranspose", {"a", "b", "c"}, "d",
                        {IntsAttr("strides", {2, 2}), IntsAttr("pads", {1, 1, 1, 1}), IntsAttr("output_padding", {1, 1})}),
               {{1, 2, 3, 3}, {2, 3, 3, 3}, {3}, {1, 3, 6, 6}}});
  CheckLinear({"conv_transpose_groups_dilations",
               Weighted("ConvTranspose", {"a", "b"}, "c", {IntAttr("group", 2), IntsAttr("dilations", {2, 2})}),
               {{1, 4, 3, 3}, {4, 1, 2, 2}, {1, 2, 5, 5}}});
  CheckLinear({"conv_transpose_1d",
               Weighted("ConvTranspose", {"a", "b", "c"}, "d", {IntsAttr("strides", {2}), IntsAttr("pads", {1, 0})}),
               {{2, 2, 4}, {2, 2, 3}, {2}, {2, 2, 8}}});
}

// Gradients of gradients: the harness differentiates the inner Gradient's output (weighted).
TEST(GradientCheckMoreTest, SecondOrderThroughMaxPool) {
  Check({"second_order_maxpool",
         {Node("MaxPool", {"a"}, "p", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2})}),
          Node("Mul", {"p", "p"}, "q"), Node("Mul", {"q", "c"}, "o"), GradientOp({"a"}, {"c"}, "o", {"ga"}),
          Node("Mul", {"ga", "b"}, "y")},
         {{1, 2, 4, 4}, {1, 2, 4, 4}, {1, 2, 2, 2}}});
  Check({"second_order_maxpool_overlapping",
         {Node("MaxPool", {"a"}, "p", {IntsAttr("kernel_shape", {3}), IntsAttr("pads", {1, 1})}),
          Node("Tanh", {"p"}, "q"), Node("Mul", {"q", "c"}, "o"), GradientOp({"a"}, {"c"}, "o", {"ga"}),
          Node("Mul", {"ga", "b"}, "y")},
         {{2, 1, 5}, {2, 1, 5}, {2, 1, 5}}});
}

TEST(GradientCheckMoreTest, SecondOrderThroughBatchNormalizationTraining) {
  // o = sum(BN(a)^2 f), so the inner dY depends on a too. The inner gradient's dX, dscale and
  // dB are each weighted by "g" in turn.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> pick = {{"ga", {}}, {"gb", {2}}, {"gc", {2}}};
  for (const auto& shape : std::vector<std::vector<int64_t>>{{3, 2, 2, 2}, {5, 2}}) {
    for (const auto& [output, weight_shape] : pick) {
      Case k{"second_order_bn_" + output,
             {Node("BatchNormalization", {"a", "b", "c", "d", "e"}, {"t", "rm", "rv"},
                   {IntAttr("training_mode", 1), FloatAttr("epsilon", 1e-3f)}),
              Node("Mul", {"t", "t"}, "q"), Node("Mul", {"q", "f"}, "o"),
              GradientOp({"a", "b", "c"}, {"d", "e", "f"}, "o", {"ga", "gb", "gc"}),
              Node("Mul", {output, "g"}, "y")},
             {shape, {2}, {2}, {2}, {2}, shape, weight_shape.empty() ? shape : weight_shape},
             -2, 2, {}, 15, {{-2, 2}, {-2, 2}, {-2, 2}, {-1, 1}, {0.5, 2}}};
      Check(k);
    }
  }
}

}  // namespace
}  // namespace sluice
