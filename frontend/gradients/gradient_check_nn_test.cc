// Checks the gradient functions of nn_gradients.cc, math_gradients.cc and array_gradients.cc
// (and MatMul with 1-D operands) against central finite differences in double precision, and
// gradients of gradients. Most cases weight the op's output by a random input before summing,
// so that a gradient routed to the wrong element shows.
#include "frontend/gradients/gradient_check_util.h"
#include "frontend/gradients/gradients.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

using gradient_check::BoolTensor;
using gradient_check::Case;
using gradient_check::Check;
using gradient_check::FloatAttr;
using gradient_check::FloatTensor;
using gradient_check::GradientOp;
using gradient_check::Int64Tensor;
using gradient_check::IntAttr;
using gradient_check::IntsAttr;
using gradient_check::Node;
using gradient_check::StringAttr;

// `op` over inputs `in` (producing "t"), weighted by the input named `weights`, as "y".
std::vector<onnx::NodeProto> Weighted(const std::string& op, std::vector<std::string> in, const std::string& weights,
                                      std::vector<onnx::AttributeProto> attrs = {}) {
  return {Node(op, std::move(in), "t", std::move(attrs)), Node("Mul", {"t", weights}, "y")};
}

// A typo in REGISTER_GRADIENT would otherwise leave an op silently without a gradient.
TEST(GradientCheckNnTest, EveryGradientIsOfARegisteredOp) {
  for (const std::string& op : GradientRegistry::Global()->Ops()) {
    EXPECT_OK(OpRegistry::Global()->LookUp(op)) << op;
  }
}

TEST(GradientCheckNnTest, Gemm) {
  Check({"gemm", {Node("Gemm", {"a", "b", "c"}, "y")}, {{3, 4}, {4, 5}, {5}}});
  Check({"gemm_trans_alpha_beta",
         Weighted("Gemm", {"a", "b", "c"}, "d",
                  {IntAttr("transA", 1), IntAttr("transB", 1), FloatAttr("alpha", 0.5f), FloatAttr("beta", 2.0f)}),
         {{4, 3}, {5, 4}, {3, 1}, {3, 5}}});
  Check({"gemm_transA_scalar_c", Weighted("Gemm", {"a", "b", "c"}, "d", {IntAttr("transA", 1)}),
         {{4, 3}, {4, 2}, {}, {3, 2}}});
  Check({"gemm_transB_no_c", Weighted("Gemm", {"a", "b"}, "c", {IntAttr("transB", 1)}), {{2, 3}, {4, 3}, {2, 4}}});
}

TEST(GradientCheckNnTest, MatMulWithVectors) {
  Check({"vec_mat", Weighted("MatMul", {"a", "b"}, "c"), {{3}, {3, 4}, {4}}});
  Check({"mat_vec", Weighted("MatMul", {"a", "b"}, "c"), {{2, 3}, {3}, {2}}});
  Check({"vec_vec", {Node("MatMul", {"a", "b"}, "y")}, {{3}, {3}}});
  Check({"batched_vec", Weighted("MatMul", {"a", "b"}, "c"), {{2, 2, 3}, {3}, {2, 2}}});
  Check({"vec_batched", Weighted("MatMul", {"a", "b"}, "c"), {{3}, {2, 3, 4}, {2, 4}}});
}

TEST(GradientCheckNnTest, Conv) {
  Check({"conv2d_bias_pads", Weighted("Conv", {"a", "b", "c"}, "d", {IntsAttr("pads", {1, 1, 1, 1})}),
         {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}, {1, 3, 5, 5}}});
  Check({"conv2d_strides_dilations",
         Weighted("Conv", {"a", "b"}, "c",
                  {IntsAttr("strides", {2, 2}), IntsAttr("dilations", {2, 2}), IntsAttr("pads", {0, 1, 1, 0})}),
         {{2, 2, 7, 7}, {2, 2, 2, 2}, {2, 2, 3, 3}}});
  Check({"conv2d_groups", Weighted("Conv", {"a", "b", "c"}, "d", {IntAttr("group", 2)}),
         {{1, 4, 4, 4}, {6, 2, 3, 3}, {6}, {1, 6, 2, 2}}});
  Check({"conv1d", Weighted("Conv", {"a", "b", "c"}, "d", {IntsAttr("strides", {2}), IntsAttr("pads", {1, 1})}),
         {{2, 3, 7}, {2, 3, 3}, {2}, {2, 2, 4}}});
  Check({"conv2d_same_upper",
         Weighted("Conv", {"a", "b"}, "c", {StringAttr("auto_pad", "SAME_UPPER"), IntsAttr("strides", {2, 2})}),
         {{1, 1, 5, 5}, {2, 1, 2, 2}, {1, 2, 3, 3}}});
  Check({"conv_relu", {Node("Conv", {"a", "b"}, "t"), Node("Relu", {"t"}, "r"), Node("Mul", {"r", "c"}, "y")},
         {{1, 1, 4, 4}, {2, 1, 2, 2}, {1, 2, 3, 3}}});
}

