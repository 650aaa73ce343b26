// LSTM and GRU against a plain double-precision reference written from ONNX's equations, on
// each of the kernel's paths: oneDNN's primitives and, for LSTM, Sluice's own kernel (the
// default activations, no clip, every sequence at full length; SLUICE_LSTM picks which of the
// two, see the BUILD's variants) and the general per-step loop (taken here with a clip too large to
// change anything, with shorter sequences, or with peepholes).
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/dnnl_rnn.h"
#include "kernels/kernel_test_util.h"
#include "kernels/lstm_fast.h"

namespace sluice {
namespace {

struct Case {
  bool lstm = true;
  int linear_before_reset = 0;
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  bool bias = true, initial = true, peepholes = false;
  std::vector<int32_t> lens;  // Empty: no sequence_lens input.
  bool force_general = false;  // A clip of 1e30: no value changes, but the general path runs.

  std::string Name() const {
    return absl::StrCat(lstm ? "LSTM" : "GRU", " lbr=", linear_before_reset, " ", direction, " layout=", layout,
                        " T=", seq, " N=", batch, " I=", input, " H=", hidden, " bias=", bias, " initial=", initial,
                        " peepholes=", peepholes, " lens=", lens.size(), " general=", force_general);
  }
};

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Y [T, D, N, H], Y_h and Y_c [D, N, H] (time-major), from X [T, N, I] (time-major).
struct Reference {
  std::vector<double> y, yh, yc;
};

Reference Compute(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& r, const std::vector<float>& b, const std::vector<float>& h0,
                  const std::vector<float>& c0, const std::vector<float>& p) {
  const int64_t T = c.seq, N = c.batch, I = c.input, H = c.hidden, G = c.lstm ? 4 : 3;
  const int D = c.direction == "bidirectional" ? 2 : 1;
  Reference out;
  out.y.assign(T * D * N * H, 0.0);
  out.yh.assign(D * N * H, 0.0);
  out.yc.assign(D * N * H, 0.0);
  for (int d = 0; d < D; ++d) {
    const bool reverse = c.direction == "reverse" || d == 1;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = c.lens.empty() ? T : c.lens[n];
      std::vector<double> h(H), cell(H);
      for (int64_t k = 0; k < H; ++k) {
        h[k] = h0.empty() ? 0 : h0[(d * N + n) * H + k];
        cell[k] = c0.empty() ? 0 : c0[(d * N + n) * H + k];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        // xw[g*H+k], hr[g*H+k]: the projections with their biases.
        std::vector<double> xw(G * H), hr(G * H);
        for (int64_t j = 0; j < G * H; ++j) {
          double a = b.empty() ? 0 : b[d * 2 * G * H + j], e = b.empty() ? 0 : b[d * 2 * G * H + G * H + j];
          for (int64_t i = 0; i < I; ++i) a += double(x[(t * N + n) * I + i]) * w[(d * G * H + j) * I + i];
          for (int64_t i = 0; i < H; ++i) e += h[i] * r[(d * G * H + j) * H + i];
          xw[j] = a;
          hr[j] = e;
        }
        std::vector<double> next(H);
        if (c.lstm) {
          for (int64_t k = 0; k < H; ++k) {
            auto peep = [&](int g) { return p.empty() ? 0.0 : double(p[d * 3 * H + g * H + k]); };
            const double i = Sigmoid(xw[k] + hr[k] + peep(0) * cell[k]);
            const double f = Sigmoid(xw[2 * H + k] + hr[2 * H + k] + peep(2) * cell[k]);
            const double g = std::tanh(xw[3 * H + k] + hr[3 * H + k]);
            cell[k] = f * cell[k] + i * g;
            const double o = Sigmoid(xw[H + k] + hr[H + k] + peep(1) * cell[k]);
            next[k] = o * std::tanh(cell[k]);
          }
        } else {
          std::vector<double> z(H), rg(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = Sigmoid(xw[k] + hr[k]);
            rg[k] = Sigmoid(xw[H + k] + hr[H + k]);
          }
          for (int64_t k = 0; k < H; ++k) {
            double cand;
            if (c.linear_before_reset) {
              cand = std::tanh(xw[2 * H + k] + rg[k] * hr[2 * H + k]);
            } else {
              // (r . h) R_h + R_bh in place of h R_h + R_bh.
              double e = b.empty() ? 0 : b[d * 2 * G * H + G * H + 2 * H + k];
              for (int64_t i = 0; i < H; ++i) e += rg[i] * h[i] * r[(d * G * H + 2 * H + k) * H + i];
              cand = std::tanh(xw[2 * H + k] + e);
            }
            next[k] = (1 - z[k]) * cand + z[k] * h[k];
          }
        }
        h = next;
        for (int64_t k = 0; k < H; ++k) out.y[((t * D + d) * N + n) * H + k] = h[k];
      }
      for (int64_t k = 0; k < H; ++k) {
        out.yh[(d * N + n) * H + k] = h[k];
        out.yc[(d * N + n) * H + k] = cell[k];
      }
    }
  }
  return out;
}

std::vector<float> Random(int64_t n, std::mt19937* gen, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& e : v) e = dist(*gen);
  return v;
}

