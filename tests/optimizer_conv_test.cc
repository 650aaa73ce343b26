// The optimizer's convolution passes (optimizer/passes.h) on graphs the ONNX frontend imports:
// activation, BatchNormalization, Pad and residual fusion, the NHWC layout between
// convolutions, channel shuffles and spatial means; every rewritten graph computes what the
// imported one does.
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/node_evaluator.h"
#include "tests/optimizer_test_util.h"

namespace sluice {
namespace {

using namespace optimizer_test;  // NOLINT: the helpers these tests share.

// The model's output (4 x 6 x 6 values) from both graphs agrees to `tolerance` plus 1e-5
// relative.
void ExpectSameResults(const OnnxGraph& plain, const OnnxGraph& optimized, float tolerance) {
  const std::vector<float> want = RunModel(plain), got = RunModel(optimized);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), 4u * 36u);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance + 1e-5f * std::fabs(want[i])) << "at " << i;
}

TEST(FuseConvActivationsTest, FusedGraphsComputeWhatUnfusedOnesDo) {
  const std::vector<FusionCase> cases = {
      {"Relu", "Relu", [](onnx::GraphProto* g) { AddNode(g, "Relu", {"c"}, "y"); }},
      {"LeakyRelu", "LeakyRelu", [](onnx::GraphProto* g) { AddFloatAttr(AddNode(g, "LeakyRelu", {"c"}, "y"), "alpha", 0.3f); }},
      {"HardSwish", "HardSwish", [](onnx::GraphProto* g) { AddNode(g, "HardSwish", {"c"}, "y"); }},
      {"HardSigmoid", "HardSigmoid",
       [](onnx::GraphProto* g) {
         onnx::NodeProto* n = AddNode(g, "HardSigmoid", {"c"}, "y");
         AddFloatAttr(n, "alpha", 0.25f);
         AddFloatAttr(n, "beta", 0.4f);
       }},
      {"Sigmoid", "Sigmoid", [](onnx::GraphProto* g) { AddNode(g, "Sigmoid", {"c"}, "y"); }},
      {"Swish", "Swish",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "y");
       }},
      {"Swish, operands swapped", "Swish",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"s", "c"}, "y");
       }},
      // Not fusable: the Conv's output has another reader, or the Mul is not of the same tensor.
      {"Relu, Conv read twice", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Relu", {"c"}, "r");
         AddNode(g, "Add", {"r", "c"}, "y");
       }},
      {"Mul of another tensor's Sigmoid", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"x"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "y");
       }},
      {"Sigmoid read elsewhere too", "",
       [](onnx::GraphProto* g) {
         AddNode(g, "Sigmoid", {"c"}, "s");
         AddNode(g, "Mul", {"c", "s"}, "m");
         AddNode(g, "Add", {"m", "s"}, "y");
       }},
  };
  for (const FusionCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto unfused = ImportOnnxModel(ConvModel(c.build));
    auto fused = ImportOptimized(ConvModel(c.build));
    ASSERT_OK(unfused);
    ASSERT_OK(fused);
    EXPECT_EQ(FusedActivation(*fused), c.want_activation);
    if (c.want_activation == "Swish") {
      EXPECT_EQ(Count(*fused, "Sigmoid"), 0);
    }
    ExpectSameResults(*unfused, *fused, 1e-5f);
  }
}

// The activation's output keeps its name: a graph that fetches it gets the fused result.
TEST(FuseConvActivationsTest, AFusedActivationIsStillFetchableByName) {
  auto build = [](onnx::GraphProto* g) {
    AddNode(g, "Sigmoid", {"c"}, "s");
    AddNode(g, "Mul", {"c", "s"}, "y");
  };
  auto fused = ImportOptimized(ConvModel(build));
  ASSERT_OK(fused);
  EXPECT_EQ(fused->outputs[0].name, "y");
  EXPECT_EQ(RunModel(*fused).size(), 4u * 36u);
}