TEST(GradientCheckNnTest, BatchNormalizationInference) {
  Check({"bn_inference", Weighted("BatchNormalization", {"a", "b", "c", "d", "e"}, "f"),
         {{2, 3, 2, 2}, {3}, {3}, {3}, {3}, {2, 3, 2, 2}},
         -2, 2, {}, 13, {{-2, 2}, {-2, 2}, {-2, 2}, {-1, 1}, {0.5, 2}}});
}

TEST(GradientCheckNnTest, BatchNormalizationTraining) {
  // Opset 15: training_mode; Y then the running statistics.
  for (const auto& shape : std::vector<std::vector<int64_t>>{{3, 2, 2, 2}, {5, 3}}) {
    const int64_t c = shape[1];
    Case k{"bn_training",
           {Node("BatchNormalization", {"a", "b", "c", "d", "e"}, {"t", "running_mean", "running_var"},
                 {IntAttr("training_mode", 1), FloatAttr("epsilon", 1e-3f)}),
            Node("Mul", {"t", "f"}, "y")},
           {shape, {c}, {c}, {c}, {c}, shape},
           -2, 2, {}, 15, {{-2, 2}, {-2, 2}, {-2, 2}, {-1, 1}, {0.5, 2}}};
    Check(k);
  }
}

TEST(GradientCheckNnTest, Pooling) {
  Check({"maxpool2d", Weighted("MaxPool", {"a"}, "b", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2}),
                                                       IntsAttr("pads", {0, 0, 1, 1})}),
         {{1, 2, 5, 5}, {1, 2, 3, 3}}});
  Check({"maxpool1d_dilated", Weighted("MaxPool", {"a"}, "b", {IntsAttr("kernel_shape", {3}), IntsAttr("strides", {2}),
                                                               IntsAttr("pads", {1, 1}), IntsAttr("dilations", {2})}),
         {{2, 2, 9}, {2, 2, 4}}});
  Check({"maxpool_ceil", Weighted("MaxPool", {"a"}, "b", {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
                                                          IntAttr("ceil_mode", 1)}),
         {{1, 1, 6, 6}, {1, 1, 3, 3}}});
  for (int include : {0, 1}) {
    Check({"avgpool2d", Weighted("AveragePool", {"a"}, "b", {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
                                                             IntsAttr("pads", {1, 1, 1, 1}),
                                                             IntAttr("count_include_pad", include)}),
           {{1, 2, 5, 5}, {1, 2, 3, 3}}});
    Check({"avgpool1d_ceil", Weighted("AveragePool", {"a"}, "b", {IntsAttr("kernel_shape", {3}), IntsAttr("strides", {2}),
                                                                  IntsAttr("pads", {1, 1}), IntAttr("ceil_mode", 1),
                                                                  IntAttr("count_include_pad", include)}),
           {{1, 2, 6}, {1, 2, 4}}});
  }
  Check({"global_avgpool", Weighted("GlobalAveragePool", {"a"}, "b"), {{2, 3, 2, 2}, {2, 3, 1, 1}}});
  Check({"global_maxpool", Weighted("GlobalMaxPool", {"a"}, "b"), {{2, 3, 3, 2}, {2, 3, 1, 1}}});
}

TEST(GradientCheckNnTest, SoftmaxFamily) {
  for (int64_t axis : {-1, 1}) {
    Check({"softmax", Weighted("Softmax", {"a"}, "b", {IntAttr("axis", axis)}), {{2, 3, 4}, {2, 3, 4}}});
  }
  for (int64_t axis : {-1, 0}) {
    Check({"log_softmax", Weighted("LogSoftmax", {"a"}, "b", {IntAttr("axis", axis)}), {{2, 3, 4}, {2, 3, 4}}});
  }
}