Tensor FloatTensor(const TensorShape& shape, const std::vector<float>& values) {
  Tensor t(DT_FLOAT, shape);
  std::copy(values.begin(), values.end(), t.flat<float>().data());
  return t;
}

// A time-major [A, B, C] as [B, A, C] (layout 1's order), or unchanged.
template <typename T>
std::vector<T> Swap01(const std::vector<T>& v, int64_t a, int64_t b, int64_t c, bool swap) {
  if (!swap) return v;
  std::vector<T> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k) out[(j * a + i) * c + k] = v[(i * b + j) * c + k];
  return out;
}

void Check(const Case& c) {
  SCOPED_TRACE(c.Name());
  std::mt19937 gen(static_cast<uint32_t>(std::hash<std::string>()(c.Name())));
  const int64_t T = c.seq, N = c.batch, I = c.input, H = c.hidden, G = c.lstm ? 4 : 3;
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const std::vector<float> x = Random(T * N * I, &gen, 1.0f), w = Random(D * G * H * I, &gen, 0.6f),
                           r = Random(D * G * H * H, &gen, 0.6f);
  const std::vector<float> b = c.bias ? Random(D * 2 * G * H, &gen, 0.5f) : std::vector<float>();
  const std::vector<float> h0 = c.initial ? Random(D * N * H, &gen, 0.8f) : std::vector<float>();
  const std::vector<float> c0 = c.initial && c.lstm ? Random(D * N * H, &gen, 0.8f) : std::vector<float>();
  const std::vector<float> p = c.peepholes ? Random(D * 3 * H, &gen, 0.5f) : std::vector<float>();
  const Reference want = Compute(c, x, w, r, b, h0, c0, p);

  const bool bm = c.layout == 1;
  KernelTester t(c.lstm ? "Onnx>LSTM" : "Onnx>GRU");
  t.Attr("hidden_size", H).Attr("direction", c.direction).Attr("layout", int64_t{c.layout});
  if (!c.lstm) t.Attr("linear_before_reset", int64_t{c.linear_before_reset});
  if (c.force_general) t.Attr("clip", 1e30f);
  t.Input(FloatTensor(bm ? TensorShape({N, T, I}) : TensorShape({T, N, I}), Swap01(x, T, N, I, bm)));
  t.Input<float>({D, G * H, I}, w).Input<float>({D, G * H, H}, r);
  std::vector<int> sizes = {1, 1, 1, c.bias, !c.lens.empty(), c.initial};
  if (c.bias) t.Input<float>({D, 2 * G * H}, b);
  if (!c.lens.empty()) t.Input<int32_t>({N}, c.lens);
  const TensorShape state_shape = bm ? TensorShape({N, D, H}) : TensorShape({D, N, H});
  if (c.initial) t.Input(FloatTensor(state_shape, Swap01(h0, D, N, H, bm)));
  if (c.lstm) {
    sizes.push_back(c.initial);
    sizes.push_back(c.peepholes);
    if (c.initial) t.Input(FloatTensor(state_shape, Swap01(c0, D, N, H, bm)));
    if (c.peepholes) t.Input<float>({D, 3 * H}, p);
  }
  t.ArgSizes(sizes);
  ASSERT_OK(t.Run());
  auto expect = [&](int output, const std::vector<double>& v, int64_t a, int64_t b, int64_t rest) {
    const std::vector<double> laid = Swap01(v, a, b, rest, bm);
    const Tensor& got = t.output(output);
    ASSERT_EQ(got.NumElements(), static_cast<int64_t>(laid.size())) << "output " << output;
    for (size_t i = 0; i < laid.size(); ++i) {
      ASSERT_NEAR(got.flat<float>()[i], laid[i], 2e-5 + 2e-5 * std::abs(laid[i])) << "output " << output << " at " << i;
    }
  };
  // Y [T, D, N, H] is [N, T, D, H] in layout 1.
  if (bm) {
    std::vector<double> y(want.y.size());
    for (int64_t tt = 0; tt < T; ++tt)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t n = 0; n < N; ++n)
          for (int64_t k = 0; k < H; ++k) y[((n * T + tt) * D + d) * H + k] = want.y[((tt * D + d) * N + n) * H + k];
    const Tensor& got = t.output(0);
    ASSERT_EQ(got.shape(), TensorShape({N, T, D, H}));
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(got.flat<float>()[i], y[i], 2e-5 + 2e-5 * std::abs(y[i])) << "Y at " << i;
  } else {
    ASSERT_EQ(t.output(0).shape(), TensorShape({T, D, N, H}));
    expect(0, want.y, 1, 1, want.y.size());
  }
  expect(1, want.yh, D, N, H);
  if (c.lstm) expect(2, want.yc, D, N, H);
}

