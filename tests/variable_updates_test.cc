// Optimizer updates of variables in place: the inplace_variable_updates pass (SGD spelled
// W - lr * g, in Sluice's and TensorFlow's variables) and TensorFlow's Apply*/ResourceApply*
// kernels, through sessions as users run them. Expected values are worked by hand (comments).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/text_format.h"
#include "tests/optimizer_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using optimizer_test::Plain;

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

std::string Float(const std::string& name) {
  return absl::StrCat("attr { key: \"", name, "\" value { type: DT_FLOAT } }");
}
std::string Shape(std::vector<int64_t> dims) {
  std::string s = "attr { key: \"shape\" value { shape {";
  for (int64_t d : dims) absl::StrAppend(&s, " dim { size: ", d, " }");
  return s + " } } }";
}
std::string Placeholder(const std::string& name, std::vector<int64_t> dims) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Placeholder\" ", Float("dtype"), " ", Shape(dims), " }\n");
}
std::string ScalarConst(const std::string& name, float v) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" ", Float("dtype"),
                      " attr { key: \"value\" value { tensor { dtype: DT_FLOAT float_val: ", v, " } } } }\n");
}
std::string Binary(const std::string& name, const std::string& op, const std::string& a, const std::string& b) {
  return absl::StrCat("node { name: \"", name, "\" op: \"", op, "\" input: \"", a, "\" input: \"", b, "\" ",
                      Float("T"), " }\n");
}
// Sluice's variable `var` of shape `dims`: var/init (fed var_init), var/read.
std::string OwnVariable(const std::string& var, std::vector<int64_t> dims) {
  return absl::StrCat(
      Placeholder(var + "_init", dims), "node { name: \"", var, "/init\" op: \"AssignVariable\" input: \"", var,
      "_init\" attr { key: \"shared_name\" value { s: \"", var, "\" } } ", Float("dtype"), " }\n", "node { name: \"",
      var, "/read\" op: \"ReadVariable\" attr { key: \"shared_name\" value { s: \"", var, "\" } } ", Float("dtype"),
      " ", Shape(dims), " }\n");
}
std::string OwnAssign(const std::string& name, const std::string& var, const std::string& value) {
  return absl::StrCat("node { name: \"", name, "\" op: \"AssignVariable\" input: \"", value, "\" input: \"^", var,
                      "/read\" attr { key: \"shared_name\" value { s: \"", var, "\" } } ", Float("dtype"), " }\n");
}

Tensor Vec(std::vector<float> v) { return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())})); }

std::vector<float> Values(const Tensor& t) {
  std::vector<float> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) v[i] = t.flat<float>()[i];
  return v;
}

int CountOp(const RunMetadata& m, const std::string& op) {
  int c = 0;
  for (const GraphDef& part : m.partition_graphs()) {
    for (const NodeDef& n : part.node()) c += n.op() == op;
  }
  return c;
}

std::unique_ptr<Session> Open(const GraphDef& g, const SessionOptions& options = SessionOptions()) {
  auto session = NewSession(options);
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g));
  return std::move(*session);
}

// Runs `targets` with `feeds`, returning the partition graphs the step ran.
RunMetadata Step(Session* s, const std::vector<std::pair<std::string, Tensor>>& feeds,
                 const std::vector<std::string>& targets, std::vector<Tensor>* out = nullptr,
                 const std::vector<std::string>& fetches = {}) {
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> local;
  EXPECT_OK(s->Run(options, feeds, fetches, targets, out != nullptr ? out : &local, &metadata));
  return metadata;
}

std::vector<float> Fetch(Session* s, const std::string& tensor) {
  std::vector<Tensor> out;
  EXPECT_OK(s->Run({}, {tensor}, {}, &out));
  return out.size() == 1 ? Values(out[0]) : std::vector<float>();
}