// A squeeze-and-excitation block between convolutions, as in MobileNetV3 and EfficientNet:
// x -> Conv -> c; c -> GlobalAveragePool -> Conv(Relu) -> Conv -> Sigmoid -> s; Mul(c, s) ->
// Conv -> y. Every tensor between the first and last Conv stays NHWC.
onnx::ModelProto SqueezeExcitationModel() {
  onnx::ModelProto m = ConvModel([](onnx::GraphProto*) {});
  onnx::GraphProto* g = m.mutable_graph();
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-1, 1);
  auto add_conv = [&](const std::string& name, const std::string& in, const std::string& out, int64_t cin,
                      int64_t cout) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name + "_w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {cout, cin, int64_t{1}, int64_t{1}}) t->add_dims(d);
    for (int64_t i = 0; i < cout * cin; ++i) t->add_float_data(value(rng));
    AddNode(g, "Conv", {in, name + "_w"}, out);
  };
  AddNode(g, "GlobalAveragePool", {"c"}, "pooled");
  add_conv("squeeze", "pooled", "squeezed", 4, 2);
  AddNode(g, "Relu", {"squeezed"}, "squeezed_relu");
  add_conv("excite", "squeezed_relu", "excited", 2, 4);
  AddNode(g, "Sigmoid", {"excited"}, "scale");
  AddNode(g, "Mul", {"c", "scale"}, "scaled");
  add_conv("project", "scaled", "y", 4, 4);
  return m;
}

TEST(UseNhwcBetweenConvsTest, SqueezeAndExcitationBlocksStayNhwc) {
  auto unfused = ImportOnnxModel(SqueezeExcitationModel());
  auto optimized = ImportOptimized(SqueezeExcitationModel());
  ASSERT_OK(unfused);
  ASSERT_OK(optimized);
  EXPECT_EQ(Count(*optimized, "MulNhwc"), 1);
  EXPECT_EQ(Count(*optimized, "GlobalAveragePoolNhwc"), 1);
  for (const NodeDef& n : optimized->graph.node()) {
    if (n.name() == "conv") {
      EXPECT_EQ(n.attr().at("output_layout").s(), "NHWC");
    }
    if (n.name() == "y_node") {
      EXPECT_EQ(n.attr().at("input_layout").s(), "NHWC");
    }
  }
  const std::vector<float> want = RunModel(*unfused), got = RunModel(*optimized);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), 4u * 36u);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i])) << "at " << i;
}



// Conv -> BatchNormalization (-> Relu): the normalization folds into the Conv's weights and
// bias, the Relu then fuses, and the results are the unfolded graph's.
TEST(FoldBatchNormsIntoConvsTest, FoldedGraphsComputeWhatUnfoldedOnesDo) {
  auto bn = [](onnx::GraphProto* g, const std::string& out, bool training) {
    AddInitializer(g, "gamma", {1.5f, -0.5f, 2.0f, 0.25f});
    AddInitializer(g, "beta", {0.1f, 0.2f, -0.3f, 0.0f});
    AddInitializer(g, "mean", {0.3f, -0.2f, 0.0f, 1.0f});
    AddInitializer(g, "var", {0.5f, 2.0f, 1.0f, 0.01f});
    onnx::NodeProto* n = AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, out);
    AddFloatAttr(n, "epsilon", 1e-3f);
    if (training) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name("training_mode");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(1);
    }
  };
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    bool folds;
    std::string activation;
  };
  const std::vector<Case> cases = {
      {"BatchNormalization", [&](onnx::GraphProto* g) { bn(g, "y", false); }, true, ""},
      {"BatchNormalization then Relu",
       [&](onnx::GraphProto* g) {
         bn(g, "n", false);
         AddNode(g, "Relu", {"n"}, "y");
       },
       true, "Relu"},
      {"Conv read twice",
       [&](onnx::GraphProto* g) {
         bn(g, "n", false);
         AddNode(g, "Add", {"n", "c"}, "y");
       },
       false, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto unfolded = ImportOnnxModel(ConvModel(c.build));
    auto folded = ImportOptimized(ConvModel(c.build));
    ASSERT_OK(unfolded);
    ASSERT_OK(folded);
    EXPECT_EQ(Count(*folded, "Onnx>BatchNormalization"), c.folds ? 0 : 1);
    EXPECT_EQ(FusedActivation(*folded), c.activation);
    ExpectSameResults(*unfolded, *folded, 1e-4f);
  }
}