TEST(GradientCheckNnTest, Reductions) {
  // ReduceSum-13 takes axes as an input; ReduceMean and ReduceMax as an attribute.
  Check({"reduce_sum_keepdims", Weighted("ReduceSum", {"a", "axes"}, "b"), {{2, 3, 4}, {2, 1, 4}}, -2, 2,
         {Int64Tensor("axes", {1}, {1})}});
  Check({"reduce_sum_drop", Weighted("ReduceSum", {"a", "axes"}, "b", {IntAttr("keepdims", 0)}), {{2, 3, 4}, {3}}, -2,
         2, {Int64Tensor("axes", {-1, 0}, {2})}});
  Check({"reduce_sum_all", Weighted("ReduceSum", {"a"}, "b", {IntAttr("keepdims", 0)}), {{2, 3}, {}}});
  Check({"reduce_sum_noop", Weighted("ReduceSum", {"a"}, "b", {IntAttr("noop_with_empty_axes", 1)}), {{2, 3}, {2, 3}}});
  Check({"reduce_mean", Weighted("ReduceMean", {"a"}, "b", {IntsAttr("axes", {1}), IntAttr("keepdims", 0)}),
         {{2, 3, 4}, {2, 4}}});
  Check({"reduce_mean_all", Weighted("ReduceMean", {"a"}, "b"), {{2, 3}, {1, 1}}});
  Check({"reduce_max", Weighted("ReduceMax", {"a"}, "b", {IntsAttr("axes", {1}), IntAttr("keepdims", 0)}),
         {{2, 3, 4}, {2, 4}}});
  Check({"reduce_max_keepdims", Weighted("ReduceMax", {"a"}, "b", {IntsAttr("axes", {0, 2})}), {{2, 3, 4}, {1, 3, 1}}});
}

TEST(GradientCheckNnTest, ElementwiseMath) {
  Check({"pow", Weighted("Pow", {"a", "b"}, "c"), {{2, 3}, {3}, {2, 3}}, 0.5, 2});
  Check({"pow_int_exponent", Weighted("Pow", {"a", "e"}, "b"), {{2, 3}, {2, 3}}, -2, 2, {Int64Tensor("e", {3}, {})}});
  Check({"erf", Weighted("Erf", {"a"}, "b"), {{2, 3}, {2, 3}}});
  Check({"abs", Weighted("Abs", {"a"}, "b"), {{2, 3}, {2, 3}}});
  Check({"leaky_relu", Weighted("LeakyRelu", {"a"}, "b", {FloatAttr("alpha", 0.2f)}), {{2, 3}, {2, 3}}});
  Check({"where", Weighted("Where", {"cond", "a", "b"}, "c"), {{2, 3}, {3}, {2, 3}}, -2, 2,
         {BoolTensor("cond", {true, false, false, true, true, false}, {2, 3})}});
  // Both bounds are differentiated too: each gets the gradient of the elements it clipped.
  Check({"clip", Weighted("Clip", {"a", "b", "c"}, "d"), {{3, 4}, {}, {}, {3, 4}}, -2, 2, {}, 13,
         {{-2, 2}, {-1, -0.5}, {0.5, 1}}});
  Check({"clip_max_only", Weighted("Clip", {"a", "", "b"}, "c"), {{3, 4}, {}, {3, 4}}, -2, 2, {}, 13,
         {{-2, 2}, {-0.5, 0.5}}});
}

TEST(GradientCheckNnTest, CastThroughFloat) {
  // Float rounding makes small steps useless; the function is linear, so a large one is exact.
  Case c{"cast", {Node("Cast", {"a"}, "f", {IntAttr("to", onnx::TensorProto::FLOAT)}),
                  Node("Cast", {"f"}, "t", {IntAttr("to", onnx::TensorProto::DOUBLE)}), Node("Mul", {"t", "b"}, "y")},
         {{2, 3}, {2, 3}}};
  c.eps = 1e-2;
  c.abs_tolerance = 1e-4;
  Check(c);
}

TEST(GradientCheckNnTest, Dropout) {
  Check({"dropout_inference", Weighted("Dropout", {"a"}, "b"), {{2, 3}, {2, 3}}});
  Check({"dropout_training", Weighted("Dropout", {"a", "ratio", "training"}, "b", {IntAttr("seed", 3)}),
         {{4, 5}, {4, 5}}, -2, 2, {FloatTensor("ratio", {0.4f}, {}), BoolTensor("training", {true}, {})}});
  Check({"dropout_training_off", Weighted("Dropout", {"a", "ratio", "training"}, "b", {IntAttr("seed", 3)}),
         {{4, 5}, {4, 5}}, -2, 2, {FloatTensor("ratio", {0.4f}, {}), BoolTensor("training", {false}, {})}});
}