// w = [1, 2, 3, 4]; each step w -= 0.5 * g with g = [2, -2, 4, 0.5]:
// step 1: [0, 3, 1, 3.75]; step 2: [-1, 4, -1, 3.5].
TEST(InplaceVariableUpdatesTest, SpelledOutSgdBecomesOneUpdateWithTheSameValues) {
  const std::string text = OwnVariable("w", {4}) + Placeholder("g", {4}) + ScalarConst("lr", 0.5f) +
                           Binary("step", "Mul", "lr", "g") + Binary("new", "Sub", "w/read", "step") +
                           OwnAssign("w/update", "w", "new");
  for (bool optimized : {true, false}) {
    SCOPED_TRACE(optimized ? "optimized" : "plain");
    auto s = Open(Parse(text), optimized ? SessionOptions() : Plain());
    Step(s.get(), {{"w_init", Vec({1, 2, 3, 4})}}, {"w/init"});
    RunMetadata m = Step(s.get(), {{"g", Vec({2, -2, 4, 0.5f})}}, {"w/update"});
    EXPECT_EQ(CountOp(m, "ApplyGradientDescentVariable"), optimized ? 1 : 0);
    EXPECT_EQ(CountOp(m, "Sub"), optimized ? 0 : 1);
    EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(0, 3, 1, 3.75f));
    // A value fetched and still held by the client is not written by the next update.
    std::vector<Tensor> held;
    ASSERT_OK(s->Run({}, {"w/read:0"}, {}, &held));
    Step(s.get(), {{"g", Vec({2, -2, 4, 0.5f})}}, {"w/update"});
    EXPECT_THAT(Values(held[0]), ::testing::ElementsAre(0, 3, 1, 3.75f));
    EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(-1, 4, -1, 3.5f));
    // The read fetched in the update's own step is the value before it.
    std::vector<Tensor> before;
    Step(s.get(), {{"g", Vec({0, 0, 2, 0})}}, {"w/update"}, &before, {"w/read:0"});
    ASSERT_EQ(before.size(), 1u);
    EXPECT_THAT(Values(before[0]), ::testing::ElementsAre(-1, 4, -1, 3.5f));
    EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(-1, 4, -2, 3.5f));
  }
}

// The product in either order, and a gradient that broadcasts (one value for all of w, as Sub
// broadcast it): w = [1, 2] -= 2 * [3] -> [-5, -4].
TEST(InplaceVariableUpdatesTest, RateOnEitherSideAndBroadcastGradient) {
  const std::string text = OwnVariable("w", {2}) + Placeholder("g", {1}) + ScalarConst("lr", 2) +
                           Binary("step", "Mul", "g", "lr") + Binary("new", "Sub", "w/read", "step") +
                           OwnAssign("w/update", "w", "new");
  auto s = Open(Parse(text));
  Step(s.get(), {{"w_init", Vec({1, 2})}}, {"w/init"});
  RunMetadata m = Step(s.get(), {{"g", Vec({3})}}, {"w/update"});
  EXPECT_EQ(CountOp(m, "ApplyGradientDescentVariable"), 1);
  EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(-5, -4));
}

// What must stay as it is: the new value also fetched, a rate per element, the read of
// another variable; each still computes W - lr * g.
TEST(InplaceVariableUpdatesTest, LeavesWhatIsNotAnSgdUpdateOfThatVariable) {
  const std::string text =
      OwnVariable("w", {2}) + OwnVariable("v", {2}) + Placeholder("g", {2}) + Placeholder("rates", {2}) +
      ScalarConst("lr", 1) +
      // Fetched as well.
      Binary("step_a", "Mul", "lr", "g") + Binary("new_a", "Sub", "w/read", "step_a") +
      OwnAssign("update_a", "w", "new_a") +
      // A rate per element.
      Binary("step_b", "Mul", "rates", "g") + Binary("new_b", "Sub", "w/read", "step_b") +
      OwnAssign("update_b", "w", "new_b") +
      // v's value assigned to w.
      Binary("step_c", "Mul", "lr", "g") + Binary("new_c", "Sub", "v/read", "step_c") +
      OwnAssign("update_c", "w", "new_c");
  auto s = Open(Parse(text));
  Step(s.get(), {{"w_init", Vec({1, 2})}, {"v_init", Vec({10, 20})}}, {"w/init", "v/init"});
  std::vector<Tensor> out;
  RunMetadata m = Step(s.get(), {{"g", Vec({1, 1})}}, {"update_a"}, &out, {"new_a:0"});
  EXPECT_EQ(CountOp(m, "ApplyGradientDescentVariable"), 0);
  EXPECT_THAT(Values(out[0]), ::testing::ElementsAre(0, 1));
  EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(0, 1));
  m = Step(s.get(), {{"g", Vec({1, 1})}, {"rates", Vec({2, 3})}}, {"update_b"});
  EXPECT_EQ(CountOp(m, "ApplyGradientDescentVariable"), 0);
  EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(-2, -2));
  m = Step(s.get(), {{"g", Vec({1, 1})}}, {"update_c"});
  EXPECT_EQ(CountOp(m, "ApplyGradientDescentVariable"), 0);
  EXPECT_THAT(Fetch(s.get(), "w/read:0"), ::testing::ElementsAre(9, 19));
}