// A Conv followed by a Mul and/or Add of per-channel (or single) constants, as exporters write
// a normalization folded by hand: folded into the Conv's weights and bias. Constants of other
// shapes (per row, or more values than channels) stay separate nodes.
TEST(FoldBatchNormsIntoConvsTest, PerChannelMulsAndAddsFold) {
  const onnx::TensorProto::DataType f = onnx::TensorProto::FLOAT;
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    int muls, adds;  // Left after the optimizer.
  };
  const std::vector<Case> cases = {
      {"Mul [C,1,1] then Add [C,1,1]",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "s", f, {4, 1, 1}, {1.5, -0.5, 2.0, 0.25});
         AddTensorInitializer(g, "t", f, {4, 1, 1}, {0.1, 0.2, -0.3, 0.0});
         AddNode(g, "Mul", {"c", "s"}, "m");
         AddNode(g, "Add", {"t", "m"}, "y");
       },
       0, 0},
      {"Mul of a scalar, [1,C,1,1] Add",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "s", f, {}, {0.75});
         AddTensorInitializer(g, "t", f, {1, 4, 1, 1}, {0.5, -1.0, 0.25, 2.0});
         AddNode(g, "Mul", {"s", "c"}, "m");
         AddNode(g, "Add", {"m", "t"}, "y");
       },
       0, 0},
      {"Add alone", [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "t", f, {4, 1, 1}, {0.5, -1.0, 0.25, 2.0});
         AddNode(g, "Add", {"c", "t"}, "y");
       },
       0, 0},
      {"Mul alone",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "s", f, {4, 1, 1}, {1.5, -0.5, 2.0, 0.25});
         AddNode(g, "Mul", {"c", "s"}, "y");
       },
       0, 0},
      {"Mul per row: not per channel",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "s", f, {6, 1}, Ramp(6, 1.0));
         AddNode(g, "Mul", {"c", "s"}, "y");
       },
       1, 0},
      {"Add of a full tensor",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "t", f, {4, 6, 6}, Ramp(144, 1.0));
         AddNode(g, "Add", {"c", "t"}, "y");
       },
       0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto unfolded = ImportOnnxModel(ConvModel(c.build));
    auto folded = ImportOptimized(ConvModel(c.build));
    ASSERT_OK(unfolded);
    ASSERT_OK(folded);
    EXPECT_EQ(Count(*folded, "Mul"), c.muls);
    EXPECT_EQ(Count(*folded, "Add"), c.adds);
    ExpectSameResults(*unfolded, *folded, 1e-4f);
  }
}

// x * Clip(x + 3, 0, 6) / 6 spelled out in its three orders becomes one HardSwish, which then
// fuses into the Conv before it; other constants or a Clip read twice leave the nodes alone.
TEST(FuseConvActivationsTest, SpelledOutHardSwishesFuse) {
  const onnx::TensorProto::DataType f = onnx::TensorProto::FLOAT;
  auto head = [&](onnx::GraphProto* g, double three, double six) {
    AddTensorInitializer(g, "three", f, {}, {three});
    AddTensorInitializer(g, "zero", f, {}, {0.0});
    AddTensorInitializer(g, "six", f, {}, {six});
    AddTensorInitializer(g, "sixth", f, {}, {1.0 / 6.0});
    AddNode(g, "Add", {"c", "three"}, "a");
    AddNode(g, "Clip", {"a", "zero", "six"}, "r");
  };
  const std::vector<FusionCase> cases = {
      {"Div(Mul(x, clip), 6)", "HardSwish",
       [&](onnx::GraphProto* g) {
         head(g, 3, 6);
         AddNode(g, "Mul", {"c", "r"}, "m");
         AddNode(g, "Div", {"m", "six"}, "y");
       }},
      {"Mul(Mul(clip, x), 1/6)", "HardSwish",
       [&](onnx::GraphProto* g) {
         head(g, 3, 6);
         AddNode(g, "Mul", {"r", "c"}, "m");
         AddNode(g, "Mul", {"sixth", "m"}, "y");
       }},
      {"Mul(x, Div(clip, 6))", "HardSwish",
       [&](onnx::GraphProto* g) {
         head(g, 3, 6);
         AddNode(g, "Div", {"r", "six"}, "d");
         AddNode(g, "Mul", {"c", "d"}, "y");
       }},
      {"x + 2: not HardSwish", "",
       [&](onnx::GraphProto* g) {
         head(g, 2, 6);
         AddNode(g, "Mul", {"c", "r"}, "m");
         AddNode(g, "Div", {"m", "six"}, "y");
       }},
      {"Clip read twice", "",
       [&](onnx::GraphProto* g) {
         head(g, 3, 6);
         AddNode(g, "Mul", {"c", "r"}, "m");
         AddNode(g, "Div", {"m", "six"}, "h");
         AddNode(g, "Add", {"h", "r"}, "y");
       }},
  };
  for (const FusionCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto unfused = ImportOnnxModel(ConvModel(c.build));
    auto fused = ImportOptimized(ConvModel(c.build));
    ASSERT_OK(unfused);
    ASSERT_OK(fused);
    EXPECT_EQ(FusedActivation(*fused), c.want_activation);
    if (!c.want_activation.empty()) {
      for (const char* gone : {"Onnx>Clip", "Div", "Mul", "Add"}) EXPECT_EQ(Count(*fused, gone), 0) << gone;
    } else {
      EXPECT_EQ(Count(*fused, "Onnx>Clip"), 1);
    }
    ExpectSameResults(*unfused, *fused, 1e-5f);
  }
}

