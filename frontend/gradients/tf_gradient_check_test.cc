// Checks the gradients of TensorFlow's ops (tf_math_gradients.cc, tf_array_gradients.cc,
// tf_slice_gradients.cc, tf_nn_gradients.cc and the shared ones) in graphs as TF_AddGradients
// sees them: GraphDefs of TensorFlow ops over double placeholders (float ones cast), differentiated
// with SymbolicGradients seeded with random weights w, against central finite differences of
// sum(y * w). Where finite differences say nothing (ties of Max and Min, repeated gather indices,
// integer and piecewise-constant ops, bad input) the expected values are worked out by hand in
// the comments.
#include <cmath>
#include <functional>
#include <random>

#include "framework/node_def_util.h"
#include "framework/status_matchers.h"
#include "frontend/gradients/gradients.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// A GraphDef under construction; also where the backward nodes go.
class TfGraph : public GradientBuilder {
 public:
  absl::StatusOr<std::vector<std::string>> Add(absl::string_view op, std::vector<std::vector<std::string>> args,
                                               AttrMap attrs) override {
    SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(op));
    NodeDef node;
    std::string base(op);
    if (size_t at = base.rfind('>'); at != std::string::npos) base = base.substr(at + 1);
    node.set_name(absl::StrCat(base, "_", def_.node_size()));
    node.set_op(std::string(op));
    *node.mutable_attr() = std::move(attrs);
    SL_ASSIGN_OR_RETURN(DataTypeVector out,
                        AddInputsAndComplete(reg->op_def, args, [&](const std::string& t) { return Dtype(t); }, &node));
    std::vector<std::string> outputs;
    for (size_t k = 0; k < out.size(); ++k) {
      outputs.push_back(absl::StrCat(node.name(), ":", k));
      dtypes_[TensorId{node.name(), static_cast<int>(k)}.ToString()] = out[k];
    }
    *def_.add_node() = std::move(node);
    return outputs;
  }
  // By canonical name: SymbolicGradients writes "n" for "n:0".
  DataType Dtype(const std::string& t) const override {
    auto id = ParseTensorName(t);
    if (!id.ok()) return DT_INVALID;
    auto it = dtypes_.find(TensorId{id->node, id->index}.ToString());
    return it == dtypes_.end() ? DT_INVALID : it->second;
  }

  // Conveniences for writing forward graphs: the first output, or an EXPECT failure and "".
  std::string Op(absl::string_view op, std::vector<std::vector<std::string>> args, AttrMap attrs = {}) {
    auto out = Add(op, std::move(args), std::move(attrs));
    EXPECT_OK(out.status()) << op;
    return out.ok() ? (*out)[0] : "";
  }
  std::string Placeholder(DataType dt) {
    AttrMap attrs;
    attrs["dtype"].set_type(dt);
    return Op("Placeholder", {}, attrs);
  }
  std::string Const(const Tensor& t) {
    AttrMap attrs;
    SetAttrValue(t, &attrs["value"]);
    attrs["dtype"].set_type(t.dtype());
    return Op("Const", {}, attrs);
  }
  std::string Int32s(std::vector<int32_t> v) {
    return Const(Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())})));
  }
  std::string Int32(int32_t v) { return Const(Tensor::FromVector<int32_t>({v}, TensorShape())); }
  std::string Int64s(std::vector<int64_t> v) {
    return Const(Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())})));
  }

  const GraphDef& def() const { return def_; }

 private:
  GraphDef def_;
  absl::flat_hash_map<std::string, DataType> dtypes_;
};

template <typename T>
AttrValue A(const T& v) {
  AttrValue a;
  SetAttrValue(v, &a);
  return a;
}

using Forward = std::function<std::string(TfGraph&, const std::vector<std::string>& xs)>;

struct Case {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // Of the double inputs xs.
  Forward forward;                           // Returns y.
  std::vector<std::pair<double, double>> ranges = {};  // Per input; [-2, 2] past the end.
  double tolerance = 1e-6;                             // Plus 1e-5 relative.
  double eps = 1e-6;                                   // The central differences' step.
};

// Builds y and its gradients; `seeded` adds a double placeholder seeding y's gradient.
struct Built {
  TfGraph g;
  std::vector<std::string> xs;
  std::string y, seed;
  std::vector<std::string> dxs;
};

absl::Status Build(const std::vector<std::vector<int64_t>>& shapes, const Forward& forward, Built* b,
                   DataType dt = DT_DOUBLE) {
  for (size_t i = 0; i < shapes.size(); ++i) b->xs.push_back(b->g.Placeholder(dt));
  b->y = forward(b->g, b->xs);
  if (b->y.empty()) return absl::InternalError("the forward graph failed");
  b->seed = b->g.Placeholder(b->g.Dtype(b->y));
  GraphDef forward_def = b->g.def();
  SL_ASSIGN_OR_RETURN(b->dxs, SymbolicGradients(&b->g, forward_def, {b->y}, {b->seed}, b->xs, {}, {}));
  return absl::OkStatus();
}

void Check(const Case& c) {
  SCOPED_TRACE(c.name);
  Built b;
  ASSERT_OK(Build(c.shapes, c.forward, &b));
  auto session = NewSession({});
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(b.g.def()));
  std::mt19937 rng(7);
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const auto [lo, hi] = i < c.ranges.size() ? c.ranges[i] : std::make_pair(-2.0, 2.0);
    std::uniform_real_distribution<double> u(lo, hi);
    Tensor t(DT_DOUBLE, TensorShape(absl::Span<const int64_t>(c.shapes[i])));
    for (double& v : t.flat<double>()) v = u(rng);
    xs.push_back(t);
  }
  auto feeds = [&](const std::vector<Tensor>& in) {
    std::vector<std::pair<std::string, Tensor>> f;
    for (size_t i = 0; i < in.size(); ++i) f.emplace_back(b.xs[i], in[i]);
    return f;
  };
  std::vector<Tensor> out;
  ASSERT_OK((*session)->Run(feeds(xs), {b.y}, {}, &out));
  Tensor w(DT_DOUBLE, out[0].shape());
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : w.flat<double>()) v = u(rng);
  auto loss = [&](const std::vector<Tensor>& in) {
    std::vector<Tensor> y;
    EXPECT_OK((*session)->Run(feeds(in), {b.y}, {}, &y));
    double sum = 0;
    for (int64_t k = 0; k < w.NumElements(); ++k) sum += y[0].flat<double>()[k] * w.flat<double>()[k];
    return sum;
  };
  auto grad_feeds = feeds(xs);
  grad_feeds.emplace_back(b.seed, w);
  std::vector<Tensor> analytic;
  ASSERT_OK((*session)->Run(grad_feeds, b.dxs, {}, &analytic));
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(analytic[i].shape(), xs[i].shape()) << "the gradient of input " << i << " has its shape";
    for (int64_t k = 0; k < xs[i].NumElements(); ++k) {
      std::vector<Tensor> plus, minus;
      for (const Tensor& t : xs) {
        plus.push_back(t.DeepCopy());
        minus.push_back(t.DeepCopy());
      }
      plus[i].flat<double>()[k] += c.eps;
      minus[i].flat<double>()[k] -= c.eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * c.eps);
      EXPECT_NEAR(analytic[i].flat<double>()[k], numeric, c.tolerance + 1e-5 * std::fabs(numeric))
          << "input " << i << " element " << k;
    }
  }
}

