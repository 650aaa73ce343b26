// Checks every gradient function against central finite differences in double precision:
// each case is an ONNX model whose Gradient node differentiates sum(y) with respect to the
// inputs; the same session also gives y for perturbed inputs.
#include <cmath>
#include <random>

#include "frontend/gradients/gradients.h"
#include "frontend/onnx/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "master/session.h"

namespace sluice {
namespace {

struct Case {
  std::string name;
  // Forward nodes over inputs "a", "b"... producing "y".
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::vector<int64_t>> shapes;  // One per input.
  double lo = -2, hi = 2;                    // Input range (Log and Sqrt need positives).
};

onnx::NodeProto Node(const std::string& op, std::vector<std::string> in, std::string out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(out + "_node");
  for (auto& i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

onnx::ModelProto Model(const Case& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* t = m.add_opset_import();
  t->set_domain("ai.onnx.preview.training");
  t->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name(c.name);
  onnx::NodeProto grad;
  grad.set_op_type("Gradient");
  grad.set_domain("ai.onnx.preview.training");
  grad.set_name("gradient");
  auto* xs = grad.add_attribute();
  xs->set_name("xs");
  xs->set_type(onnx::AttributeProto::STRINGS);
  auto* y = grad.add_attribute();
  y->set_name("y");
  y->set_type(onnx::AttributeProto::STRING);
  y->set_s("y");
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    std::string name(1, static_cast<char>('a' + i));
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::DOUBLE);
    for (int64_t d : c.shapes[i]) tt->mutable_shape()->add_dim()->set_dim_value(d);
    xs->add_strings(name);
    grad.add_input(name);
    grad.add_output("d" + name);
  }
  for (const auto& n : c.nodes) *g->add_node() = n;
  *g->add_node() = grad;
  g->add_output()->set_name("y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    auto* o = g->add_output();
    o->set_name("d" + std::string(1, static_cast<char>('a' + i)));
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  }
  return m;
}

void Check(const Case& c) {
  SCOPED_TRACE(c.name);
  // The outputs carry no shapes, which the checker insists on; the rest is what matters here.
  OnnxImportOptions options;
  options.check = false;
  auto g = ImportOnnxModel(Model(c), options);
  ASSERT_TRUE(g.ok()) << g.status();
  auto session = NewSession({});
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(g->graph).ok());
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(c.lo, c.hi);
  std::vector<Tensor> inputs;
  for (const auto& shape : c.shapes) {
    Tensor t(DT_DOUBLE, TensorShape(absl::Span<const int64_t>(shape)));
    for (double& v : t.flat<double>()) {
      v = u(rng);
      if (std::fabs(v) < 0.1) v += 0.3;  // Keep away from Relu's kink.
    }
    inputs.push_back(t);
  }
  std::vector<std::string> fetches;
  for (const auto& o : g->outputs) fetches.push_back(o.tensor);
  auto run = [&](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < in.size(); ++i) feeds.emplace_back(g->inputs[i].tensor, in[i]);
    absl::Status s = (*session)->Run(feeds, fetches, {}, out);
    ASSERT_TRUE(s.ok()) << s;
  };
  auto loss = [&](const std::vector<Tensor>& in) {
    std::vector<Tensor> out;
    run(in, &out);
    double sum = 0;
    for (double v : out[0].flat<double>()) sum += v;
    return sum;
  };
  std::vector<Tensor> analytic;
  run(inputs, &analytic);
  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(analytic[1 + i].shape(), inputs[i].shape()) << "gradient " << i << " has the input's shape";
    for (int64_t k = 0; k < inputs[i].NumElements(); ++k) {
      std::vector<Tensor> plus, minus;
      for (const auto& t : inputs) {
        plus.push_back(t.DeepCopy());
        minus.push_back(t.DeepCopy());
      }
      plus[i].flat<double>()[k] += eps;
      minus[i].flat<double>()[k] -= eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      const double got = analytic[1 + i].flat<double>()[k];
      EXPECT_NEAR(got, numeric, 1e-6 + 1e-5 * std::fabs(numeric)) << "input " << i << " element " << k;
    }
  }
}

TEST(GradientCheckTest, ElementwiseWithBroadcasting) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    Check({std::string(op) + "_broadcast", {Node(op, {"a", "b"}, "y")}, {{2, 3}, {3}}});
    Check({std::string(op) + "_scalar", {Node(op, {"a", "b"}, "y")}, {{}, {2, 2}}});
  }
}

TEST(GradientCheckTest, Unary) {
  for (const char* op : {"Neg", "Relu", "Sigmoid", "Tanh", "Exp"}) Check({op, {Node(op, {"a"}, "y")}, {{2, 3}}});
  Check({"Log", {Node("Log", {"a"}, "y")}, {{4}}, 0.5, 3});
  Check({"Sqrt", {Node("Sqrt", {"a"}, "y")}, {{4}}, 0.5, 3});
  Check({"Identity", {Node("Identity", {"a"}, "y")}, {{3}}});
}

TEST(GradientCheckTest, MatMulBatchedAndBroadcast) {
  Check({"matmul_2d", {Node("MatMul", {"a", "b"}, "y")}, {{2, 3}, {3, 4}}});
  Check({"matmul_batched", {Node("MatMul", {"a", "b"}, "y")}, {{2, 2, 3}, {3, 2}}});
}

TEST(GradientCheckTest, SharedSubexpressionsAndComposition) {
  // y = tanh(a @ b + c) * sigmoid(a @ b): the product is used twice.
  Check({"mlp", {Node("MatMul", {"a", "b"}, "ab"), Node("Add", {"ab", "c"}, "h"), Node("Tanh", {"h"}, "t"),
                 Node("Sigmoid", {"ab"}, "s"), Node("Mul", {"t", "s"}, "y")},
         {{2, 3}, {3, 2}, {2}}});
}

TEST(GradientCheckTest, OpsWithoutGradientsNameThePath) {
  Case c{"floor", {Node("Floor", {"a"}, "f"), Node("Neg", {"f"}, "y")}, {{2}}};
  OnnxImportOptions options;
  options.check = false;
  auto g = ImportOnnxModel(Model(c), options);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), ::testing::HasSubstr("op 'Floor'"));
  EXPECT_THAT(g.status().message(), ::testing::HasSubstr("path from y"));
}

}  // namespace
}  // namespace sluice