// Max(y, c) and Min(y, c) of a constant of one value become Clips (which the NHWC layout
// carries); a Max of a per-channel constant stays a Max. openWakeWord's embedding model:
// Conv -> LeakyRelu -> Max(y, [[[[c]]]]).
TEST(FuseConvActivationsTest, MaxAndMinOfOneValueBecomeClips) {
  const onnx::TensorProto::DataType f = onnx::TensorProto::FLOAT;
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> build;
    int max, min, clip;
    std::string activation;  // Fused into the Conv.
  };
  const std::vector<Case> cases = {
      {"Max of [1,1,1,1] after LeakyRelu",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "floor", f, {1, 1, 1, 1}, {-0.3});
         AddFloatAttr(AddNode(g, "LeakyRelu", {"c"}, "l"), "alpha", 0.2f);
         AddNode(g, "Max", {"l", "floor"}, "y");
       },
       0, 0, 1, "LeakyRelu"},
      {"Min of a scalar, constant first: a Clip the Conv takes",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "ceiling", f, {}, {0.5});
         AddNode(g, "Min", {"ceiling", "c"}, "y");
       },
       0, 0, 0, "Clip"},
      {"Max of a per-channel constant",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "floors", f, {4, 1, 1}, {-0.3, 0.1, -1.0, 0.0});
         AddNode(g, "Max", {"c", "floors"}, "y");
       },
       1, 0, 0, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto plain = ImportOnnxModel(ConvModel(c.build));
    auto optimized = ImportOptimized(ConvModel(c.build));
    ASSERT_OK(plain);
    ASSERT_OK(optimized);
    EXPECT_EQ(Count(*optimized, "Onnx>Max"), c.max);
    EXPECT_EQ(Count(*optimized, "Onnx>Min"), c.min);
    EXPECT_EQ(Count(*optimized, "Onnx>Clip"), c.clip);
    EXPECT_EQ(FusedActivation(*optimized), c.activation);
    ExpectSameResults(*plain, *optimized, 1e-5f);
  }
}

// A BatchNormalization in training mode computes batch statistics: it is not folded.
TEST(FoldBatchNormsIntoConvsTest, TrainingModeIsNotFolded) {
  auto build = [](onnx::GraphProto* g) {
    AddInitializer(g, "gamma", {1, 1, 1, 1});
    AddInitializer(g, "beta", {0, 0, 0, 0});
    AddInitializer(g, "mean", {0, 0, 0, 0});
    AddInitializer(g, "var", {1, 1, 1, 1});
    onnx::NodeProto* n = AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, "y");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("training_mode");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
  };
  auto folded = ImportOptimized(ConvModel(build));
  ASSERT_OK(folded);
  EXPECT_EQ(Count(*folded, "Onnx>BatchNormalization"), 1);
}