// The gradients at the given inputs and seed, for values worked out by hand.
std::vector<Tensor> GradientsAt(const Forward& forward, const std::vector<Tensor>& xs, const Tensor& seed) {
  std::vector<std::vector<int64_t>> shapes(xs.size());
  Built b;
  absl::Status s = Build(shapes, forward, &b, xs.empty() ? DT_DOUBLE : xs[0].dtype());
  EXPECT_OK(s);
  if (!s.ok()) return {};
  auto session = NewSession({});
  EXPECT_OK(session);
  EXPECT_OK((*session)->Create(b.g.def()));
  std::vector<std::pair<std::string, Tensor>> feeds = {{b.seed, seed}};
  for (size_t i = 0; i < xs.size(); ++i) feeds.emplace_back(b.xs[i], xs[i]);
  std::vector<Tensor> out;
  EXPECT_OK((*session)->Run(feeds, b.dxs, {}, &out));
  return out;
}

Tensor Doubles(std::vector<double> v, std::vector<int64_t> shape) {
  return Tensor::FromVector<double>(v, TensorShape(absl::Span<const int64_t>(shape)));
}

void ExpectValues(const Tensor& t, const std::vector<double>& want) {
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(t.flat<double>()[k], want[k], 1e-12) << "element " << k;
}

// ---- Reductions.

Forward Reduce(const std::string& op, std::vector<int32_t> axes, bool keep_dims, bool scalar_axis = false) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["keep_dims"] = A(keep_dims);
    std::string indices = scalar_axis ? g.Int32(axes[0]) : g.Int32s(axes);
    return g.Op(op, {{x[0]}, {indices}}, attrs);
  };
}

TEST(TfGradientCheckTest, Reductions) {
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (bool keep : {false, true}) {
      const std::string name = absl::StrCat(op, keep ? " keep_dims" : "");
      Check({name + " axis 1", {{2, 3, 4}}, Reduce(op, {1}, keep)});
      Check({name + " axes -1 0", {{2, 3, 4}}, Reduce(op, {-1, 0}, keep)});
      Check({name + " all axes", {{3, 4}}, Reduce(op, {0, 1}, keep)});
      Check({name + " scalar axis -2", {{3, 4}}, Reduce(op, {-2}, keep, true)});
      Check({name + " no axes", {{2, 3}}, Reduce(op, {}, keep)});
    }
  }
  Check({"Mean of a vector", {{5}}, Reduce("Mean", {0}, false)});
}

// Reduction indices may be int64 too.
TEST(TfGradientCheckTest, ReductionWithInt64Indices) {
  Check({"Sum int64 axes", {{2, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Sum", {{x[0]}, {g.Int64s({-1})}});
         }});
}

// Max and Min split dy evenly among tied elements. x = [[1 3 3] [2 0 2] [5 4 4]], seed [1 2 3]:
// Max over axis 1 picks 3, 3 (half each of 1), 2, 2 (half each of 2) and 5 (all of 3);
// Min picks 1 (1), 0 (2) and the two 4s (half each of 3).
TEST(TfGradientCheckTest, MaxAndMinSplitTies) {
  const Tensor x = Doubles({1, 3, 3, 2, 0, 2, 5, 4, 4}, {3, 3});
  const Tensor seed = Doubles({1, 2, 3}, {3});
  auto max = GradientsAt(Reduce("Max", {1}, false), {x}, seed);
  ASSERT_EQ(max.size(), 1u);
  ExpectValues(max[0], {0, 0.5, 0.5, 1, 0, 1, 3, 0, 0});
  auto min = GradientsAt(Reduce("Min", {-1}, false), {x}, seed);
  ASSERT_EQ(min.size(), 1u);
  ExpectValues(min[0], {1, 0, 0, 0, 2, 0, 0, 1.5, 1.5});
  // All four equal over both axes: a quarter of the seed 8 each.
  auto all = GradientsAt(Reduce("Max", {0, 1}, false), {Doubles({7, 7, 7, 7}, {2, 2})}, Doubles({8}, {}));
  ASSERT_EQ(all.size(), 1u);
  ExpectValues(all[0], {2, 2, 2, 2});
}

// Prod with zeros: d/dx_i of x0 x1 x2 is the product of the others. Rows [0 2 3] (one zero:
// [6 0 0]), [0 0 5] (two zeros: all 0) and [1 2 4] ([8 4 2]); seed 1.
TEST(TfGradientCheckTest, ProdWithZeros) {
  const Tensor x = Doubles({0, 2, 3, 0, 0, 5, 1, 2, 4}, {3, 3});
  auto d = GradientsAt(Reduce("Prod", {1}, false), {x}, Doubles({1, 1, 1}, {3}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {6, 0, 0, 0, 0, 0, 8, 4, 2});
}

// ---- Matrix products.

Forward MatMul(bool ta, bool tb) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["transpose_a"] = A(ta);
    attrs["transpose_b"] = A(tb);
    return g.Op("MatMul", {{x[0]}, {x[1]}}, attrs);
  };
}

TEST(TfGradientCheckTest, MatMul) {
  Check({"MatMul", {{2, 3}, {3, 4}}, MatMul(false, false)});
  Check({"MatMul transpose_a", {{3, 2}, {3, 4}}, MatMul(true, false)});
  Check({"MatMul transpose_b", {{2, 3}, {4, 3}}, MatMul(false, true)});
  Check({"MatMul both", {{3, 2}, {4, 3}}, MatMul(true, true)});
}

