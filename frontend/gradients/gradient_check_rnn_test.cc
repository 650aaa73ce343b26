// RNN, GRU and LSTM gradients (rnn_gradients.cc, through RNNGrad, GRUGrad and LSTMGrad) against
// central finite differences in double precision: every input's gradient, for each cell, both
// layouts, each direction, with and without B, the initial states and sequence_lens, and with
// only some outputs reaching the loss. Each used output is weighted by fixed random values
// before summing, so that a gradient routed to the wrong element or step shows.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "frontend/gradients/gradient_check_util.h"
#include "frontend/onnx/importer.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using gradient_check::Case;
using gradient_check::Check;
using gradient_check::FloatAttr;
using gradient_check::IntAttr;
using gradient_check::Node;
using gradient_check::StringAttr;

struct RnnCase {
  std::string cell = "LSTM";  // RNN, GRU or LSTM.
  std::string direction = "forward";
  int layout = 0;
  int linear_before_reset = 0;
  bool bias = true, initial = true, peepholes = false, input_forget = false;
  std::vector<int32_t> lens;       // Empty: no sequence_lens.
  std::vector<int> outputs = {};   // The outputs the loss weights; empty: all.
  int64_t seq = 4, batch = 3, input = 2, hidden = 3;
  std::vector<onnx::AttributeProto> extra_attrs = {};

  std::string Name() const {
    return absl::StrCat(cell, "_", direction, "_layout", layout, linear_before_reset ? "_lbr" : "",
                        bias ? "_bias" : "", initial ? "_initial" : "", peepholes ? "_peepholes" : "",
                        input_forget ? "_input_forget" : "", lens.empty() ? "" : "_lens",
                        outputs.empty() ? "" : absl::StrCat("_outputs", outputs.size()));
  }
};

onnx::TensorProto DoubleTensor(const std::string& name, const std::vector<int64_t>& dims, std::mt19937* rng) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::DOUBLE);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < n; ++i) t.add_double_data(u(*rng));
  return t;
}

onnx::TensorProto Int32Tensor(const std::string& name, const std::vector<int32_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int32_t v : values) t.add_int32_data(v);
  return t;
}

// The node over inputs "a" (X), "b" (W), "c" (R) and the next letters for B, initial_h,
// initial_c and P; the loss is sum_k sum(output_k * weight_k).
Case MakeCase(const RnnCase& rc) {
  const bool lstm = rc.cell == "LSTM";
  const int64_t G = rc.cell == "RNN" ? 1 : rc.cell == "GRU" ? 3 : 4;
  const int64_t D = rc.direction == "bidirectional" ? 2 : 1;
  const int64_t T = rc.seq, N = rc.batch, I = rc.input, H = rc.hidden;
  const bool bm = rc.layout == 1;
  Case c;
  c.name = rc.Name();
  c.opset = 14;  // layout.
  c.lo = -1;
  c.hi = 1;
  c.shapes = {bm ? std::vector<int64_t>{N, T, I} : std::vector<int64_t>{T, N, I}, {D, G * H, I}, {D, G * H, H}};
  const std::vector<int64_t> state = bm ? std::vector<int64_t>{N, D, H} : std::vector<int64_t>{D, N, H};
  char next = 'd';
  auto take = [&](bool present, const std::vector<int64_t>& shape) -> std::string {
    if (!present) return "";
    c.shapes.push_back(shape);
    return std::string(1, next++);
  };
  std::vector<std::string> in = {"a", "b", "c"};
  in.push_back(take(rc.bias, {D, 2 * G * H}));
  in.push_back(rc.lens.empty() ? "" : "lens");
  in.push_back(take(rc.initial, state));
  if (lstm) {
    in.push_back(take(rc.initial, state));
    in.push_back(take(rc.peepholes, {D, 3 * H}));
  }
  while (in.back().empty()) in.pop_back();
  if (!rc.lens.empty()) c.initializers.push_back(Int32Tensor("lens", rc.lens));

  std::vector<onnx::AttributeProto> attrs = {IntAttr("hidden_size", H), StringAttr("direction", rc.direction),
                                             IntAttr("layout", rc.layout)};
  if (rc.cell == "GRU") attrs.push_back(IntAttr("linear_before_reset", rc.linear_before_reset));
  if (lstm && rc.input_forget) attrs.push_back(IntAttr("input_forget", 1));
  for (const auto& a : rc.extra_attrs) attrs.push_back(a);
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (lstm) outs.push_back("Y_c");
  c.nodes.push_back(Node(rc.cell, in, outs, attrs));

  std::vector<int> used = rc.outputs;
  if (used.empty()) {
    for (size_t k = 0; k < outs.size(); ++k) used.push_back(static_cast<int>(k));
  }
  std::mt19937 rng(7);
  const std::vector<int64_t> y_shape = bm ? std::vector<int64_t>{N, T, D, H} : std::vector<int64_t>{T, D, N, H};
  std::vector<std::string> sums;
  for (int k : used) {
    const std::string w = "w_" + outs[k];
    c.initializers.push_back(DoubleTensor(w, k == 0 ? y_shape : state, &rng));
    c.nodes.push_back(Node("Mul", {outs[k], w}, "m_" + outs[k]));
    const std::string sum = used.size() == 1 ? "y" : "s_" + outs[k];
    c.nodes.push_back(Node("ReduceSum", {"m_" + outs[k]}, sum, {IntAttr("keepdims", 0)}));
    sums.push_back(sum);
  }
  if (used.size() > 1) c.nodes.push_back(Node("Sum", sums, "y"));
  return c;
}