// A case for each cell (LSTM, GRU, GRU with linear_before_reset), direction and layout.
std::vector<Case> EveryCellDirectionLayout() {
  std::vector<Case> cases;
  for (int cell = 0; cell < 3; ++cell) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int layout = 0; layout < 2; ++layout) {
        Case c;
        c.lstm = cell == 0;
        c.linear_before_reset = cell == 2;
        c.direction = direction;
        c.layout = layout;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// Both paths, with the optional inputs present and absent.
TEST(RnnOpsTest, MatchesReference) {
  for (Case c : EveryCellDirectionLayout()) {
    for (bool general : {false, true}) {
      for (bool optional_inputs : {true, false}) {
        c.force_general = general;
        c.bias = c.initial = optional_inputs;
        Check(c);
      }
    }
  }
}

// Batch 1, one step, and sizes that fill no vector register evenly.
TEST(RnnOpsTest, SmallAndOddShapes) {
  for (Case c : EveryCellDirectionLayout()) {
    for (auto [seq, batch, input, hidden] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 1, 1, 1},
                                             {1, 4, 3, 5},
                                             {7, 1, 9, 17},
                                             {3, 2, 33, 20}}) {
      c.seq = seq;
      c.batch = batch;
      c.input = input;
      c.hidden = hidden;
      Check(c);
    }
  }
}

// Sequences shorter than X (the general path) and sequence_lens all at full length (the fast
// path: the input is there, but changes nothing).
TEST(RnnOpsTest, SequenceLens) {
  for (Case c : EveryCellDirectionLayout()) {
    for (std::vector<int32_t> lens : {std::vector<int32_t>{5, 2, 0}, std::vector<int32_t>{5, 5, 5}}) {
      c.lens = lens;
      Check(c);
    }
  }
}

TEST(RnnOpsTest, LstmPeepholes) {
  for (const char* direction : {"forward", "bidirectional"}) {
    Case c;
    c.direction = direction;
    c.peepholes = true;
    Check(c);
  }
}

Tensor RandomTensor(const TensorShape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  return FloatTensor(shape, Random(shape.num_elements(), &gen, 0.5f));
}

// Y of a forward LSTM through `rnn` (one kernel's cache) with weights W and R.
std::vector<float> RunLstm(const DnnlRnn& rnn, const Tensor& x, const Tensor& w, const Tensor& r) {
  DnnlRnnProblem p;
  p.seq_len = 4;
  p.batch = 2;
  p.input = 3;
  p.hidden = 5;
  Tensor y(DT_FLOAT, TensorShape({4, 1, 2, 5})), yh(DT_FLOAT, TensorShape({1, 2, 5})), yc(DT_FLOAT, TensorShape({1, 2, 5}));
  absl::StatusOr<bool> done = rnn.Run(p, x, w, r, nullptr, nullptr, nullptr, 1, &y, &yh, &yc);
  EXPECT_TRUE(done.ok() && *done) << done.status();
  return std::vector<float>(y.flat<float>().data(), y.flat<float>().data() + y.NumElements());
}

