// The recurrence that RNNGrad, GRUGrad and LSTMGrad recompute, run forward in double (the
// double RNN, GRU and LSTM kernels), against rnn_ops.cc's float kernels on both of their paths;
// and the backward ops in float against the same in double. (Their gradients are checked
// against finite differences in frontend/gradients/gradient_check_rnn_test.cc.)
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

struct Config {
  std::string cell = "LSTM";
  std::string direction = "forward";
  int64_t layout = 0, linear_before_reset = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  bool bias = true, initial = true, peepholes = false;
  std::vector<int32_t> lens;

  std::string Name() const {
    return absl::StrCat(cell, " ", direction, " layout=", layout, " lbr=", linear_before_reset, " bias=", bias,
                        " initial=", initial, " peepholes=", peepholes, " lens=", lens.size());
  }
  bool lstm() const { return cell == "LSTM"; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t gates() const { return cell == "RNN" ? 1 : cell == "GRU" ? 3 : 4; }
  TensorShape XShape() const {
    return layout == 0 ? TensorShape({seq, batch, input}) : TensorShape({batch, seq, input});
  }
  TensorShape YShape() const {
    return layout == 0 ? TensorShape({seq, dirs(), batch, hidden}) : TensorShape({batch, seq, dirs(), hidden});
  }
  TensorShape StateShape() const {
    return layout == 0 ? TensorShape({dirs(), batch, hidden}) : TensorShape({batch, dirs(), hidden});
  }
};

// Random values in [-scale, scale] for `shape`, as float and as double.
struct Values {
  Tensor f, d;
};

Values RandomValues(const TensorShape& shape, float scale, std::mt19937* gen) {
  std::uniform_real_distribution<float> u(-scale, scale);
  Values v{Tensor(DT_FLOAT, shape), Tensor(DT_DOUBLE, shape)};
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.f.flat<float>()[i] = u(*gen);
    v.d.flat<double>()[i] = v.f.flat<float>()[i];
  }
  return v;
}

struct Inputs {
  std::vector<Values> forward;  // X, W, R, then the present optional float inputs, in order.
  std::vector<int> arg_sizes;   // Per forward arg.
  int seq_at = -1;              // Where sequence_lens goes among the inputs.
  std::vector<Values> dys;      // dY, dY_h (, dY_c).
};

Inputs MakeInputs(const Config& c) {
  std::mt19937 gen(static_cast<uint32_t>(std::hash<std::string>()(c.Name())));
  const int64_t D = c.dirs(), GH = c.gates() * c.hidden;
  Inputs in;
  in.forward.push_back(RandomValues(c.XShape(), 1.0f, &gen));
  in.forward.push_back(RandomValues(TensorShape({D, GH, c.input}), 0.6f, &gen));
  in.forward.push_back(RandomValues(TensorShape({D, GH, c.hidden}), 0.6f, &gen));
  in.arg_sizes = {1, 1, 1, c.bias, !c.lens.empty(), c.initial};
  if (c.bias) in.forward.push_back(RandomValues(TensorShape({D, 2 * GH}), 0.5f, &gen));
  if (!c.lens.empty()) in.seq_at = static_cast<int>(in.forward.size());
  if (c.initial) in.forward.push_back(RandomValues(c.StateShape(), 0.8f, &gen));
  if (c.lstm()) {
    in.arg_sizes.push_back(c.initial);
    in.arg_sizes.push_back(c.peepholes);
    if (c.initial) in.forward.push_back(RandomValues(c.StateShape(), 0.8f, &gen));
    if (c.peepholes) in.forward.push_back(RandomValues(TensorShape({D, 3 * c.hidden}), 0.5f, &gen));
  }
  in.dys.push_back(RandomValues(c.YShape(), 1.0f, &gen));
  in.dys.push_back(RandomValues(c.StateShape(), 1.0f, &gen));
  if (c.lstm()) in.dys.push_back(RandomValues(c.StateShape(), 1.0f, &gen));
  return in;
}

// A tester of `op` over the forward inputs (float or double), then `extra`.
void AddInputs(KernelTester* t, const Config& c, const Inputs& in, bool dbl, const std::vector<Values>& extra) {
  t->Attr("hidden_size", c.hidden).Attr("direction", c.direction).Attr("layout", c.layout);
  if (c.cell == "GRU") t->Attr("linear_before_reset", c.linear_before_reset);
  for (size_t i = 0; i < in.forward.size(); ++i) {
    if (static_cast<int>(i) == in.seq_at) t->Input<int32_t>({c.batch}, c.lens);
    t->Input(dbl ? in.forward[i].d : in.forward[i].f);
  }
  if (in.seq_at == static_cast<int>(in.forward.size())) t->Input<int32_t>({c.batch}, c.lens);
  std::vector<int> sizes = in.arg_sizes;
  for (const Values& v : extra) {
    t->Input(dbl ? v.d : v.f);
    sizes.push_back(1);
  }
  t->ArgSizes(sizes);
}