// ONNX's optimizers over two weights read from variables, every output assigned back: one
// ApplyOnnx* update of the variables in place, with the values of the unfused node (run
// without the optimizer), step after step.
TEST(InplaceVariableUpdatesTest, OnnxOptimizersOfVariablesUpdateInPlace) {
  struct Case {
    std::string op;
    int states;
    std::string attrs;
  };
  const std::vector<Case> cases = {
      {"Onnx>Adagrad", 1,
       "attr { key: \"decay_factor\" value { f: 0.1 } } attr { key: \"epsilon\" value { f: 1e-6 } } "
       "attr { key: \"norm_coefficient\" value { f: 0.01 } }"},
      {"Onnx>Momentum", 1,
       "attr { key: \"alpha\" value { f: 0.9 } } attr { key: \"beta\" value { f: 0.5 } } "
       "attr { key: \"mode\" value { s: \"nesterov\" } } attr { key: \"norm_coefficient\" value { f: 0 } }"},
      {"Onnx>Adam", 2,
       "attr { key: \"alpha\" value { f: 0.9 } } attr { key: \"beta\" value { f: 0.999 } } "
       "attr { key: \"epsilon\" value { f: 1e-6 } } attr { key: \"norm_coefficient\" value { f: 0.001 } } "
       "attr { key: \"norm_coefficient_post\" value { f: 0.01 } }"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    // Weights a [3] and b [2]; state variables a_s0, b_s0 (and a_s1, b_s1).
    std::vector<std::string> groups = {"a", "b"};
    std::vector<int64_t> sizes = {3, 2};
    std::string text = ScalarConst("r", 0.1f) +
                       "node { name: \"t\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT64 } } }\n";
    std::vector<std::string> vars;
    for (int s = -1; s < c.states; ++s) {
      for (size_t i = 0; i < groups.size(); ++i) {
        vars.push_back(s < 0 ? groups[i] : absl::StrCat(groups[i], "_s", s));
        text += OwnVariable(vars.back(), {sizes[i]});
      }
    }
    for (size_t i = 0; i < groups.size(); ++i) text += Placeholder("g_" + groups[i], {sizes[i]});
    std::string opt = absl::StrCat("node { name: \"opt\" op: \"", c.op, "\" input: \"r\" input: \"t\"");
    std::vector<std::string> inputs = {vars[0], vars[1], "g_a", "g_b"};
    for (size_t k = 2; k < vars.size(); ++k) inputs.push_back(vars[k]);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const bool grad = k == 2 || k == 3;
      absl::StrAppend(&opt, " input: \"", grad ? inputs[k] : inputs[k] + "/read", "\"");
    }
    absl::StrAppend(&opt, " ", Float("T1"), " attr { key: \"T2\" value { type: DT_INT64 } } ", Float("T3"),
                    " attr { key: \"N\" value { i: ", inputs.size(), " } } attr { key: \"M\" value { i: ",
                    vars.size(), " } } ", c.attrs, " }\n");
    text += opt;
    std::vector<std::string> targets, inits;
    for (size_t k = 0; k < vars.size(); ++k) {
      text += OwnAssign(vars[k] + "/update", vars[k], k == 0 ? "opt" : absl::StrCat("opt:", k));
      targets.push_back(vars[k] + "/update");
      inits.push_back(vars[k] + "/init");
    }
    std::vector<std::vector<std::vector<float>>> results;
    for (bool optimized : {true, false}) {
      auto s = Open(Parse(text), optimized ? SessionOptions() : Plain());
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (size_t k = 0; k < vars.size(); ++k) {
        const bool state = k >= 2;
        std::vector<float> v(sizes[k % 2]);
        for (size_t e = 0; e < v.size(); ++e) v[e] = state ? 0.1f * (e + 1) : 1.0f - 0.7f * e + 0.3f * k;
        feeds.emplace_back(vars[k] + "_init", Vec(v));
      }
      Step(s.get(), feeds, inits);
      for (int64_t step = 1; step <= 3; ++step) {
        RunMetadata m = Step(s.get(),
                             {{"t", Tensor::Scalar<int64_t>(step)},
                              {"g_a", Vec({0.5f, -1.0f * step, 2})},
                              {"g_b", Vec({-0.25f, 0.75f})}},
                             targets);
        EXPECT_EQ(CountOp(m, c.op), optimized ? 0 : 1);
        EXPECT_EQ(CountOp(m, "ApplyOnnx" + c.op.substr(5)), optimized ? 1 : 0);
      }
      results.emplace_back();
      for (const std::string& v : vars) results.back().push_back(Fetch(s.get(), v + "/read:0"));
    }
    for (size_t k = 0; k < vars.size(); ++k) {
      ASSERT_EQ(results[0][k].size(), results[1][k].size());
      for (size_t e = 0; e < results[0][k].size(); ++e) {
        EXPECT_FLOAT_EQ(results[0][k][e], results[1][k][e]) << vars[k] << "[" << e << "]";
      }
      // The update changed every variable.
      EXPECT_NE(results[1][k][0], 0.1f) << vars[k];
    }
  }
}