TEST(GradientCheckNnTest, ShapeChanges) {
  Check({"reshape", Weighted("Reshape", {"a", "shape"}, "b"), {{2, 3, 4}, {4, 6}}, -2, 2,
         {Int64Tensor("shape", {4, -1}, {2})}});
  Check({"flatten", Weighted("Flatten", {"a"}, "b", {IntAttr("axis", 2)}), {{2, 3, 2, 2}, {6, 4}}});
  Check({"squeeze", Weighted("Squeeze", {"a", "axes"}, "b"), {{2, 1, 3}, {2, 3}}, -2, 2, {Int64Tensor("axes", {1}, {1})}});
  Check({"unsqueeze", Weighted("Unsqueeze", {"a", "axes"}, "b"), {{2, 3}, {1, 2, 3, 1}}, -2, 2,
         {Int64Tensor("axes", {0, -1}, {2})}});
  Check({"expand", Weighted("Expand", {"a", "shape"}, "b"), {{3, 1}, {2, 3, 4}}, -2, 2,
         {Int64Tensor("shape", {2, 3, 4}, {3})}});
  Check({"transpose", Weighted("Transpose", {"a"}, "b", {IntsAttr("perm", {2, 0, 1})}), {{2, 3, 4}, {4, 2, 3}}});
  Check({"transpose_reverse", Weighted("Transpose", {"a"}, "b"), {{2, 3, 4}, {4, 3, 2}}});
}

TEST(GradientCheckNnTest, ConcatAndSplit) {
  Check({"concat", Weighted("Concat", {"a", "b"}, "c", {IntAttr("axis", 1)}), {{2, 3}, {2, 2}, {2, 5}}});
  Check({"concat_negative_axis", Weighted("Concat", {"a", "b", "c"}, "d", {IntAttr("axis", -2)}),
         {{1, 3}, {2, 3}, {1, 3}, {4, 3}}});
  Check({"split_sizes", {Node("Split", {"a", "split"}, std::vector<std::string>{"s0", "s1"}, {IntAttr("axis", 1)}), Node("Mul", {"s1", "b"}, "y")},
         {{2, 3}, {2, 2}}, -2, 2, {Int64Tensor("split", {1, 2}, {2})}});
  Check({"split_even", {Node("Split", {"a"}, std::vector<std::string>{"s0", "s1"}, {IntAttr("axis", -1)}), Node("Mul", {"s0", "s1"}, "y")},
         {{2, 4}}});
}

TEST(GradientCheckNnTest, SliceAndGather) {
  Check({"slice_steps", Weighted("Slice", {"a", "starts", "ends", "axes", "steps"}, "b"), {{4, 5}, {2, 2}}, -2, 2,
         {Int64Tensor("starts", {1, -4}, {2}), Int64Tensor("ends", {3, 100}, {2}), Int64Tensor("axes", {0, 1}, {2}),
          Int64Tensor("steps", {1, 2}, {2})}});
  Check({"slice_backwards", Weighted("Slice", {"a", "starts", "ends", "axes", "steps"}, "b"), {{4, 5}, {4, 3}}, -2, 2,
         {Int64Tensor("starts", {-1}, {1}), Int64Tensor("ends", {-100}, {1}), Int64Tensor("axes", {1}, {1}),
          Int64Tensor("steps", {-2}, {1})}});
  Check({"slice_plain", Weighted("Slice", {"a", "starts", "ends"}, "b"), {{4, 5}, {2, 3}}, -2, 2,
         {Int64Tensor("starts", {1, 2}, {2}), Int64Tensor("ends", {3, 5}, {2})}});
  Check({"gather_axis0", Weighted("Gather", {"a", "i"}, "b"), {{3, 4}, {2, 2, 4}}, -2, 2,
         {Int64Tensor("i", {2, 0, -1, 1}, {2, 2})}});
  Check({"gather_axis1_repeats", Weighted("Gather", {"a", "i"}, "b", {IntAttr("axis", 1)}), {{3, 4}, {3, 3}}, -2, 2,
         {Int64Tensor("i", {3, 0, 3}, {3})}});
}

// A small CNN as torch exports it: Conv, BatchNormalization (training: the running
// statistics get no gradient), Relu, MaxPool, Flatten, Gemm, LogSoftmax, weighted by targets.
TEST(GradientCheckNnTest, SmallCnn) {
  Check({"cnn",
         {Node("Conv", {"a", "b", "c"}, "conv", {IntsAttr("pads", {1, 1, 1, 1})}),
          Node("BatchNormalization", {"conv", "d", "e", "i", "j"}, std::vector<std::string>{"bn", "rm", "rv"},
               {IntAttr("training_mode", 1)}),
          Node("Relu", {"bn"}, "relu"),
          Node("MaxPool", {"relu"}, "pool", {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2})}),
          Node("Flatten", {"pool"}, "flat"), Node("Gemm", {"flat", "f", "g"}, "logits", {IntAttr("transB", 1)}),
          Node("LogSoftmax", {"logits"}, "logp"), Node("Mul", {"logp", "h"}, "y")},
         {{2, 1, 4, 4}, {2, 1, 3, 3}, {2}, {2}, {2}, {3, 8}, {3}, {2, 3}, {2}, {2}},
         -2,
         2,
         {},
         15,
         {{-2, 2}, {-2, 2}, {-2, 2}, {-2, 2}, {-2, 2}, {-2, 2}, {-2, 2}, {-2, 2}, {-1, 1}, {0.5, 2}}});
}