// The prepared weights follow the weight buffers: new values in the same shapes give the
// results a fresh kernel gives, and the first weights theirs again.
TEST(DnnlRnnTest, NewWeightsSameShapes) {
  const Tensor x = RandomTensor(TensorShape({4, 2, 3}), 1);
  const Tensor w1 = RandomTensor(TensorShape({1, 20, 3}), 2), r1 = RandomTensor(TensorShape({1, 20, 5}), 3);
  const Tensor w2 = RandomTensor(TensorShape({1, 20, 3}), 4), r2 = RandomTensor(TensorShape({1, 20, 5}), 5);
  DnnlRnn shared, fresh1, fresh2;
  const std::vector<float> y1 = RunLstm(shared, x, w1, r1);
  const std::vector<float> y2 = RunLstm(shared, x, w2, r2);
  EXPECT_NE(y1, y2);
  EXPECT_EQ(y2, RunLstm(fresh2, x, w2, r2));
  EXPECT_EQ(y1, RunLstm(shared, x, w1, r1));
  EXPECT_EQ(y1, RunLstm(fresh1, x, w1, r1));
}

// One kernel run with varying sequence lengths and batch sizes (more shapes than its cache
// holds, so entries are evicted and made again, sharing prepared weights) gives what a fresh
// kernel gives for each.
TEST(DnnlRnnTest, VaryingShapes) {
  const Tensor w = RandomTensor(TensorShape({1, 18, 3}), 2), r = RandomTensor(TensorShape({1, 18, 6}), 3);
  const Tensor b = RandomTensor(TensorShape({1, 36}), 4);
  DnnlRnn shared;
  auto run = [&](const DnnlRnn& rnn, int64_t seq, int64_t batch) {
    DnnlRnnProblem p;
    p.cell = DnnlRnnCell::kLbrGru;
    p.seq_len = seq;
    p.batch = batch;
    p.input = 3;
    p.hidden = 6;
    const Tensor x = RandomTensor(TensorShape({seq, batch, 3}), static_cast<uint32_t>(seq * 10 + batch));
    Tensor y(DT_FLOAT, TensorShape({seq, 1, batch, 6})), yh(DT_FLOAT, TensorShape({1, batch, 6}));
    absl::StatusOr<bool> done = rnn.Run(p, x, w, r, &b, nullptr, nullptr, 1, &y, &yh, nullptr);
    EXPECT_TRUE(done.ok() && *done) << done.status();
    return std::vector<float>(y.flat<float>().data(), y.flat<float>().data() + y.NumElements());
  };
  for (int round = 0; round < 2; ++round) {
    for (int64_t seq = 1; seq <= 12; seq += 1) {
      const int64_t batch = 1 + seq % 3;
      SCOPED_TRACE(testing::Message() << "seq " << seq << " batch " << batch << " round " << round);
      DnnlRnn fresh;
      EXPECT_EQ(run(shared, seq, batch), run(fresh, seq, batch));
    }
  }
}

// Compute is const and runs on several threads at once: one kernel's cache, four threads.
TEST(DnnlRnnTest, ConcurrentRuns) {
  const Tensor x = RandomTensor(TensorShape({4, 2, 3}), 1);
  const Tensor w = RandomTensor(TensorShape({1, 20, 3}), 2), r = RandomTensor(TensorShape({1, 20, 5}), 3);
  DnnlRnn shared, alone;
  const std::vector<float> want = RunLstm(alone, x, w, r);
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) got[i] = RunLstm(shared, x, w, r);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