// TensorFlow's resource variable h of shape [2] (VarHandleOp), initialized from h_init.
std::string TfVariable(const std::string& h, std::vector<int64_t> dims) {
  return absl::StrCat(Placeholder(h + "_init", dims), "node { name: \"", h, "\" op: \"VarHandleOp\" ", Float("dtype"),
                      " ", Shape(dims), " attr { key: \"shared_name\" value { s: \"", h, "\" } } }\n",
                      "node { name: \"", h, "/init\" op: \"AssignVariableOp\" input: \"", h, "\" input: \"", h,
                      "_init\" ", Float("dtype"), " }\n", "node { name: \"", h,
                      "/read\" op: \"ReadVariableOp\" input: \"", h, "\" ", Float("dtype"), " }\n");
}

// TensorFlow's spellings: AssignVariableOp(h, Sub(ReadVariableOp(h), Mul(lr, g))) and
// AssignSubVariableOp(h, Mul(lr, g)) become ResourceApplyGradientDescent.
// h = [1, 2] -= 0.5 * [2, 4] -> [0, 0]; then -= 0.5 * [2, 4] again -> [-1, -2].
TEST(InplaceVariableUpdatesTest, TensorFlowSpelledSgdBecomesResourceApplyGradientDescent) {
  const std::string text =
      TfVariable("h", {2}) + Placeholder("g", {2}) + ScalarConst("lr", 0.5f) + Binary("step", "Mul", "lr", "g") +
      Binary("new", "Sub", "h/read", "step") + "node { name: \"h/update\" op: \"AssignVariableOp\" input: \"h\" " +
      "input: \"new\" " + Float("dtype") + " }\n" + Binary("step2", "Mul", "g", "lr") +
      "node { name: \"h/update_sub\" op: \"AssignSubVariableOp\" input: \"h\" input: \"step2\" " + Float("dtype") +
      " }\n";
  for (bool optimized : {true, false}) {
    SCOPED_TRACE(optimized ? "optimized" : "plain");
    auto s = Open(Parse(text), optimized ? SessionOptions() : Plain());
    Step(s.get(), {{"h_init", Vec({1, 2})}}, {"h/init"});
    RunMetadata m = Step(s.get(), {{"g", Vec({2, 4})}}, {"h/update"});
    EXPECT_EQ(CountOp(m, "ResourceApplyGradientDescent"), optimized ? 1 : 0);
    EXPECT_THAT(Fetch(s.get(), "h/read:0"), ::testing::ElementsAre(0, 0));
    m = Step(s.get(), {{"g", Vec({2, 4})}}, {"h/update_sub"});
    EXPECT_EQ(CountOp(m, "ResourceApplyGradientDescent"), optimized ? 1 : 0);
    EXPECT_THAT(Fetch(s.get(), "h/read:0"), ::testing::ElementsAre(-1, -2));
  }
}

