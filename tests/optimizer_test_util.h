// Helpers of the optimizer's tests (tests/optimizer_test.cc, tests/optimizer_conv_test.cc):
// small ONNX models built in code, imports with and without the optimizer (as the master runs
// it), and sessions that run a graph as a test made it.
#ifndef SLUICE_TESTS_OPTIMIZER_TEST_UTIL_H_
#define SLUICE_TESTS_OPTIMIZER_TEST_UTIL_H_

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "frontend/onnx/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "optimizer/meta_optimizer.h"
#include "optimizer/passes.h"

namespace sluice {
namespace optimizer_test {


// An imported graph after the optimizer, as the master runs it (no device assigned: every node
// is a CPU's), with the optimizer's report.
struct OptGraph : OnnxGraph {
  std::vector<OptimizerPassReport> optimizations;
};

// The GraphItem of an imported graph: its inputs fed with their declared shapes.
inline GraphItem ItemOf(const OnnxGraph& g) {
  GraphItem item;
  item.graph = g.graph;
  for (const auto& in : g.inputs) {
    item.inputs.push_back(in.tensor);
    if (!in.has_default) item.feed_shapes[in.tensor] = in.shape;
  }
  for (const auto& out : g.outputs) item.outputs.push_back(out.tensor);
  InferItemShapes(&item);
  return item;
}

inline absl::StatusOr<OptGraph> Optimize(absl::StatusOr<OnnxGraph> imported, const RewriterConfig& config = {}) {
  if (!imported.ok()) return imported.status();
  GraphItem item = ItemOf(*imported);
  OptGraph out;
  static_cast<OnnxGraph&>(out) = *std::move(imported);
  SL_ASSIGN_OR_RETURN(out.optimizations, RunOptimizer(config, &item));
  out.graph = std::move(item.graph);
  return out;
}
inline absl::StatusOr<OptGraph> ImportOptimized(onnx::ModelProto model, const RewriterConfig& config = {}) {
  return Optimize(ImportOnnxModel(std::move(model)), config);
}
inline absl::StatusOr<OptGraph> ImportFileOptimized(const std::string& path, const RewriterConfig& config = {}) {
  return Optimize(ImportOnnxFile(path), config);
}

// Sessions that run the graphs as the tests made them (the master's optimizer off).
inline SessionOptions Plain() {
  SessionOptions options;
  options.config.mutable_graph_options()->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  return options;
}

// y = ACTIVATION(Conv(x, w, b)) for x [1, 4, 6, 6] and a 3x3 convolution with padding 1,
// built by `add_activation`, which adds nodes reading "c" and ending in "y".
inline onnx::ModelProto ConvModel(const std::function<void(onnx::GraphProto*)>& add_activation) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("conv_activation");
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  auto add_initializer = [&](const std::string& name, std::vector<int64_t> dims) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(2 * value(rng));
  };
  add_initializer("w", {4, 4, 3, 3});
  add_initializer("b", {4});
  auto set_type = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  set_type(g->add_input(), "x", {1, 4, 6, 6});
  onnx::NodeProto* conv = g->add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  for (const char* in : {"x", "w", "b"}) conv->add_input(in);
  conv->add_output("c");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  add_activation(g);
  set_type(g->add_output(), "y", {1, 4, 6, 6});
  return m;
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> inputs,
                         const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(output + "_node");
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

inline void AddFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline std::vector<float> RunModel(const OnnxGraph& g) {
  auto session = NewSession(Plain());
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(g.graph));
  Tensor x(DT_FLOAT, TensorShape({1, 4, 6, 6}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::sin(0.7f * i) * 3;
  std::vector<Tensor> out;
  EXPECT_OK((*session)->Run({{g.inputs[0].tensor, x}}, {g.outputs[0].tensor}, {}, &out));
  if (out.size() != 1) return {};
  return std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end());
}

// The Conv's fused activation ("" when none) and how many nodes of `op` remain.
inline std::string FusedActivation(const OnnxGraph& g) {
  for (const NodeDef& n : g.graph.node()) {
    if (n.op() == "Onnx>Conv") return n.attr().contains("activation") ? n.attr().at("activation").s() : "";
  }
  return "<no Conv>";
}
inline int Count(const OnnxGraph& g, const std::string& op) {
  int count = 0;
  for (const NodeDef& n : g.graph.node()) count += n.op() == op;
  return count;
}

struct FusionCase {
  std::string name, want_activation;
  std::function<void(onnx::GraphProto*)> build;
};


inline void AddInitializer(onnx::GraphProto* g, const std::string& name, std::vector<float> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

inline void AddIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

inline void AddTensorInitializer(onnx::GraphProto* g, const std::string& name, onnx::TensorProto::DataType type,
                          std::vector<int64_t> dims, std::vector<double> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto::INT64) {
      t->add_int64_data(static_cast<int64_t>(v));
    } else {
      t->add_float_data(static_cast<float>(v));
    }
  }
}

inline std::vector<double> Ramp(int64_t n, double scale) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(1.3 * i + 0.2) * scale;
  return v;
}

inline void SetFloatType(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A model of one float input x of `x_dims` and one float output y of rank `y_rank`, its nodes
// built by `build`.
inline onnx::ModelProto SmallModel(std::vector<int64_t> x_dims, const std::function<void(onnx::GraphProto*)>& build,
                            int y_rank = 2) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("small");
  SetFloatType(g->add_input(), "x", x_dims);
  build(g);
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < y_rank; ++i) y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  return m;
}