Forward BatchMatMul(bool adj_x, bool adj_y) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["adj_x"] = A(adj_x);
    attrs["adj_y"] = A(adj_y);
    return g.Op("BatchMatMulV2", {{x[0]}, {x[1]}}, attrs);
  };
}

TEST(TfGradientCheckTest, BatchMatMulV2) {
  Check({"BatchMatMulV2", {{2, 2, 3}, {2, 3, 4}}, BatchMatMul(false, false)});
  Check({"BatchMatMulV2 broadcast batch", {{2, 1, 2, 3}, {3, 3, 2}}, BatchMatMul(false, false)});
  Check({"BatchMatMulV2 matrix times batch", {{2, 3}, {2, 3, 4}}, BatchMatMul(false, false)});
  Check({"BatchMatMulV2 adj_x", {{2, 3, 2}, {1, 3, 4}}, BatchMatMul(true, false)});
  Check({"BatchMatMulV2 adj_y", {{2, 2, 3}, {4, 3}}, BatchMatMul(false, true)});
  Check({"BatchMatMulV2 adj both", {{3, 2}, {2, 4, 3}}, BatchMatMul(true, true)});
}

// ---- Element-wise ops, with broadcasting.

Forward Binary(const std::string& op) {
  return [=](TfGraph& g, const std::vector<std::string>& x) { return g.Op(op, {{x[0]}, {x[1]}}); };
}

TEST(TfGradientCheckTest, Binary) {
  for (const char* op : {"Maximum", "Minimum", "SquaredDifference", "AddV2", "Add", "Sub", "Mul", "RealDiv", "Div"}) {
    Check({op, {{2, 3}, {2, 3}}, Binary(op), {{-2, 2}, {0.5, 2}}});
    Check({absl::StrCat(op, " broadcast"), {{2, 1, 3}, {4, 1}}, Binary(op), {{-2, 2}, {0.5, 2}}});
    Check({absl::StrCat(op, " scalar"), {{}, {3, 2}}, Binary(op), {{-2, 2}, {0.5, 2}}});
  }
  Check({"Pow", {{2, 3}, {3}}, Binary("Pow"), {{0.5, 2}, {-2, 2}}});
  // FloorMod jumps where x / y crosses an integer; random values are that close with
  // negligible odds. Broadcast: y is a row.
  Check({"FloorMod", {{2, 3}, {3}}, Binary("FloorMod"), {{-4, 4}, {0.5, 2}}});
}