// One TensorFlow optimizer op over resource variables var (and slots) of shape [n].
struct ApplyCase {
  std::string op;
  std::vector<std::string> vars;                           // var, then the slots.
  std::vector<std::vector<float>> initial;                 // Per variable.
  std::vector<std::pair<std::string, float>> scalars;      // Inputs after the variables, in order...
  std::string grad_after;                                  // ...with grad after this scalar ("" = last).
  std::vector<float> grad;
  std::string extra_attrs;
  std::vector<std::vector<float>> want;                    // Per variable, after one update.
};

void RunApply(const ApplyCase& c) {
  SCOPED_TRACE(c.op + c.extra_attrs);
  const int64_t n = static_cast<int64_t>(c.grad.size());
  std::string text = Placeholder("grad", {n});
  std::string apply = absl::StrCat("node { name: \"apply\" op: \"", c.op, "\"");
  for (const std::string& v : c.vars) {
    text += TfVariable(v, {n});
    absl::StrAppend(&apply, " input: \"", v, "\"");
  }
  bool grad_done = false;
  for (const auto& [name, value] : c.scalars) {
    text += ScalarConst(name, value);
    absl::StrAppend(&apply, " input: \"", name, "\"");
    if (name == c.grad_after) {
      absl::StrAppend(&apply, " input: \"grad\"");
      grad_done = true;
    }
  }
  if (!grad_done) absl::StrAppend(&apply, " input: \"grad\"");
  absl::StrAppend(&apply, " ", Float("T"), " ", c.extra_attrs, " }\n");
  auto s = Open(Parse(text + apply));
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> inits;
  for (size_t i = 0; i < c.vars.size(); ++i) {
    feeds.emplace_back(c.vars[i] + "_init", Vec(c.initial[i]));
    inits.push_back(c.vars[i] + "/init");
  }
  Step(s.get(), feeds, inits);
  Step(s.get(), {{"grad", Vec(c.grad)}}, {"apply"});
  for (size_t i = 0; i < c.vars.size(); ++i) {
    std::vector<float> got = Fetch(s.get(), c.vars[i] + "/read:0");
    ASSERT_EQ(got.size(), c.want[i].size()) << c.vars[i];
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], c.want[i][k], 1e-6) << c.vars[i] << "[" << k << "]";
  }
}