// Pads, pools, normalizations and element-wise functions between two Convs: which ones the
// passes fold or keep NHWC, and that every rewritten graph computes what the imported one does.
TEST(UseNhwcBetweenConvsTest, PoolsNormalizationsAndActivationsStayNhwcAndComputeTheSame) {
  auto spatial_pad = [](onnx::GraphProto* g, const std::string& in, const std::string& out, int64_t p,
                        std::optional<float> value) {
    AddTensorInitializer(g, out + "_pads", onnx::TensorProto::INT64, {8}, {0, 0, double(p), double(p), 0, 0, double(p), double(p)});
    std::vector<std::string> inputs = {in, out + "_pads"};
    if (value) {
      AddTensorInitializer(g, out + "_value", onnx::TensorProto::FLOAT, {}, {*value});
      inputs.push_back(out + "_value");
    }
    AddNode(g, "Pad", inputs, out);
  };
  auto batch_norm = [](onnx::GraphProto* g, const std::string& in, const std::string& out) {
    AddInitializer(g, out + "_gamma", {1.5f, -0.5f, 2.0f, 0.25f});
    AddInitializer(g, out + "_beta", {0.1f, 0.2f, -0.3f, 0.0f});
    AddInitializer(g, out + "_mean", {0.3f, -0.2f, 0.0f, 1.0f});
    AddInitializer(g, out + "_var", {0.5f, 2.0f, 1.0f, 0.01f});
    AddFloatAttr(AddNode(g, "BatchNormalization", {in, out + "_gamma", out + "_beta", out + "_mean", out + "_var"}, out),
                 "epsilon", 1e-3f);
  };
  auto pool = [](onnx::GraphProto* g, const std::string& op, const std::string& in, const std::string& out,
                 std::vector<int64_t> pads, int64_t stride = 1, int64_t ceil_mode = 0, int64_t count_include_pad = -1) {
    onnx::NodeProto* n = AddNode(g, op, {in}, out);
    AddIntsAttr(n, "kernel_shape", {3, 3});
    AddIntsAttr(n, "strides", {stride, stride});
    if (!pads.empty()) AddIntsAttr(n, "pads", pads);
    if (ceil_mode) AddIntAttr(n, "ceil_mode", 1);
    if (count_include_pad >= 0) AddIntAttr(n, "count_include_pad", count_include_pad);
  };
  struct Case {
    std::string name;
    std::function<void(onnx::GraphProto*)> middle;
    int64_t last_kernel;
    std::map<std::string, int> want_counts;  // Ops and how many of each the optimized graph has.
    bool nhwc = true;  // Whether the last Conv reads NHWC (and pools run NHWC).
  };
  const std::vector<Case> cases = {
      {"Pad, AveragePool, BatchNormalization, Relu",
       [&](onnx::GraphProto* g) {
         spatial_pad(g, "c", "p", 1, std::nullopt);
         pool(g, "AveragePool", "p", "a", {});
         batch_norm(g, "a", "normalized");
         AddNode(g, "Relu", {"normalized"}, "m");
       },
       1, {{"Onnx>Pad", 0}, {"ChannelAffineNhwc", 1}, {"Onnx>BatchNormalization", 0}, {"Relu", 0}}},
      {"AveragePool of its own uncounted padding, strided, then Sigmoid",
       [&](onnx::GraphProto* g) {
         pool(g, "AveragePool", "c", "a", {1, 1, 1, 1}, 2, 0, 0);
         AddNode(g, "Sigmoid", {"a"}, "m");
       },
       1, {}},
      {"MaxPool in ceil mode, LeakyRelu, Clip",
       [&](onnx::GraphProto* g) {
         pool(g, "MaxPool", "c", "a", {1, 1, 1, 1}, 2, 1);
         AddFloatAttr(AddNode(g, "LeakyRelu", {"a"}, "l"), "alpha", 0.2f);
         AddTensorInitializer(g, "lo", onnx::TensorProto::FLOAT, {}, {-0.5});
         AddTensorInitializer(g, "hi", onnx::TensorProto::FLOAT, {}, {2.0});
         AddNode(g, "Clip", {"l", "lo", "hi"}, "m");
       },
       1, {{"Onnx>Clip", 1}}},
      {"Resize of H and W stays NHWC",
       [&](onnx::GraphProto* g) {
         AddTensorInitializer(g, "resize_scales", onnx::TensorProto::FLOAT, {4}, {1, 1, 2, 2});
         onnx::NodeProto* n = AddNode(g, "Resize", {"c", "", "resize_scales"}, "m");
         onnx::AttributeProto* a = n->add_attribute();
         a->set_name("mode");
         a->set_type(onnx::AttributeProto::STRING);
         a->set_s("linear");
       },
       1, {{"Onnx>Resize", 1}}},
      {"Pad folded into the Conv reading it",
       [&](onnx::GraphProto* g) { spatial_pad(g, "c", "m", 1, 0.0f); }, 3, {{"Onnx>Pad", 0}}},
      {"Pad of ones is kept", [&](onnx::GraphProto* g) { spatial_pad(g, "c", "m", 1, 1.0f); }, 3, {{"Onnx>Pad", 1}}, false},
      {"Pad before a ceil-mode pool is kept",
       [&](onnx::GraphProto* g) {
         spatial_pad(g, "c", "p", 1, std::nullopt);
         pool(g, "AveragePool", "p", "m", {}, 2, 1);
       },
       1, {{"Onnx>Pad", 1}}, false},
      {"Pad before a pool excluding its own padding is kept",
       [&](onnx::GraphProto* g) {
         spatial_pad(g, "c", "p", 1, std::nullopt);
         pool(g, "AveragePool", "p", "m", {1, 1, 1, 1}, 1, 0, 0);
       },
       1, {{"Onnx>Pad", 1}}, false},
      {"Add of a Tanh and the Conv it reads stays an Add",
       [&](onnx::GraphProto* g) {
         AddNode(g, "Tanh", {"c"}, "t");
         AddNode(g, "Add", {"t", "c"}, "r");
         AddNode(g, "Relu", {"r"}, "m");
       },
       1, {{"AddNhwc", 1}}},
      {"Residual Add of a Conv then Relu fuses into the Conv",
       [&](onnx::GraphProto* g) {
         std::vector<double> w2(16);
         for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::sin(1.3 * i);
         AddTensorInitializer(g, "w_mid", onnx::TensorProto::FLOAT, {4, 4, 1, 1}, w2);
         AddNode(g, "Conv", {"c", "w_mid"}, "d");
         AddNode(g, "Add", {"c", "d"}, "r");
         AddNode(g, "Relu", {"r"}, "m");
       },
       1, {{"AddNhwc", 0}, {"Add", 0}, {"Relu", 0}}},
      // (A per-channel constant folds into the Conv's bias: FoldBatchNormsIntoConvsTest.)
      {"Broadcast Add of a Conv and a per-row constant is not a residual",
       [&](onnx::GraphProto* g) {
         std::vector<double> w2(16);
         for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::sin(1.3 * i);
         AddTensorInitializer(g, "w_mid", onnx::TensorProto::FLOAT, {4, 4, 1, 1}, w2);
         AddTensorInitializer(g, "per_row", onnx::TensorProto::FLOAT, {6, 1}, {1, -1, 2, -2, 0.5, 3});
         AddNode(g, "Conv", {"c", "w_mid"}, "d");
         AddNode(g, "Add", {"d", "per_row"}, "m");
       },
       1, {{"Add", 1}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto imported = ImportOnnxModel(ConvSandwichModel(c.middle, c.last_kernel));
    auto optimized = ImportOptimized(ConvSandwichModel(c.middle, c.last_kernel));
    ASSERT_OK(imported);
    ASSERT_OK(optimized);
    for (const auto& [op, count] : c.want_counts) EXPECT_EQ(Count(*optimized, op), count) << op;
    int residuals = 0;
    for (const NodeDef& n : optimized->graph.node()) {
      residuals += n.op() == "Onnx>Conv" && n.attr().contains("Tr") && n.attr().at("Tr").list().type_size() == 1;
    }
    EXPECT_EQ(residuals, absl::StrContains(c.name, "fuses into the Conv") ? 1 : 0);
    // The last Conv reads NHWC (and the pools run NHWC) unless a node that cannot (a kept Pad, an
    // Add of a constant) sits between the Convs.
    for (const NodeDef& n : optimized->graph.node()) {
      if (n.name() == "y_node") {
        const bool nhwc = n.attr().contains("input_layout") && n.attr().at("input_layout").s() == "NHWC";
        EXPECT_EQ(nhwc, c.nhwc) << n.DebugString();
      }
      if (n.op() == "Onnx>AveragePool" || n.op() == "Onnx>MaxPool" || n.op() == "Onnx>Resize") {
        const std::string layout = n.attr().contains("layout") ? n.attr().at("layout").s() : "NCHW";
        EXPECT_EQ(layout, c.nhwc ? "NHWC" : "NCHW") << n.DebugString();
      }
    }
    const std::vector<float> want = RunModel(*imported), got = RunModel(*optimized);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_GT(got.size(), 0u);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << "at " << i;
  }
}

// A hostile Pad of 2^62 before a Conv is not folded (its pads plus the Conv's would overflow):
// the Pad stays and the run fails with an error, not a crash.
TEST(FoldPadsTest, HugePadsStayAPadThatFailsByName) {
  auto middle = [](onnx::GraphProto* g) {
    const double huge = 4611686018427387904.0;  // 2^62.
    AddTensorInitializer(g, "huge_pads", onnx::TensorProto::INT64, {8}, {0, 0, huge, huge, 0, 0, huge, huge});
    AddNode(g, "Pad", {"c", "huge_pads"}, "m");
  };
  auto optimized = ImportOptimized(ConvSandwichModel(middle, 3));
  ASSERT_OK(optimized);
  EXPECT_EQ(Count(*optimized, "Onnx>Pad"), 1);
  auto session = NewSession(Plain());
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(optimized->graph));
  Tensor x(DT_FLOAT, TensorShape({1, 4, 6, 6}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = 1;
  std::vector<Tensor> out;
  const absl::Status s = (*session)->Run({{optimized->inputs[0].tensor, x}}, {optimized->outputs[0].tensor}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("Pad"));
}

// ReduceMean over H and W after a Conv becomes a global average pool in the Conv's NHWC layout
// (with a Flatten for keepdims 0) and computes the same; over other axes, or of a rank that is
// not 4, it stays a ReduceMean.
TEST(ReduceMeansToGlobalPoolsTest, SpatialMeansBecomeNhwcPools) {
  struct Case { std::vector<double> axes; int64_t keepdims; bool pooled; };
  for (const Case& c : {Case{{2, 3}, 0, true}, Case{{-1, -2}, 1, true}, Case{{1, 2}, 1, false}, Case{{3}, 0, false}}) {
    SCOPED_TRACE(::testing::PrintToString(c.axes) + " keepdims " + std::to_string(c.keepdims));
    auto model = [&] {
      onnx::ModelProto m = ConvModel([&](onnx::GraphProto* g) {
        AddTensorInitializer(g, "axes", onnx::TensorProto::INT64, {static_cast<int64_t>(c.axes.size())}, c.axes);
        onnx::NodeProto* r = AddNode(g, "ReduceMean", {"c", "axes"}, "y");
        AddIntAttr(r, "keepdims", c.keepdims);
      });
      m.mutable_opset_import(0)->set_version(18);  // axes as an input.
      auto* shape = m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      return m;
    };
    const OnnxGraph optimized = OptimizedLikePlain(model(), 1e-5f);
    EXPECT_EQ(Count(optimized, "Onnx>ReduceMean"), c.pooled ? 0 : 1);
    EXPECT_EQ(Count(optimized, "GlobalAveragePoolNhwc"), c.pooled ? 1 : 0);
  }
}

// ShuffleNet's block between convolutions: the channels split by two Slices, one half through a
// Conv, a Concat and the channel shuffle (Reshape, Transpose, Reshape). The shuffle becomes one
// ChannelShuffle, and everything stays NHWC (no Transpose or Reshape left); values as imported.
TEST(FuseChannelShufflesTest, ShuffleNetBlockStaysNhwcAndComputesTheSame) {
  auto model = [] {
    return ConvModel([](onnx::GraphProto* g) {
      AddTensorInitializer(g, "s0", onnx::TensorProto::INT64, {1}, {0});
      AddTensorInitializer(g, "s2", onnx::TensorProto::INT64, {1}, {2});
      AddTensorInitializer(g, "s_end", onnx::TensorProto::INT64, {1}, {1000});  // Clamped to C.
      AddTensorInitializer(g, "axis1", onnx::TensorProto::INT64, {1}, {1});
      AddNode(g, "Slice", {"c", "s0", "s2", "axis1"}, "half_a");
      AddNode(g, "Slice", {"c", "s2", "s_end", "axis1"}, "half_b");
      std::vector<double> w(4);
      for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.9 * i);
      AddTensorInitializer(g, "w_half", onnx::TensorProto::FLOAT, {2, 2, 1, 1}, w);
      AddNode(g, "Conv", {"half_b", "w_half"}, "bc");
      AddIntAttr(AddNode(g, "Concat", {"half_a", "bc"}, "cat"), "axis", 1);
      AddTensorInitializer(g, "grouped", onnx::TensorProto::INT64, {5}, {1, 2, 2, 6, 6});
      AddTensorInitializer(g, "flat", onnx::TensorProto::INT64, {4}, {1, 4, 6, 6});
      AddNode(g, "Reshape", {"cat", "grouped"}, "r1");
      AddIntsAttr(AddNode(g, "Transpose", {"r1"}, "t"), "perm", {0, 2, 1, 3, 4});
      AddNode(g, "Reshape", {"t", "flat"}, "r2");
      std::vector<double> w2(16);
      for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::sin(0.7 * i);
      AddTensorInitializer(g, "w_out", onnx::TensorProto::FLOAT, {4, 4, 1, 1}, w2);
      AddNode(g, "Conv", {"r2", "w_out"}, "y");
    });
  };
  const OnnxGraph optimized = OptimizedLikePlain(model());
  EXPECT_EQ(Count(optimized, "ChannelShuffle"), 1);
  EXPECT_EQ(Count(optimized, "SliceChannelsNhwc"), 2);
  EXPECT_EQ(Count(optimized, "ConcatChannelsNhwc"), 1);
  EXPECT_EQ(Count(optimized, "Onnx>Transpose"), 0);
  EXPECT_EQ(Count(optimized, "Onnx>Reshape"), 0);
  for (const NodeDef& n : optimized.graph.node()) {
    if (n.op() == "ChannelShuffle") {
      EXPECT_EQ(n.attr().at("layout").s(), "NHWC");
    }
  }
}


// A ConvNeXt block between two Convs: Transpose to channels-last, LayerNormalization, the
// Transpose back, a Mul by a per-channel constant (layer scale) and the residual Add. The
// Transposes become NhwcViews (no value moves), the Mul a ChannelAffineNhwc, the Add an
// AddNhwc, both Convs keep NHWC; values as imported. A Mul by a constant of another shape stays.
TEST(UseNhwcBetweenConvsTest, ChannelsLastBlocksStayNhwc) {
  for (bool per_channel : {true, false}) {
    SCOPED_TRACE(per_channel);
    auto model = [&] {
      return ConvSandwichModel([&](onnx::GraphProto* g) {
        AddIntsAttr(AddNode(g, "Transpose", {"c"}, "t1"), "perm", {0, 2, 3, 1});
        AddTensorInitializer(g, "ln_scale", onnx::TensorProto::FLOAT, {4}, {1.5, -0.5, 2.0, 0.25});
        AddTensorInitializer(g, "ln_bias", onnx::TensorProto::FLOAT, {4}, {0.1, 0.2, -0.3, 0.0});
        AddNode(g, "LayerNormalization", {"t1", "ln_scale", "ln_bias"}, "ln");
        AddIntsAttr(AddNode(g, "Transpose", {"ln"}, "t2"), "perm", {0, 3, 1, 2});
        if (per_channel) {
          AddTensorInitializer(g, "gamma", onnx::TensorProto::FLOAT, {4, 1, 1}, {0.5, -1.0, 2.0, 3.0});
        } else {
          AddTensorInitializer(g, "gamma", onnx::TensorProto::FLOAT, {1, 6}, {0.5, -1.0, 2.0, 3.0, 1.0, 0.0});
        }
        AddNode(g, "Mul", {"gamma", "t2"}, "scaled");
        AddNode(g, "Add", {"scaled", "c"}, "m");
      });
    };
    const OnnxGraph optimized = OptimizedLikePlain(model());
    EXPECT_EQ(Count(optimized, "Onnx>Transpose"), per_channel ? 0 : 2);
    EXPECT_EQ(Count(optimized, "NhwcView"), per_channel ? 2 : 0);
    EXPECT_EQ(Count(optimized, "ChannelAffineNhwc"), per_channel ? 1 : 0);
    for (const NodeDef& n : optimized.graph.node()) {
      if (n.name() == "y_node") {
        EXPECT_EQ(n.attr().contains("input_layout") && n.attr().at("input_layout").s() == "NHWC", per_channel);
      }
    }
  }
}

}  // namespace
}  // namespace sluice