void ExpectClose(const Tensor& f, const Tensor& d, double tolerance, const std::string& what) {
  ASSERT_EQ(f.shape(), d.shape()) << what;
  double scale = 0;
  for (int64_t i = 0; i < d.NumElements(); ++i) scale = std::max(scale, std::fabs(d.flat<double>()[i]));
  for (int64_t i = 0; i < d.NumElements(); ++i) {
    ASSERT_NEAR(f.flat<float>()[i], d.flat<double>()[i], tolerance * (1 + scale)) << what << " at " << i;
  }
}

void Check(const Config& c) {
  SCOPED_TRACE(c.Name());
  const Inputs in = MakeInputs(c);
  // Forward: rnn_ops.cc's float kernel against the double one.
  KernelTester ff("Onnx>" + c.cell), fd("Onnx>" + c.cell);
  AddInputs(&ff, c, in, false, {});
  AddInputs(&fd, c, in, true, {});
  ASSERT_OK(ff.Run());
  ASSERT_OK(fd.Run());
  for (int k = 0; k < (c.lstm() ? 3 : 2); ++k) ExpectClose(ff.output(k), fd.output(k), 2e-5, absl::StrCat("output ", k));
  // Backward: float against double.
  KernelTester bf("Onnx>" + c.cell + "Grad"), bd("Onnx>" + c.cell + "Grad");
  AddInputs(&bf, c, in, false, in.dys);
  AddInputs(&bd, c, in, true, in.dys);
  ASSERT_OK(bf.Run());
  ASSERT_OK(bd.Run());
  const std::vector<TensorShape> shapes = {c.XShape(),
                                           TensorShape({c.dirs(), c.gates() * c.hidden, c.input}),
                                           TensorShape({c.dirs(), c.gates() * c.hidden, c.hidden}),
                                           TensorShape({c.dirs(), 2 * c.gates() * c.hidden}),
                                           c.StateShape(),
                                           c.StateShape(),
                                           TensorShape({c.dirs(), 3 * c.hidden})};
  for (int k = 0; k < (c.lstm() ? 7 : 5); ++k) {
    ASSERT_EQ(bd.output(k).shape(), shapes[k]) << "gradient " << k;
    ExpectClose(bf.output(k), bd.output(k), 1e-4, absl::StrCat("gradient ", k));
  }
}

TEST(RnnGradientOpsTest, FloatMatchesDoubleEveryCellDirectionLayout) {
  for (const char* cell : {"RNN", "GRU", "LSTM"}) {
    for (int lbr = 0; lbr < (std::string(cell) == "GRU" ? 2 : 1); ++lbr) {
      for (const char* direction : {"forward", "reverse", "bidirectional"}) {
        for (int64_t layout : {0, 1}) {
          Config c;
          c.cell = cell;
          c.linear_before_reset = lbr;
          c.direction = direction;
          c.layout = layout;
          Check(c);
          c.bias = c.initial = false;
          Check(c);
          // The float kernels' general path.
          c.lens = {5, 2, 0};
          c.initial = true;
          Check(c);
        }
      }
    }
  }
  Config p;
  p.peepholes = true;
  p.direction = "bidirectional";
  Check(p);
}

TEST(RnnGradientOpsTest, EmptyBatchAndSequence) {
  for (const char* cell : {"RNN", "GRU", "LSTM"}) {
    Config c;
    c.cell = cell;
    c.batch = 0;
    c.initial = false;
    Check(c);
    c.batch = 2;
    c.seq = 0;
    c.initial = true;
    Check(c);
  }
}

TEST(RnnGradientOpsTest, BadGradientShapes) {
  Config c;
  Inputs in = MakeInputs(c);
  std::mt19937 gen(3);
  in.dys[0] = RandomValues(TensorShape({c.seq, 1, c.batch, c.hidden + 1}), 1.0f, &gen);
  KernelTester t("Onnx>LSTMGrad");
  AddInputs(&t, c, in, false, in.dys);
  ExpectInvalid(t, "dY must be shaped as Y");
}

TEST(RnnGradientOpsTest, DoubleForwardRefusesClipAndOtherActivations) {
  Config c;
  Inputs in = MakeInputs(c);
  KernelTester t("Onnx>LSTM");
  AddInputs(&t, c, in, true, {});
  t.Attr("clip", 2.0f);
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(std::string(s.message()).find("'clip'"), std::string::npos) << s;
  KernelTester a("Onnx>GRU");
  c.cell = "GRU";
  in = MakeInputs(c);
  AddInputs(&a, c, in, true, {});
  a.Attr("activations", std::vector<std::string>{"Relu", "Tanh"});
  s = a.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(std::string(s.message()).find("'activations'"), std::string::npos) << s;
}

}  // namespace
}  // namespace sluice