TEST(TfApplyOpsTest, ResourceUpdatesAsTensorFlowDefinesThem) {
  // var -= alpha * delta: [1, 2] - 0.1 * [10, -10] = [0, 3].
  RunApply({"ResourceApplyGradientDescent", {"var"}, {{1, 2}}, {{"alpha", 0.1f}}, "", {10, -10}, "", {{0, 3}}});
  // accum = accum * 0.9 + grad = [0.45 + 2, -0.9 + 4] = [2.45, 3.1];
  // var -= 0.1 * accum -> [1 - 0.245, 2 - 0.31] = [0.755, 1.69].
  const std::vector<std::pair<std::string, float>> momentum = {{"lr", 0.1f}, {"momentum", 0.9f}};
  RunApply({"ResourceApplyMomentum", {"var", "accum"}, {{1, 2}, {0.5f, -1}}, momentum, "lr", {2, 4}, "",
            {{0.755f, 1.69f}, {2.45f, 3.1f}}});
  // Nesterov: var -= grad * lr + accum * momentum * lr = [0.2 + 0.2205, 0.4 + 0.279].
  RunApply({"ResourceApplyMomentum", {"var", "accum"}, {{1, 2}, {0.5f, -1}}, momentum, "lr", {2, 4},
            "attr { key: \"use_nesterov\" value { b: true } }", {{0.5795f, 1.321f}, {2.45f, 3.1f}}});
  // Keras: accum = accum * 0.9 - 0.1 * grad = [0.45 - 0.2, -0.9 - 0.4] = [0.25, -1.3]; var += accum.
  RunApply({"ResourceApplyKerasMomentum", {"var", "accum"}, {{1, 2}, {0.5f, -1}}, momentum, "lr", {2, 4}, "",
            {{1.25f, 0.7f}, {0.25f, -1.3f}}});
  // Adam at beta1_power 0.9, beta2_power 0.999, lr 0.01, beta1 0.9, beta2 0.999, epsilon 1e-8:
  // lr_t = 0.01 * sqrt(0.001) / 0.1 = 0.00316228; m = 0.1 + (0.5 - 0.1) * 0.1 = 0.14;
  // v = 0.01 + (0.25 - 0.01) * 0.001 = 0.01024; var = 1 - lr_t * 0.14 / (0.1011929 + 1e-8) = 0.995625.
  const std::vector<std::pair<std::string, float>> adam = {{"beta1_power", 0.9f}, {"beta2_power", 0.999f},
                                                           {"lr", 0.01f},         {"beta1", 0.9f},
                                                           {"beta2", 0.999f},     {"epsilon", 1e-8f}};
  RunApply({"ResourceApplyAdam", {"var", "m", "v"}, {{1}, {0.1f}, {0.01f}}, adam, "", {0.5f}, "",
            {{0.995625f}, {0.14f}, {0.01024f}}});
  // Nesterov: the direction is grad * (1 - beta1) + beta1 * m = 0.05 + 0.126 = 0.176 -> 0.9945.
  RunApply({"ResourceApplyAdam", {"var", "m", "v"}, {{1}, {0.1f}, {0.01f}}, adam, "", {0.5f},
            "attr { key: \"use_nesterov\" value { b: true } }", {{0.9945f}, {0.14f}, {0.01024f}}});
  // Adagrad: accum = [1 + 9, 4 + 0] = [10, 4]; var = [1 - 3 * 0.5 / sqrt(10), 2] = [0.5256584, 2].
  RunApply({"ResourceApplyAdagrad", {"var", "accum"}, {{1, 2}, {1, 4}}, {{"lr", 0.5f}}, "", {3, 0}, "",
            {{0.5256584f, 2}, {10, 4}}});
  // Without update_slots accum stays [1, 4]: var = [1 - 1.5 / 1, 2] = [-0.5, 2].
  RunApply({"ResourceApplyAdagrad", {"var", "accum"}, {{1, 2}, {1, 4}}, {{"lr", 0.5f}}, "", {3, 0},
            "attr { key: \"update_slots\" value { b: false } }", {{-0.5f, 2}, {1, 4}}});
  // AdagradV2, epsilon 1: var = 1 - 1.5 / (sqrt(10) + 1) = 0.6396204.
  RunApply({"ResourceApplyAdagradV2", {"var", "accum"}, {{1, 2}, {1, 4}}, {{"lr", 0.5f}, {"epsilon", 1}}, "", {3, 0},
            "", {{0.6396204f, 2}, {10, 4}}});
}