TEST(TfGradientCheckTest, AddN) {
  Check({"AddN", {{2, 3}, {2, 3}, {2, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string sum = g.Op("AddN", {{x[0], x[1], x[2]}});
           return g.Op("Mul", {{sum}, {x[0]}});
         }});
}

TEST(TfGradientCheckTest, SelectV2) {
  // The condition broadcasts against t; e is a scalar.
  Check({"SelectV2", {{2, 3}, {}}, [](TfGraph& g, const std::vector<std::string>& x) {
           Tensor cond = Tensor::FromVector<bool>({true, false, true}, TensorShape({3}));
           return g.Op("SelectV2", {{g.Const(cond)}, {x[0]}, {x[1]}});
         }});
  // Both chosen by a condition on x itself: where(x > 0, x^2, -x).
  Check({"SelectV2 on x", {{6}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string zero = g.Const(Tensor::FromVector<double>({0}, TensorShape()));
           std::string positive = g.Op("Greater", {{x[0]}, {zero}});
           return g.Op("SelectV2", {{positive}, {g.Op("Square", {{x[0]}})}, {g.Op("Neg", {{x[0]}})}});
         }});
}

Forward Unary(const std::string& op, AttrMap attrs = {}) {
  return [=](TfGraph& g, const std::vector<std::string>& x) { return g.Op(op, {{x[0]}}, attrs); };
}

TEST(TfGradientCheckTest, Unary) {
  const std::pair<double, double> positive = {0.2, 2}, unit = {-0.9, 0.9}, above_one = {1.1, 3};
  struct U {
    const char* op;
    std::pair<double, double> range;
  };
  for (const U& u : std::vector<U>{{"Rsqrt", positive}, {"Reciprocal", positive}, {"Abs", {-2, 2}},
                                   {"Neg", {-2, 2}}, {"Sin", {-2, 2}}, {"Cos", {-2, 2}}, {"Tan", unit},
                                   {"Sinh", {-2, 2}}, {"Cosh", {-2, 2}}, {"Asin", unit}, {"Acos", unit},
                                   {"Atan", {-2, 2}}, {"Asinh", {-2, 2}}, {"Acosh", above_one},
                                   {"Atanh", unit}, {"Sign", {-2, 2}}, {"Floor", {-2, 2}},
                                   {"Ceil", {-2, 2}}, {"Round", {-2, 2}}, {"Square", {-2, 2}},
                                   {"Exp", {-2, 2}}, {"Log", positive}, {"Sqrt", positive},
                                   {"Sigmoid", {-2, 2}}, {"Tanh", {-2, 2}}, {"Identity", {-2, 2}}}) {
    Check({u.op, {{2, 3}}, Unary(u.op), {u.range}});
  }
}

TEST(TfGradientCheckTest, Activations) {
  // Away from the kinks at 0 and 6, where the finite difference straddles two slopes.
  Check({"Relu6 below", {{2, 3}}, Unary("Relu6"), {{-3, -0.1}}});
  Check({"Relu6 inside", {{2, 3}}, Unary("Relu6"), {{0.1, 5.9}}});
  Check({"Relu6 above", {{2, 3}}, Unary("Relu6"), {{6.1, 8}}});
  for (const char* op : {"Elu", "Selu", "LeakyRelu", "Relu", "Softplus", "Softsign"}) {
    Check({absl::StrCat(op, " negative"), {{2, 3}}, Unary(op), {{-3, -0.1}}});
    Check({absl::StrCat(op, " positive"), {{2, 3}}, Unary(op), {{0.1, 3}}});
  }
  AttrMap alpha;
  alpha["alpha"] = A(0.3f);
  Check({"LeakyRelu alpha 0.3", {{4}}, Unary("LeakyRelu", alpha), {{-3, -0.1}}});
  Check({"Softmax", {{3, 4}}, Unary("Softmax")});
  Check({"LogSoftmax", {{3, 4}}, Unary("LogSoftmax")});
  Check({"Softmax of a vector", {{5}}, Unary("Softmax")});
}

// ReluGrad-style hand check of Relu6 at its kinks: TensorFlow's Relu6Grad passes dy only where
// 0 < x < 6, so x = 0 and x = 6 get 0.
TEST(TfGradientCheckTest, Relu6AtKinks) {
  auto d = GradientsAt(Unary("Relu6"), {Doubles({-1, 0, 3, 6, 7}, {5})}, Doubles({1, 2, 3, 4, 5}, {5}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {0, 0, 3, 0, 0});
}

// ---- Array ops.

TEST(TfGradientCheckTest, Cast) {
  AttrMap to_float;
  to_float["DstT"] = A(DT_FLOAT);
  // double -> float -> double: the gradient is cast back. Float rounding needs a wider step and
  // a looser tolerance (y = float(x) x is quadratic: central differences are exact otherwise).
  Check({"Cast double float double", {{2, 3}}, [=](TfGraph& g, const std::vector<std::string>& x) {
           AttrMap to_double;
           to_double["DstT"] = A(DT_DOUBLE);
           std::string f = g.Op("Cast", {{x[0]}}, to_float);
           return g.Op("Mul", {{g.Op("Cast", {{f}}, to_double)}, {x[0]}});
         }, {}, 1e-4, 1e-2});
}

// Through an integer Cast there is no gradient: d/dx of Cast(Sum(Cast(x, int32)), double) + x
// is 1, from the direct term only.
TEST(TfGradientCheckTest, CastThroughIntegersHasNoGradient) {
  auto d = GradientsAt(
      [](TfGraph& g, const std::vector<std::string>& x) {
        AttrMap to_int, to_double;
        to_int["DstT"] = A(DT_INT32);
        to_double["DstT"] = A(DT_DOUBLE);
        std::string i = g.Op("Cast", {{x[0]}}, to_int);
        std::string sum = g.Op("Sum", {{i}, {g.Int32s({0})}});  // An integer reduction on the way.
        std::string back = g.Op("Cast", {{sum}}, to_double);
        return g.Op("AddV2", {{back}, {x[0]}});
      },
      {Doubles({1.5, -2.5}, {2})}, Doubles({1, 1}, {2}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {1, 1});
}

// Integer outputs pass nothing back: y = Sum(x) over int32 x gets zeros for x.
TEST(TfGradientCheckTest, IntegerOutputsHaveNoGradient) {
  TfGraph g;
  std::string x = g.Placeholder(DT_INT32);
  std::string y = g.Op("Sum", {{x}, {g.Int32s({0})}});
  GraphDef forward = g.def();
  auto dxs = SymbolicGradients(&g, forward, y, {x}, {}, {});
  ASSERT_OK(dxs);
  auto session = NewSession({});
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(g.def()));
  std::vector<Tensor> out;
  ASSERT_OK((*session)->Run({{x, Tensor::FromVector<int32_t>({4, 5}, TensorShape({2}))}}, *dxs, {}, &out));
  ASSERT_EQ(out[0].dtype(), DT_INT32);
  EXPECT_EQ(out[0].flat<int32_t>()[0], 0);
  EXPECT_EQ(out[0].flat<int32_t>()[1], 0);
}

TEST(TfGradientCheckTest, Transpose) {
  Check({"Transpose", {{2, 3, 4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Transpose", {{x[0]}, {g.Int32s({2, 0, 1})}});
         }});
  Check({"Transpose int64 perm", {{2, 3, 4, 1}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Transpose", {{x[0]}, {g.Int64s({1, 3, 0, 2})}});
         }});
}

TEST(TfGradientCheckTest, Concat) {
  for (int32_t axis : {0, 1, -1, -2}) {
    Check({absl::StrCat("ConcatV2 axis ", axis), {{2, 3}, {2, 3}, {2, 3}},
           [=](TfGraph& g, const std::vector<std::string>& x) {
             return g.Op("ConcatV2", {{x[0], x[1], x[2]}, {g.Int32(axis)}});
           }});
  }
  Check({"ConcatV2 unequal sizes", {{2, 1, 2}, {2, 3, 2}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("ConcatV2", {{x[0], x[1]}, {g.Const(Tensor::FromVector<int64_t>({1}, TensorShape()))}});
         }});
  Check({"Concat axis 1", {{2, 1}, {2, 4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Concat", {{g.Int32(1)}, {x[0], x[1]}});
         }});
  // The same tensor twice: both slices add up.
  Check({"ConcatV2 of x and x", {{3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("ConcatV2", {{x[0], x[0]}, {g.Int32(0)}});
         }});
}

TEST(TfGradientCheckTest, Pack) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    AttrMap attrs;
    attrs["axis"] = A(axis);
    Check({absl::StrCat("Pack axis ", axis), {{2, 3}, {2, 3}, {2, 3}},
           [=](TfGraph& g, const std::vector<std::string>& x) { return g.Op("Pack", {{x[0], x[1], x[2]}}, attrs); }});
  }
  Check({"Pack one scalar", {{}}, [](TfGraph& g, const std::vector<std::string>& x) { return g.Op("Pack", {{x[0]}}); }});
}

TEST(TfGradientCheckTest, Reshapes) {
  Check({"Reshape", {{2, 3, 2}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Reshape", {{x[0]}, {g.Int32s({3, -1})}});
         }});
  Check({"ExpandDims -1", {{2, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("ExpandDims", {{x[0]}, {g.Int32(-1)}});
         }});
  AttrMap dims;
  dims["squeeze_dims"] = A(std::vector<int64_t>{1});
  Check({"Squeeze", {{2, 1, 3, 1}}, [=](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Squeeze", {{x[0]}}, dims);
         }});
  Check({"Squeeze all", {{1, 3, 1}}, Unary("Squeeze")});
}

TEST(TfGradientCheckTest, IdentityNAndFill) {
  Check({"IdentityN", {{2}, {3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           auto out = g.Add("IdentityN", {{x[0], x[1]}}, {});
           EXPECT_OK(out.status());
           // y = outputs 0 and 1 concatenated, so both reach it.
           return g.Op("ConcatV2", {{(*out)[0], (*out)[1]}, {g.Int32(0)}});
         }});
  Check({"Fill", {{}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Fill", {{g.Int32s({2, 3})}, {x[0]}});
         }});
}

// ZerosLike and OnesLike pass nothing back: d/dx (x + ZerosLike(x) + OnesLike(x)) = 1.
TEST(TfGradientCheckTest, ZerosLikeAndOnesLike) {
  Check({"ZerosLike OnesLike", {{3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string z = g.Op("AddV2", {{x[0]}, {g.Op("ZerosLike", {{x[0]}})}});
           return g.Op("AddV2", {{z}, {g.Op("OnesLike", {{x[0]}})}});
         }});
}

// A chain of several TensorFlow ops as a model would use them.
TEST(TfGradientCheckTest, SoftmaxCrossEntropyOfALayer) {
  Check({"layer", {{4, 3}, {3, 5}, {5}, {4, 5}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string h = g.Op("BiasAdd", {{g.Op("MatMul", {{x[0]}, {x[1]}})}, {x[2]}});
           std::string logp = g.Op("LogSoftmax", {{g.Op("Relu6", {{h}})}});
           std::string prod = g.Op("Mul", {{logp}, {x[3]}});
           std::string per_row = g.Op("Sum", {{prod}, {g.Int32(-1)}});
           return g.Op("Neg", {{g.Op("Mean", {{per_row}, {g.Int32s({0})}})}});
         }, {{-2, 2}, {-2, 2}, {-2, 2}, {0, 1}}});
}

// ---- Slicing and indexing.

TEST(TfGradientCheckTest, Slice) {
  Check({"Slice", {{3, 4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Slice", {{x[0]}, {g.Int32s({1, 1})}, {g.Int32s({2, -1})}});
         }});
  Check({"Slice int64 rank 3", {{2, 3, 4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Slice", {{x[0]}, {g.Int64s({1, 0, 2})}, {g.Int64s({1, 2, 2})}});
         }});
}

Forward StridedSlice(std::vector<int32_t> begin, std::vector<int32_t> end, std::vector<int32_t> strides,
                     int64_t begin_mask, int64_t end_mask, int64_t ellipsis = 0, int64_t new_axis = 0,
                     int64_t shrink = 0) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["begin_mask"] = A(begin_mask);
    attrs["end_mask"] = A(end_mask);
    attrs["ellipsis_mask"] = A(ellipsis);
    attrs["new_axis_mask"] = A(new_axis);
    attrs["shrink_axis_mask"] = A(shrink);
    return g.Op("StridedSlice", {{x[0]}, {g.Int32s(begin)}, {g.Int32s(end)}, {g.Int32s(strides)}}, attrs);
  };
}

TEST(TfGradientCheckTest, StridedSlice) {
  // x[1:3, ::2]
  Check({"StridedSlice x[1:3, ::2]", {{4, 5}}, StridedSlice({1, 0}, {3, 0}, {1, 2}, 2, 2)});
  // x[::-1, 3:0:-2]: negative strides, the first dim whole by its masks.
  Check({"StridedSlice x[::-1, 3:0:-2]", {{4, 5}}, StridedSlice({0, 3}, {0, 0}, {-1, -2}, 1, 1)});
  // x[..., newaxis, 1]: an ellipsis, a new axis and a shrunk last dim.
  Check({"StridedSlice x[..., newaxis, 1]", {{2, 3, 4}}, StridedSlice({0, 0, 1}, {0, 0, 2}, {1, 1, 1}, 0, 0, 1, 2, 4)});
  // x[-2:, 1]: a negative begin and a shrunk dim.
  Check({"StridedSlice x[-2:, 1]", {{4, 3}}, StridedSlice({-2, 1}, {0, 2}, {1, 1}, 0, 1, 0, 0, 2)});
  // x[3:-5:-3, ...] past the start, rank 3 through the implicit rest.
  Check({"StridedSlice x[3:-5:-3]", {{5, 2, 2}}, StridedSlice({3}, {-6}, {-3}, 0, 0)});
  // The same element twice through two slices: their gradients add up.
  Check({"StridedSlice overlapping", {{6}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string a = StridedSlice({0}, {4}, {1}, 0, 0)(g, x);
           std::string b = StridedSlice({5}, {1}, {-1}, 0, 0)(g, x);
           return g.Op("Mul", {{a}, {b}});
         }});
}

TEST(TfGradientCheckTest, Pad) {
  Check({"Pad", {{2, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Pad", {{x[0]}, {g.Const(Tensor::FromVector<int32_t>({1, 0, 2, 1}, TensorShape({2, 2})))}});
         }});
  Check({"PadV2 int64 paddings", {{2, 2, 1}}, [](TfGraph& g, const std::vector<std::string>& x) {
           std::string p = g.Const(Tensor::FromVector<int64_t>({0, 1, 1, 1, 2, 0}, TensorShape({3, 2})));
           std::string c = g.Const(Tensor::FromVector<double>({7}, TensorShape()));
           return g.Op("PadV2", {{x[0]}, {p}, {c}});
         }});
}

Forward MirrorPad(const char* mode, std::vector<int32_t> paddings) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["mode"] = A(std::string(mode));
    std::string p = g.Const(Tensor::FromVector<int32_t>(paddings, TensorShape({static_cast<int64_t>(paddings.size() / 2), 2})));
    return g.Op("MirrorPad", {{x[0]}, {p}}, attrs);
  };
}

TEST(TfGradientCheckTest, MirrorPad) {
  // At most dim - 1 (REFLECT) or dim (SYMMETRIC) on each side: the folds reach every element.
  Check({"MirrorPad REFLECT", {{3, 4}}, MirrorPad("REFLECT", {2, 1, 1, 3})});
  Check({"MirrorPad SYMMETRIC", {{2, 3}}, MirrorPad("SYMMETRIC", {2, 1, 3, 2})});
  Check({"MirrorPad REFLECT rank 1", {{5}}, MirrorPad("REFLECT", {4, 4})});
  Check({"MirrorPad SYMMETRIC rank 3", {{2, 1, 2}}, MirrorPad("SYMMETRIC", {1, 2, 1, 0, 0, 2})});
}

TEST(TfGradientCheckTest, Tile) {
  Check({"Tile", {{2, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Tile", {{x[0]}, {g.Int32s({2, 1})}});
         }});
  Check({"Tile rank 3 int64", {{2, 1, 3}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Tile", {{x[0]}, {g.Int64s({1, 3, 2})}});
         }});
}

Forward GatherV2(Tensor indices, int32_t axis, int64_t batch_dims = 0) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["batch_dims"] = A(batch_dims);
    return g.Op("GatherV2", {{x[0]}, {g.Const(indices)}, {g.Int32(axis)}}, attrs);
  };
}

TEST(TfGradientCheckTest, GatherV2) {
  // Repeated indices: their gradients add up.
  Check({"GatherV2 axis 0", {{3, 4}}, GatherV2(Tensor::FromVector<int32_t>({2, 0, 2}, TensorShape({3})), 0)});
  Check({"GatherV2 axis 1", {{2, 3, 4}},
         GatherV2(Tensor::FromVector<int64_t>({1, 1, 0, 2}, TensorShape({2, 2})), 1)});
  Check({"GatherV2 axis -1", {{2, 3, 4}}, GatherV2(Tensor::FromVector<int32_t>({3, 3, 1}, TensorShape({3})), -1)});
  Check({"GatherV2 scalar index", {{3, 2}}, GatherV2(Tensor::FromVector<int32_t>({1}, TensorShape()), 1)});
  Check({"GatherV2 batch_dims 1", {{2, 3, 4}},
         GatherV2(Tensor::FromVector<int32_t>({0, 2, 2, 1, 1, 0}, TensorShape({2, 3})), 1, 1)});
  Check({"GatherV2 batch_dims -1 axis 2", {{2, 3, 4}},
         GatherV2(Tensor::FromVector<int32_t>({3, 0, 3, 1}, TensorShape({2, 2})), 2, -1)});
}

// y = GatherV2(x, [2 0 2]) with seed [1 2 3]: x[2] gets 1 + 3, x[0] gets 2, x[1] nothing.
TEST(TfGradientCheckTest, GatherV2RepeatedIndicesAddUp) {
  auto d = GradientsAt(GatherV2(Tensor::FromVector<int32_t>({2, 0, 2}, TensorShape({3})), 0),
                       {Doubles({5, 6, 7}, {3})}, Doubles({1, 2, 3}, {3}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {2, 0, 4});
}

TEST(TfGradientCheckTest, GatherNd) {
  Check({"GatherNd elements", {{3, 4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           Tensor idx = Tensor::FromVector<int32_t>({1, 2, 1, 2, 0, 0}, TensorShape({3, 2}));
           return g.Op("GatherNd", {{x[0]}, {g.Const(idx)}});
         }});
  Check({"GatherNd rows", {{3, 2, 2}}, [](TfGraph& g, const std::vector<std::string>& x) {
           Tensor idx = Tensor::FromVector<int64_t>({2, 0, 2}, TensorShape({3, 1}));
           return g.Op("GatherNd", {{x[0]}, {g.Const(idx)}});
         }});
}

// GatherNd(x, [[1] [1] [0]]) seeded [1 2 4]: x[1] gets 1 + 2, x[0] gets 4.
TEST(TfGradientCheckTest, GatherNdRepeatedIndicesAddUp) {
  auto d = GradientsAt(
      [](TfGraph& g, const std::vector<std::string>& x) {
        return g.Op("GatherNd", {{x[0]}, {g.Const(Tensor::FromVector<int32_t>({1, 1, 0}, TensorShape({3, 1})))}});
      },
      {Doubles({5, 6}, {2})}, Doubles({1, 2, 4}, {3}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {4, 3});
}

TEST(TfGradientCheckTest, Unpack) {
  for (int64_t axis : {0, 1, -1}) {
    AttrMap attrs;
    attrs["axis"] = A(axis);
    attrs["num"] = A(int64_t{3});
    // Outputs 0 and 2 reach y; output 1 does not, so its part of dx is zeros.
    Check({absl::StrCat("Unpack axis ", axis), {{3, 3}}, [=](TfGraph& g, const std::vector<std::string>& x) {
             auto out = g.Add("Unpack", {{x[0]}}, attrs);
             EXPECT_OK(out.status());
             return g.Op("Mul", {{(*out)[0]}, {(*out)[2]}});
           }});
  }
}

TEST(TfGradientCheckTest, Split) {
  AttrMap three;
  three["num_split"] = A(int64_t{3});
  Check({"Split dim 1, piece 1 unused", {{2, 6}}, [=](TfGraph& g, const std::vector<std::string>& x) {
           auto out = g.Add("Split", {{g.Int32(1)}, {x[0]}}, three);
           EXPECT_OK(out.status());
           return g.Op("Mul", {{(*out)[0]}, {(*out)[2]}});
         }});
  AttrMap one;
  one["num_split"] = A(int64_t{1});
  Check({"Split into one", {{2, 2}}, [=](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Split", {{g.Int32(-1)}, {x[0]}}, one);
         }});
  Check({"SplitV, piece 0 unused", {{5, 2}}, [=](TfGraph& g, const std::vector<std::string>& x) {
           auto out = g.Add("SplitV", {{x[0]}, {g.Int64s({1, -1, 2})}, {g.Int32(0)}}, three);
           EXPECT_OK(out.status());
           return g.Op("ConcatV2", {{(*out)[1], (*out)[2]}, {g.Int32(0)}});
         }});
}

TEST(TfGradientCheckTest, Cumsum) {
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      AttrMap attrs;
      attrs["exclusive"] = A(exclusive);
      attrs["reverse"] = A(reverse);
      Check({absl::StrCat("Cumsum exclusive ", exclusive, " reverse ", reverse), {{2, 4}},
             [=](TfGraph& g, const std::vector<std::string>& x) {
               return g.Op("Cumsum", {{x[0]}, {g.Int32(1)}}, attrs);
             }});
    }
  }
  Check({"Cumsum axis -2", {{3, 2}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("Cumsum", {{x[0]}, {g.Const(Tensor::FromVector<int64_t>({-2}, TensorShape()))}});
         }});
}

TEST(TfGradientCheckTest, TopKV2) {
  // Random values are distinct, so the selection is stable under the finite differences.
  Check({"TopKV2 values", {{3, 5}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("TopKV2", {{x[0]}, {g.Int32(2)}});
         }});
  Check({"TopKV2 of a vector, k = all", {{4}}, [](TfGraph& g, const std::vector<std::string>& x) {
           return g.Op("TopKV2", {{x[0]}, {g.Int32(4)}});
         }});
}

// OneHot and Where are not differentiable in TensorFlow: y = OneHot([0 2], 3, on = x, off = 0)
// + x passes back only through the direct term, 1.
TEST(TfGradientCheckTest, OneHotAndWhereHaveNone) {
  auto d = GradientsAt(
      [](TfGraph& g, const std::vector<std::string>& x) {
        std::string zero = g.Const(Tensor::FromVector<double>({0}, TensorShape()));
        std::string hot = g.Op("OneHot", {{g.Int32s({0, 2})}, {g.Int32(3)}, {x[0]}, {zero}});
        std::string sum = g.Op("Sum", {{hot}, {g.Int32s({0, 1})}});
        std::string where = g.Op("Where", {{g.Op("Greater", {{x[0]}, {zero}})}});
        AttrMap to_double;
        to_double["DstT"] = A(DT_DOUBLE);
        std::string count = g.Op("Cast", {{g.Op("Size", {{where}})}}, to_double);
        return g.Op("AddV2", {{g.Op("AddV2", {{sum}, {x[0]}})}, {count}});
      },
      {Doubles({2}, {})}, Doubles({1}, {}));
  ASSERT_EQ(d.size(), 1u);
  ExpectValues(d[0], {1});
}

// The new backward ops refuse input that does not fit, naming the node.
TEST(TfGradientCheckTest, BackwardOpsRefuseBadInput) {
  auto expect_error = [](const char* what, const std::function<std::string(TfGraph&)>& build) {
    SCOPED_TRACE(what);
    TfGraph g;
    std::string out = build(g);
    ASSERT_FALSE(out.empty());
    auto session = NewSession({});
    ASSERT_OK(session);
    // Shape inference may see a constant that does not fit before the kernel does.
    absl::Status s = (*session)->Create(g.def());
    std::vector<Tensor> result;
    if (s.ok()) s = (*session)->Run({}, {out}, {}, &result);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    const std::string node = out.substr(0, out.find(':'));
    EXPECT_NE(s.message().find(node), std::string::npos) << s;
  };
  const Tensor four = Tensor::FromVector<double>({1, 2, 3, 4}, TensorShape({4}));
  expect_error("StridedSliceGrad: dy does not fit the slice", [&](TfGraph& g) {
    // x[0:4:2] of a [4] is 2 elements; dy has 4.
    return g.Op("StridedSliceGrad", {{g.Int32s({4})}, {g.Int32s({0})}, {g.Int32s({4})}, {g.Int32s({2})}, {g.Const(four)}});
  });
  expect_error("StridedSliceGrad: a negative dim", [&](TfGraph& g) {
    return g.Op("StridedSliceGrad", {{g.Int32s({-4})}, {g.Int32s({0})}, {g.Int32s({4})}, {g.Int32s({1})}, {g.Const(four)}});
  });
  expect_error("StridedSliceGrad: stride 0", [&](TfGraph& g) {
    return g.Op("StridedSliceGrad", {{g.Int32s({4})}, {g.Int32s({0})}, {g.Int32s({4})}, {g.Int32s({0})}, {g.Const(four)}});
  });
  expect_error("MirrorPadGrad: paddings past the input", [&](TfGraph& g) {
    AttrMap attrs;
    attrs["mode"] = A(std::string("REFLECT"));
    return g.Op("MirrorPadGrad", {{g.Const(four)}, {g.Const(Tensor::FromVector<int32_t>({3, 2}, TensorShape({1, 2})))}}, attrs);
  });
  expect_error("MirrorPadGrad: paddings of the wrong shape", [&](TfGraph& g) {
    AttrMap attrs;
    attrs["mode"] = A(std::string("SYMMETRIC"));
    return g.Op("MirrorPadGrad", {{g.Const(four)}, {g.Int32s({1, 1})}}, attrs);
  });
  expect_error("ScatterNd: an index out of range", [&](TfGraph& g) {
    return g.Op("ScatterNd", {{g.Const(Tensor::FromVector<int32_t>({0, 1, 5, 2}, TensorShape({4, 1})))},
                              {g.Const(four)}, {g.Int32s({5})}});
  });
  expect_error("ScatterNd: updates of the wrong shape", [&](TfGraph& g) {
    return g.Op("ScatterNd", {{g.Const(Tensor::FromVector<int32_t>({0, 1}, TensorShape({2, 1})))},
                              {g.Const(four)}, {g.Int32s({5})}});
  });
}

// ---- nn ops.

Forward DepthwiseConv(std::vector<int64_t> strides, const char* padding, const char* format,
                      std::vector<int64_t> dilations = {1, 1, 1, 1}) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs;
    attrs["strides"] = A(strides);
    attrs["padding"] = A(std::string(padding));
    attrs["data_format"] = A(std::string(format));
    attrs["dilations"] = A(dilations);
    return g.Op("DepthwiseConv2dNative", {{x[0]}, {x[1]}}, attrs);
  };
}

TEST(TfGradientCheckTest, DepthwiseConv2dNative) {
  Check({"DepthwiseConv2dNative VALID", {{1, 4, 5, 2}, {3, 3, 2, 2}}, DepthwiseConv({1, 1, 1, 1}, "VALID", "NHWC")});
  Check({"DepthwiseConv2dNative SAME stride 2", {{2, 5, 5, 3}, {2, 3, 3, 1}},
         DepthwiseConv({1, 2, 2, 1}, "SAME", "NHWC")});
  Check({"DepthwiseConv2dNative NCHW", {{1, 2, 4, 4}, {2, 2, 2, 3}}, DepthwiseConv({1, 1, 1, 1}, "SAME", "NCHW")});
  Check({"DepthwiseConv2dNative dilated", {{1, 5, 5, 2}, {2, 2, 2, 2}},
         DepthwiseConv({1, 1, 1, 1}, "VALID", "NHWC", {1, 2, 2, 1})});
}

// FusedBatchNormV3 takes float (as TensorFlow's): x, scale and offset are cast from the
// doubles and y back, so the differences use a wider step and a looser tolerance.
Forward FusedBatchNorm(bool training, const char* format) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap to_float, to_double, attrs;
    to_float["DstT"] = A(DT_FLOAT);
    to_double["DstT"] = A(DT_DOUBLE);
    attrs["is_training"] = A(training);
    attrs["data_format"] = A(std::string(format));
    attrs["epsilon"] = A(0.01f);
    std::vector<std::string> f;
    for (const std::string& t : x) f.push_back(g.Op("Cast", {{t}}, to_float));
    std::string mean = g.Const(Tensor::FromVector<float>({0.5f, -0.25f}, TensorShape({2})));
    std::string variance = g.Const(Tensor::FromVector<float>({1.5f, 0.75f}, TensorShape({2})));
    std::string y = g.Op("FusedBatchNormV3", {{f[0]}, {f[1]}, {f[2]}, {mean}, {variance}}, attrs);
    return g.Op("Cast", {{y}}, to_double);
  };
}

TEST(TfGradientCheckTest, FusedBatchNormV3) {
  const std::vector<std::pair<double, double>> ranges = {{-2, 2}, {0.5, 2}, {-1, 1}};
  Check({"FusedBatchNormV3 training NHWC", {{2, 2, 3, 2}, {2}, {2}}, FusedBatchNorm(true, "NHWC"), ranges, 2e-3, 1e-2});
  Check({"FusedBatchNormV3 training NCHW", {{2, 2, 2, 3}, {2}, {2}}, FusedBatchNorm(true, "NCHW"), ranges, 2e-3, 1e-2});
  Check({"FusedBatchNormV3 inference NHWC", {{2, 3, 1, 2}, {2}, {2}}, FusedBatchNorm(false, "NHWC"), ranges, 2e-3, 1e-2});
  Check({"FusedBatchNormV3 inference NCHW", {{1, 2, 3, 2}, {2}, {2}}, FusedBatchNorm(false, "NCHW"), ranges, 2e-3, 1e-2});
}

// ResizeBilinear's output is float: y is cast back to double. It is linear in the image, so
// only float rounding separates the differences from the gradient.
Forward Resize(const char* op, std::vector<int32_t> size, bool align_corners, bool half_pixel) {
  return [=](TfGraph& g, const std::vector<std::string>& x) {
    AttrMap attrs, to_double;
    attrs["align_corners"] = A(align_corners);
    attrs["half_pixel_centers"] = A(half_pixel);
    to_double["DstT"] = A(DT_DOUBLE);
    std::string y = g.Op(op, {{x[0]}, {g.Int32s(size)}}, attrs);
    return g.Dtype(y) == DT_DOUBLE ? y : g.Op("Cast", {{y}}, to_double);
  };
}

TEST(TfGradientCheckTest, Resizes) {
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    const double tolerance = std::string(op) == "ResizeBilinear" ? 1e-4 : 1e-6;
    Check({absl::StrCat(op, " up"), {{1, 3, 4, 2}}, Resize(op, {5, 7}, false, false), {}, tolerance, 1e-2});
    Check({absl::StrCat(op, " align_corners"), {{2, 3, 3, 1}}, Resize(op, {5, 4}, true, false), {}, tolerance, 1e-2});
    Check({absl::StrCat(op, " half_pixel_centers"), {{1, 4, 3, 2}}, Resize(op, {6, 5}, false, true), {}, tolerance, 1e-2});
    Check({absl::StrCat(op, " down"), {{1, 5, 6, 1}}, Resize(op, {2, 3}, false, true), {}, tolerance, 1e-2});
    Check({absl::StrCat(op, " down align_corners"), {{1, 5, 4, 1}}, Resize(op, {3, 3}, true, false), {}, tolerance, 1e-2});
  }
}