// Each direction and layout, with B and initial states; then without them; then with
// sequences of different lengths (one empty) and with only some outputs used.
std::vector<RnnCase> Cases(const RnnCase& base) {
  std::vector<RnnCase> cases;
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int layout : {0, 1}) {
      RnnCase c = base;
      c.direction = direction;
      c.layout = layout;
      cases.push_back(c);
    }
  }
  RnnCase bare = base;
  bare.bias = false;
  bare.initial = false;
  cases.push_back(bare);
  bare.layout = 1;
  bare.direction = "bidirectional";
  cases.push_back(bare);
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    RnnCase c = base;
    c.direction = direction;
    c.layout = direction[0] == 'r' ? 1 : 0;
    c.lens = {4, 2, 0};
    cases.push_back(c);
  }
  RnnCase lens_bare = base;
  lens_bare.direction = "bidirectional";
  lens_bare.layout = 1;
  lens_bare.lens = {1, 4, 3};
  lens_bare.initial = false;
  cases.push_back(lens_bare);
  // Y alone (a stacked layer's input), the final state alone (a classifier's).
  for (int k : {0, 1}) {
    RnnCase c = base;
    c.direction = "bidirectional";
    c.outputs = {k};
    cases.push_back(c);
  }
  return cases;
}

TEST(GradientCheckRnnTest, Rnn) {
  RnnCase base;
  base.cell = "RNN";
  for (const RnnCase& c : Cases(base)) Check(MakeCase(c));
}

TEST(GradientCheckRnnTest, Gru) {
  RnnCase base;
  base.cell = "GRU";
  for (const RnnCase& c : Cases(base)) Check(MakeCase(c));
}

TEST(GradientCheckRnnTest, GruLinearBeforeReset) {
  RnnCase base;
  base.cell = "GRU";
  base.linear_before_reset = 1;
  for (const RnnCase& c : Cases(base)) Check(MakeCase(c));
}

TEST(GradientCheckRnnTest, Lstm) {
  RnnCase base;
  for (const RnnCase& c : Cases(base)) Check(MakeCase(c));
  // Y_c alone, and Y_h with Y_c (a stacked model's next layer's initial states).
  RnnCase c = base;
  c.outputs = {2};
  Check(MakeCase(c));
  c.outputs = {1, 2};
  c.direction = "reverse";
  Check(MakeCase(c));
}

TEST(GradientCheckRnnTest, LstmPeepholesAndInputForget) {
  RnnCase base;
  base.peepholes = true;
  for (const char* direction : {"forward", "bidirectional"}) {
    RnnCase c = base;
    c.direction = direction;
    Check(MakeCase(c));
    c.lens = {3, 4, 1};
    c.layout = 1;
    Check(MakeCase(c));
  }
  RnnCase forget = base;
  forget.input_forget = true;
  Check(MakeCase(forget));
  forget.peepholes = false;
  forget.direction = "reverse";
  Check(MakeCase(forget));
}

// What the backward ops do not differentiate is UNIMPLEMENTED, naming the node and the attr.
TEST(GradientCheckRnnTest, RefusesOtherActivationsAndClip) {
  struct Refused {
    std::string cell;
    onnx::AttributeProto attr;
    std::string want;
  };
  const std::vector<Refused> refused = {
      {"LSTM", gradient_check::FloatAttr("clip", 3.0f), "'clip'"},
      {"GRU", onnx::AttributeProto(), "'activations'"},
      {"RNN", onnx::AttributeProto(), "'activations'"},
  };
  for (const Refused& r : refused) {
    RnnCase rc;
    rc.cell = r.cell;
    onnx::AttributeProto attr = r.attr;
    if (attr.name().empty()) {
      attr.set_name("activations");
      attr.set_type(onnx::AttributeProto::STRINGS);
      attr.add_strings(r.cell == "RNN" ? "Relu" : "HardSigmoid");
      if (r.cell == "GRU") attr.add_strings("Tanh");
    }
    rc.extra_attrs = {attr};
    gradient_check::Case c = MakeCase(rc);
    OnnxImportOptions options;
    options.check = false;
    auto g = ImportOnnxModel(gradient_check::Model(c), options);
    ASSERT_FALSE(g.ok()) << r.cell;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_NE(std::string(g.status().message()).find(r.want), std::string::npos) << g.status();
    EXPECT_NE(std::string(g.status().message()).find("Y_node"), std::string::npos) << g.status();
  }
}

// Explicitly named default activations (any case) are the defaults.
TEST(GradientCheckRnnTest, NamedDefaultActivations) {
  RnnCase rc;
  rc.cell = "GRU";
  onnx::AttributeProto attr;
  attr.set_name("activations");
  attr.set_type(onnx::AttributeProto::STRINGS);
  for (const char* a : {"Sigmoid", "Tanh", "sigmoid", "TANH"}) attr.add_strings(a);
  rc.extra_attrs = {attr};
  rc.direction = "bidirectional";
  Check(MakeCase(rc));
}

}  // namespace
}  // namespace sluice
