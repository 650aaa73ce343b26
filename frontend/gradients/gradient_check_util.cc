#include "frontend/gradients/gradient_check_util.h"

#include <cmath>
#include <random>

#include "frontend/onnx/importer.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "onnx/defs/attr_proto_util.h"

namespace sluice {
namespace gradient_check {

onnx::NodeProto Node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                     std::vector<onnx::AttributeProto> attrs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(out[0] + "_node");
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  for (auto& a : attrs) *n.add_attribute() = a;
  return n;
}

onnx::NodeProto GradientOp(const std::vector<std::string>& xs, const std::vector<std::string>& zs,
                           const std::string& y, const std::vector<std::string>& outputs) {
  onnx::NodeProto n;
  n.set_op_type("Gradient");
  n.set_domain("ai.onnx.preview.training");
  n.set_name(outputs[0] + "_node");
  *n.add_attribute() = onnx::MakeAttribute("xs", xs);
  for (const auto& x : xs) n.add_input(x);
  if (!zs.empty()) {
    *n.add_attribute() = onnx::MakeAttribute("zs", zs);
    for (const auto& z : zs) n.add_input(z);
  }
  *n.add_attribute() = StringAttr("y", y);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

// ONNX's own attribute makers, under names that say the type at the call site.
onnx::AttributeProto IntAttr(const std::string& name, int64_t v) { return onnx::MakeAttribute(name, v); }
onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& v) {
  return onnx::MakeAttribute(name, v);
}
onnx::AttributeProto FloatAttr(const std::string& name, float v) { return onnx::MakeAttribute(name, v); }
onnx::AttributeProto StringAttr(const std::string& name, const std::string& v) {
  return onnx::MakeAttribute(name, v);
}

namespace {
onnx::TensorProto TensorHeader(const std::string& name, onnx::TensorProto::DataType type,
                               const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}
}  // namespace

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values,
                              const std::vector<int64_t>& dims) {
  onnx::TensorProto t = TensorHeader(name, onnx::TensorProto::INT64, dims);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

onnx::TensorProto BoolTensor(const std::string& name, const std::vector<bool>& values,
                             const std::vector<int64_t>& dims) {
  onnx::TensorProto t = TensorHeader(name, onnx::TensorProto::BOOL, dims);
  for (bool v : values) t.add_int32_data(v ? 1 : 0);
  return t;
}

onnx::TensorProto FloatTensor(const std::string& name, const std::vector<float>& values,
                              const std::vector<int64_t>& dims) {
  onnx::TensorProto t = TensorHeader(name, onnx::TensorProto::FLOAT, dims);
  for (float v : values) t.add_float_data(v);
  return t;
}

namespace {
std::string InputName(size_t i) { return std::string(1, static_cast<char>('a' + i)); }
}  // namespace

onnx::ModelProto Model(const Case& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(c.opset);
  auto* t = m.add_opset_import();
  t->set_domain("ai.onnx.preview.training");
  t->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name(c.name);
  std::vector<std::string> xs, outputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    auto* in = g->add_input();
    in->set_name(InputName(i));
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::DOUBLE);
    for (int64_t d : c.shapes[i]) tt->mutable_shape()->add_dim()->set_dim_value(d);
    xs.push_back(InputName(i));
    outputs.push_back("d" + InputName(i));
  }
  for (const auto& init : c.initializers) *g->add_initializer() = init;
  for (const auto& n : c.nodes) *g->add_node() = n;
  *g->add_node() = GradientOp(xs, {}, "y", outputs);
  g->add_output()->set_name("y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  for (const auto& name : outputs) {
    auto* o = g->add_output();
    o->set_name(name);
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
  ASSERT_OK(g);
  auto session = NewSession({});
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(g->graph));
  std::mt19937 rng(1);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const auto [lo, hi] = i < c.ranges.size() ? c.ranges[i] : std::make_pair(c.lo, c.hi);
    std::uniform_real_distribution<double> u(lo, hi);
    Tensor t(DT_DOUBLE, TensorShape(absl::Span<const int64_t>(c.shapes[i])));
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
    ASSERT_OK(s);
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
  ASSERT_EQ(analytic.size(), 1 + inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(analytic[1 + i].shape(), inputs[i].shape()) << "gradient " << i << " has the input's shape";
    for (int64_t k = 0; k < inputs[i].NumElements(); ++k) {
      std::vector<Tensor> plus, minus;
      for (const auto& t : inputs) {
        plus.push_back(t.DeepCopy());
        minus.push_back(t.DeepCopy());
      }
      plus[i].flat<double>()[k] += c.eps;
      minus[i].flat<double>()[k] -= c.eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * c.eps);
      const double got = analytic[1 + i].flat<double>()[k];
      EXPECT_NEAR(got, numeric, c.abs_tolerance + 1e-5 * std::fabs(numeric)) << "input " << i << " element " << k;
    }
  }
}

}  // namespace gradient_check
}  // namespace sluice