TEST(TfGradientCheckTest, NnBackwardOpsRefuseBadInput) {
  auto expect_error = [](const char* what, const std::function<std::string(TfGraph&)>& build) {
    SCOPED_TRACE(what);
    TfGraph g;
    std::string out = build(g);
    ASSERT_FALSE(out.empty());
    auto session = NewSession({});
    ASSERT_OK(session);
    absl::Status s = (*session)->Create(g.def());
    std::vector<Tensor> result;
    if (s.ok()) s = (*session)->Run({}, {out}, {}, &result);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    const std::string node = out.substr(0, out.find(':'));
    EXPECT_NE(s.message().find(node), std::string::npos) << s;
  };
  auto floats = [](TfGraph& g, std::vector<int64_t> dims) {
    Tensor t(DT_FLOAT, TensorShape(absl::Span<const int64_t>(dims)));
    for (float& v : t.flat<float>()) v = 1;
    return g.Const(t);
  };
  expect_error("ResizeBilinearGrad: grads of another batch", [&](TfGraph& g) {
    return g.Op("ResizeBilinearGrad", {{floats(g, {2, 4, 4, 1})}, {floats(g, {1, 2, 2, 1})}});
  });
  expect_error("ResizeNearestNeighborGrad: a size of one value", [&](TfGraph& g) {
    return g.Op("ResizeNearestNeighborGrad", {{floats(g, {1, 4, 4, 1})}, {g.Int32s({2})}});
  });
  expect_error("FusedBatchNormGradV3: y_backprop unlike x", [&](TfGraph& g) {
    std::string c = floats(g, {2});
    return g.Op("FusedBatchNormGradV3", {{floats(g, {1, 2, 2, 3})}, {floats(g, {1, 2, 2, 2})}, {c}, {c}, {c}, {c}});
  });
  expect_error("FusedBatchNormGradV3: a scale of the wrong size", [&](TfGraph& g) {
    std::string c = floats(g, {2});
    return g.Op("FusedBatchNormGradV3",
                {{floats(g, {1, 2, 2, 3})}, {floats(g, {1, 2, 2, 3})}, {c}, {c}, {c}, {c}});
  });
}

// An op without a gradient is an error naming it, not a crash. TensorFlow registers none for
// TruncateMod (TruncateDiv's is registered and passes nothing back).
TEST(TfGradientCheckTest, OpWithoutGradientIsAnError) {
  TfGraph g;
  std::string x = g.Placeholder(DT_DOUBLE);
  std::string c = g.Const(Tensor::FromVector<double>({3}, TensorShape()));
  std::string t = g.Op("TruncateMod", {{x}, {c}});
  std::string y = g.Op("Square", {{t}});
  GraphDef forward = g.def();
  auto dxs = SymbolicGradients(&g, forward, y, {x}, {}, {});
  ASSERT_FALSE(dxs.ok());
  EXPECT_EQ(dxs.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(dxs.status().message().find("'TruncateMod'"), std::string::npos) << dxs.status();
}

}  // namespace
}  // namespace sluice