// ONNX's own example in the Gradient operator's description: Y = Gemm(X, W), O = Loss(Y, L),
// and a second Gradient differentiating dO/dW with respect to X and W (L too, here).
TEST(GradientCheckNnTest, SecondOrderAsInTheOperatorDescription) {
  Check({"second_order_gemm",
         {Node("Gemm", {"a", "b"}, "Y"), Node("Sub", {"Y", "c"}, "D"), Node("Mul", {"D", "D"}, "S"),
          Node("ReduceSum", {"S"}, "O", {IntAttr("keepdims", 0)}), GradientOp({"a", "b"}, {"c"}, "O", {"dOdX", "y"})},
         {{3, 2}, {2, 4}, {3, 4}}});
}

TEST(GradientCheckNnTest, SecondOrderThroughBackwardOps) {
  // MatMul and Tanh: dy/da of the gradient of sum(tanh(a b) c).
  Check({"second_order_mlp",
         {Node("MatMul", {"a", "b"}, "h"), Node("Tanh", {"h"}, "t"), Node("Mul", {"t", "c"}, "o"),
          GradientOp({"a"}, {"b", "c"}, "o", {"y"})},
         {{2, 3}, {3, 4}, {2, 4}}});
  // Sigmoid's backward op (SigmoidGrad) under Tanh's (TanhGrad).
  Check({"second_order_sigmoid_tanh",
         {Node("Sigmoid", {"a"}, "s"), Node("Mul", {"s", "b"}, "p"), Node("Tanh", {"p"}, "t"),
          Node("Mul", {"t", "c"}, "o"), GradientOp({"a"}, {"b", "c"}, "o", {"y"})},
         {{2, 3}, {2, 3}, {2, 3}}});
  // Relu's backward op (ReluGrad), and broadcasting (SumToShape).
  Check({"second_order_relu",
         {Node("Mul", {"a", "b"}, "p"), Node("Relu", {"p"}, "r"), Node("Mul", {"r", "c"}, "o"),
          GradientOp({"b"}, {"a", "c"}, "o", {"y"})},
         {{2, 3}, {3}, {2, 3}}});
  // Convolution's backward ops, both of them.
  Check({"second_order_conv_input",
         {Node("Conv", {"a", "b"}, "v", {IntsAttr("pads", {1, 0, 0, 1}), IntsAttr("strides", {1, 2})}),
          Node("Mul", {"v", "v"}, "o"), GradientOp({"a"}, {"b"}, "o", {"y"})},
         {{1, 2, 3, 4}, {2, 2, 2, 2}}});
  Check({"second_order_conv_filter",
         {Node("Conv", {"a", "b"}, "v", {IntAttr("group", 2)}), Node("Mul", {"v", "v"}, "o"),
          GradientOp({"b"}, {"a"}, "o", {"y"})},
         {{1, 2, 3, 3}, {2, 1, 2, 2}}});
  // Softmax, Slice, Gather, AveragePool and Reshape in one chain.
  Check({"second_order_mixed",
         {Node("Softmax", {"a"}, "s"), Node("Mul", {"s", "s"}, "q"), Node("Slice", {"q", "st", "en"}, "l"),
          Node("Gather", {"l", "i"}, "g", {IntAttr("axis", 1)}), Node("Reshape", {"g", "shape"}, "r"),
          Node("AveragePool", {"r"}, "p", {IntsAttr("kernel_shape", {2}), IntsAttr("pads", {1, 1})}),
          Node("ReduceSum", {"p"}, "o"), GradientOp({"a"}, {}, "o", {"y"})},
         {{2, 4}},
         -2,
         2,
         {Int64Tensor("st", {0, 1}, {2}), Int64Tensor("en", {2, 4}, {2}), Int64Tensor("i", {2, 0, 2}, {3}),
          Int64Tensor("shape", {1, 2, 3}, {3})}});
}

}  // namespace
}  // namespace sluice