// Ref variables: VariableV2, Assign, then ApplyGradientDescent/ApplyMomentum output the new value.
TEST(TfApplyOpsTest, RefVariablesUpdateAndOutputTheNewValue) {
  const std::string text =
      Placeholder("init", {2}) + Placeholder("grad", {2}) + ScalarConst("lr", 0.5f) + ScalarConst("momentum", 0.5f) +
      "node { name: \"var\" op: \"VariableV2\" " + Float("dtype") + " " + Shape({2}) + " }\n" +
      "node { name: \"acc\" op: \"VariableV2\" " + Float("dtype") + " " + Shape({2}) + " }\n" +
      "node { name: \"var/assign\" op: \"Assign\" input: \"var\" input: \"init\" " + Float("T") + " }\n" +
      "node { name: \"acc/assign\" op: \"Assign\" input: \"acc\" input: \"init\" " + Float("T") + " }\n" +
      "node { name: \"sgd\" op: \"ApplyGradientDescent\" input: \"var\" input: \"lr\" input: \"grad\" " + Float("T") +
      " }\n" +
      "node { name: \"mom\" op: \"ApplyMomentum\" input: \"var\" input: \"acc\" input: \"lr\" input: \"grad\" "
      "input: \"momentum\" " +
      Float("T") + " }\n";
  auto s = Open(Parse(text));
  Step(s.get(), {{"init", Vec({1, 2})}}, {"var/assign", "acc/assign"});
  std::vector<Tensor> out;
  // var = [1, 2] - 0.5 * [4, 2] = [-1, 1].
  Step(s.get(), {{"grad", Vec({4, 2})}}, {}, &out, {"sgd:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ::testing::ElementsAre(-1, 1));
  // acc = [1, 2] * 0.5 + [4, 2] = [4.5, 3]; var = [-1, 1] - 0.5 * acc = [-3.25, -0.5].
  Step(s.get(), {{"grad", Vec({4, 2})}}, {}, &out, {"mom:0"});
  EXPECT_THAT(Values(out[0]), ::testing::ElementsAre(-3.25f, -0.5f));
  EXPECT_THAT(Fetch(s.get(), "var:0"), ::testing::ElementsAre(-3.25f, -0.5f));
}

TEST(TfApplyOpsTest, BadInputsAreErrorsNamingWhatIsWrong) {
  const std::string text =
      TfVariable("var", {2}) + TfVariable("accum", {3}) + TfVariable("never", {2}) + Placeholder("grad", {-1}) +
      "node { name: \"lr\" op: \"Placeholder\" " + Float("dtype") + " }\n" +  // Any shape.
      "node { name: \"gd\" op: \"ResourceApplyGradientDescent\" input: \"var\" input: \"lr\" input: \"grad\" " +
      Float("T") + " }\n" +
      "node { name: \"mom\" op: \"ResourceApplyMomentum\" input: \"var\" input: \"accum\" input: \"lr\" input: "
      "\"grad\" input: \"lr\" " +
      Float("T") + " }\n" +
      "node { name: \"unset\" op: \"ResourceApplyGradientDescent\" input: \"never\" input: \"lr\" input: \"grad\" " +
      Float("T") + " }\n";
  auto s = Open(Parse(text));
  Step(s.get(), {{"var_init", Vec({1, 2})}, {"accum_init", Vec({1, 2, 3})}}, {"var/init", "accum/init"});
  std::vector<Tensor> out;
  absl::Status st = s->Run({{"lr", Vec({1, 2})}, {"grad", Vec({1, 1})}}, {}, {"gd"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("alpha is not a scalar"));
  Tensor scalar = Tensor::Scalar<float>(1);
  st = s->Run({{"lr", scalar}, {"grad", Vec({1, 1, 1})}}, {}, {"gd"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("var and delta do not have the same shape"));
  st = s->Run({{"lr", scalar}, {"grad", Vec({1, 1})}}, {}, {"mom"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("var and accum do not have the same shape"));
  st = s->Run({{"lr", scalar}, {"grad", Vec({1, 1})}}, {}, {"unset"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("'never'"));
  // Nothing was changed by the failed updates.
  EXPECT_THAT(Fetch(s.get(), "var/read:0"), ::testing::ElementsAre(1, 2));
}

}  // namespace
}  // namespace sluice