// The outputs of `g` (all of them, in order) for x of `x_dims`.
inline std::vector<Tensor> RunAll(const OnnxGraph& g, std::vector<int64_t> x_dims) {
  auto session = NewSession(Plain());
  EXPECT_OK(session);
  if (!session.ok()) return {};
  EXPECT_OK((*session)->Create(g.graph));
  Tensor x(DT_FLOAT, TensorShape(absl::Span<const int64_t>(x_dims)));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::cos(0.37f * i) * 2;
  std::vector<std::string> fetches;
  for (const auto& o : g.outputs) fetches.push_back(o.tensor);
  std::vector<Tensor> out;
  EXPECT_OK((*session)->Run({{g.inputs[0].tensor, x}}, fetches, {}, &out));
  return out;
}

inline void ExpectSameOutputs(const std::vector<Tensor>& want, const std::vector<Tensor>& got, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << "output " << k;
    ASSERT_EQ(got[k].dtype(), DT_FLOAT);
    for (int64_t i = 0; i < want[k].NumElements(); ++i) {
      const float w = want[k].flat<float>()[i];
      EXPECT_NEAR(got[k].flat<float>()[i], w, tolerance * (1 + std::fabs(w))) << "output " << k << " at " << i;
    }
  }
}

inline int Rewrites(const OptGraph& g, const std::string& pass) {
  for (const auto& r : g.optimizations) {
    if (r.pass == pass) return r.rewrites;
  }
  return -1;
}

// `model` imported with sizes not fixed and its placeholder's batch unknown (as the trainer's
// replicas declare it), then optimized.
inline OptGraph OptimizedWithUnknownBatch(const onnx::ModelProto& model) {
  OnnxImportOptions resized;
  resized.fixed_input_shapes = false;
  auto g = ImportOnnxModel(model, resized);
  EXPECT_OK(g);
  if (!g.ok()) return OptGraph();
  TensorShapeProto declared;
  for (NodeDef& n : *g->graph.mutable_node()) {
    if (n.op() != "Placeholder") continue;
    n.mutable_attr()->at("shape").mutable_shape()->mutable_dim(0)->set_size(-1);
    declared = n.attr().at("shape").shape();
  }
  for (auto& in : g->inputs) in.shape = PartialShape::FromProto(declared);
  auto optimized = Optimize(*std::move(g));
  EXPECT_OK(optimized);
  return optimized.ok() ? *std::move(optimized) : OptGraph();
}

// Imports `model` with and without the optimizer and checks both compute the same.
struct Imported {
  OnnxGraph plain;
  OptGraph optimized;
};
inline Imported ImportBothWays(const onnx::ModelProto& model, std::vector<int64_t> x_dims, float tolerance = 1e-5f) {
  Imported both;
  auto plain = ImportOnnxModel(model);
  auto optimized = ImportOptimized(model);
  EXPECT_OK(plain);
  EXPECT_OK(optimized);
  if (!plain.ok() || !optimized.ok()) return both;
  both.plain = *std::move(plain);
  both.optimized = *std::move(optimized);
  ExpectSameOutputs(RunAll(both.plain, x_dims), RunAll(both.optimized, x_dims), tolerance);
  return both;
}


// x -> Conv -> c; `middle` reads c and writes m; m -> Conv (k x k, no padding) -> y: the
// layout pass sees NHWC producers and readers around whatever `middle` builds.
inline onnx::ModelProto ConvSandwichModel(const std::function<void(onnx::GraphProto*)>& middle, int64_t k = 1) {
  onnx::ModelProto m = ConvModel(middle);
  onnx::GraphProto* g = m.mutable_graph();
  onnx::TensorProto* t = g->add_initializer();
  t->set_name("w_last");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t{4}, int64_t{4}, k, k}) t->add_dims(d);
  for (int64_t i = 0; i < 16 * k * k; ++i) t->add_float_data(std::cos(0.37f * i));
  AddNode(g, "Conv", {"m", "w_last"}, "y");
  // Pools may shrink it: a shape of unknown dims.
  auto* shape = g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int i = 0; i < shape->dim_size(); ++i) shape->mutable_dim(i)->set_dim_param(absl::StrCat("d", i));
  return m;
}

// Imports `model` without and with the optimizer, expects both to give the same values
// (RunModel; error within `tolerance` of each value's size) and returns the optimized graph.
inline OnnxGraph OptimizedLikePlain(const onnx::ModelProto& model, float tolerance = 1e-4f) {
  auto imported = ImportOnnxModel(model);
  auto optimized = ImportOptimized(model);
  EXPECT_OK(imported);
  EXPECT_OK(optimized);
  if (!imported.ok() || !optimized.ok()) return OnnxGraph();
  const std::vector<float> want = RunModel(*imported), got = RunModel(*optimized);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_GT(got.size(), 0u);
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance + tolerance * std::fabs(want[i])) << "at " << i;
  }
  return *std::move(optimized);
}

inline void AddIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void AddTensorInitializer(onnx::GraphProto* g, const std::string& name, int type, std::vector<int64_t> dims,
                          std::vector<double> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(v));
    else t->add_float_data(static_cast<float>(v));
  }
}


}  // namespace optimizer_test
}  // namespace sluice

#endif  // SLUICE_TESTS_OPTIMIZER_TEST_UTIL_H_