// Sluice's own LSTM kernel called directly with teams of 1 to 3 threads (so each thread owns a
// range of units and the team meets at the per-step barrier), on shapes whose batch, hidden size
// and column ranges leave partial register tiles and padded unit groups, every direction and
// layout, against the double-precision reference.
TEST(FastLstmTest, MatchesReferenceOnEveryTeamSize) {
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int layout = 0; layout < 2; ++layout) {
      for (auto [seq, batch, input, hidden] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
               {6, 9, 20, 72}, {3, 13, 7, 40}, {2, 1, 33, 130}}) {
        for (bool initial : {true, false}) {
          Case c;
          c.direction = direction;
          c.layout = layout;
          c.seq = seq;
          c.batch = batch;
          c.input = input;
          c.hidden = hidden;
          c.initial = c.bias = initial;
          const int64_t T = seq, N = batch, I = input, H = hidden;
          const int64_t D = c.direction == std::string("bidirectional") ? 2 : 1;
          std::mt19937 gen(static_cast<uint32_t>(std::hash<std::string>()(c.Name())));
          const std::vector<float> x = Random(T * N * I, &gen, 1.0f), w = Random(D * 4 * H * I, &gen, 0.3f),
                                   r = Random(D * 4 * H * H, &gen, 0.3f);
          const std::vector<float> b = initial ? Random(D * 8 * H, &gen, 0.5f) : std::vector<float>();
          const std::vector<float> h0 = initial ? Random(D * N * H, &gen, 0.8f) : std::vector<float>();
          const std::vector<float> c0 = initial ? Random(D * N * H, &gen, 0.8f) : std::vector<float>();
          const Reference want = Compute(c, x, w, r, b, h0, c0, {});
          const bool bm = layout == 1;
          const Tensor xt = FloatTensor(bm ? TensorShape({N, T, I}) : TensorShape({T, N, I}), Swap01(x, T, N, I, bm));
          const Tensor wt = FloatTensor(TensorShape({D, 4 * H, I}), w), rt = FloatTensor(TensorShape({D, 4 * H, H}), r);
          const Tensor bt = initial ? FloatTensor(TensorShape({D, 8 * H}), b) : Tensor();
          const TensorShape state_shape = bm ? TensorShape({N, D, H}) : TensorShape({D, N, H});
          const Tensor h0t = initial ? FloatTensor(state_shape, Swap01(h0, D, N, H, bm)) : Tensor();
          const Tensor c0t = initial ? FloatTensor(state_shape, Swap01(c0, D, N, H, bm)) : Tensor();
          DnnlRnnProblem p;
          p.num_dirs = static_cast<int>(D);
          p.reverse = c.direction == std::string("reverse");
          p.batch_major = bm;
          p.seq_len = T;
          p.batch = N;
          p.input = I;
          p.hidden = H;
          FastLstm lstm;
          for (int threads = 1; threads <= 3; ++threads) {
            SCOPED_TRACE(absl::StrCat(c.Name(), " threads=", threads));
            Tensor y(DT_FLOAT, bm ? TensorShape({N, T, D, H}) : TensorShape({T, D, N, H}));
            Tensor yh(DT_FLOAT, state_shape), yc(DT_FLOAT, state_shape);
            absl::StatusOr<bool> done = lstm.Run(p, xt, wt, rt, initial ? &bt : nullptr, initial ? &h0t : nullptr,
                                                 initial ? &c0t : nullptr, threads, &y, &yh, &yc);
            ASSERT_TRUE(done.ok()) << done.status();
            ASSERT_TRUE(*done);
            auto near = [](float got, double want) { return std::abs(got - want) <= 2e-5 + 2e-5 * std::abs(want); };
            for (int64_t tt = 0; tt < T; ++tt) {
              for (int64_t d = 0; d < D; ++d) {
                for (int64_t n = 0; n < N; ++n) {
                  for (int64_t k = 0; k < H; ++k) {
                    const double e = want.y[((tt * D + d) * N + n) * H + k];
                    const float g = bm ? y.flat<float>()[((n * T + tt) * D + d) * H + k]
                                       : y.flat<float>()[((tt * D + d) * N + n) * H + k];
                    ASSERT_TRUE(near(g, e)) << "Y t=" << tt << " d=" << d << " n=" << n << " k=" << k << ": " << g
                                            << " against " << e;
                  }
                }
              }
            }
            const std::vector<double> yh_want = Swap01(want.yh, D, N, H, bm), yc_want = Swap01(want.yc, D, N, H, bm);
            for (int64_t i = 0; i < D * N * H; ++i) {
              ASSERT_TRUE(near(yh.flat<float>()[i], yh_want[i])) << "Y_h at " << i;
              ASSERT_TRUE(near(yc.flat<float>()[i], yc_want[i])) << "Y_c at " << i;
            }
          }
        }
      }
    }
  }
}

// A NaN in X reaches the outputs that depend on it instead of being clamped away.
TEST(FastLstmTest, NanInInputReachesOutputs) {
  std::mt19937 gen(7);
  const int64_t T = 3, N = 2, I = 5, H = 24;
  std::vector<float> x = Random(T * N * I, &gen, 1.0f);
  x[I * 1 + 2] = std::nanf("");  // Step 0, batch row 1.
  const Tensor xt = FloatTensor(TensorShape({T, N, I}), x);
  const Tensor wt = FloatTensor(TensorShape({1, 4 * H, I}), Random(4 * H * I, &gen, 0.3f));
  const Tensor rt = FloatTensor(TensorShape({1, 4 * H, H}), Random(4 * H * H, &gen, 0.3f));
  DnnlRnnProblem p;
  p.seq_len = T;
  p.batch = N;
  p.input = I;
  p.hidden = H;
  Tensor y(DT_FLOAT, TensorShape({T, 1, N, H})), yh(DT_FLOAT, TensorShape({1, N, H})), yc(DT_FLOAT, TensorShape({1, N, H}));
  FastLstm lstm;
  absl::StatusOr<bool> done = lstm.Run(p, xt, wt, rt, nullptr, nullptr, nullptr, 1, &y, &yh, &yc);
  ASSERT_TRUE(done.ok() && *done) << done.status();
  for (int64_t k = 0; k < H; ++k) {
    EXPECT_TRUE(std::isnan(yh.flat<float>()[H + k])) << "row 1, unit " << k;
    EXPECT_FALSE(std::isnan(yh.flat<float>()[k])) << "row 0, unit " << k;
  }
}

// Sizes whose packed buffers overflow int64 (2^62 steps) are refused with INVALID_ARGUMENT
// before anything is allocated or read.
TEST(FastLstmTest, OverflowingSizesAreRefused) {
  const Tensor x = RandomTensor(TensorShape({4, 2, 3}), 1);
  const Tensor w = RandomTensor(TensorShape({1, 20, 3}), 2), r = RandomTensor(TensorShape({1, 20, 5}), 3);
  DnnlRnnProblem p;
  p.seq_len = int64_t{1} << 62;
  p.batch = 2;
  p.input = 3;
  p.hidden = 5;
  Tensor y(DT_FLOAT, TensorShape({4, 1, 2, 5})), yh(DT_FLOAT, TensorShape({1, 2, 5}));
  FastLstm lstm;
  absl::StatusOr<bool> done = lstm.Run(p, x, w, r, nullptr, nullptr, nullptr, 1, &y, &yh, nullptr);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().code(), absl::StatusCode::kInvalidArgument) << done.status();
  EXPECT_NE(done.status().message().find("overflow"), std::string::npos) << done.status();
}

// The packed weights follow the weight buffers, as oneDNN's prepared ones do.
TEST(FastLstmTest, NewWeightsSameShapes) {
  const Tensor x = RandomTensor(TensorShape({4, 2, 3}), 1);
  const Tensor w1 = RandomTensor(TensorShape({1, 20, 3}), 2), r1 = RandomTensor(TensorShape({1, 20, 5}), 3);
  const Tensor w2 = RandomTensor(TensorShape({1, 20, 3}), 4), r2 = RandomTensor(TensorShape({1, 20, 5}), 5);
  auto run = [&](const FastLstm& lstm, const Tensor& w, const Tensor& r) {
    DnnlRnnProblem p;
    p.seq_len = 4;
    p.batch = 2;
    p.input = 3;
    p.hidden = 5;
    Tensor y(DT_FLOAT, TensorShape({4, 1, 2, 5})), yh(DT_FLOAT, TensorShape({1, 2, 5}));
    absl::StatusOr<bool> done = lstm.Run(p, x, w, r, nullptr, nullptr, nullptr, 1, &y, &yh, nullptr);
    EXPECT_TRUE(done.ok() && *done) << done.status();
    return std::vector<float>(y.flat<float>().data(), y.flat<float>().data() + y.NumElements());
  };
  FastLstm shared, fresh1, fresh2;
  const std::vector<float> y1 = run(shared, w1, r1);
  const std::vector<float> y2 = run(shared, w2, r2);
  EXPECT_NE(y1, y2);
  EXPECT_EQ(y2, run(fresh2, w2, r2));
  EXPECT_EQ(y1, run(shared, w1, r1));
  EXPECT_EQ(y1, run(fresh1, w1, r1));
}

}  // namespace
}  // namespace sluice
