// DnnlConvBackward against the gradients written out as loops in double: strides, dilations,
// asymmetric and negative end padding, groups (depthwise included), 1-D and 3-D, and the same
// kernel called again with new values and from several threads at once.
#include "kernels/dnnl_conv_backward.h"

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

struct Case {
  std::vector<int64_t> x, w;  // N,C,spatial... and O,C/group,kernel...
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // pads: begins then ends.
};

Tensor Random(const std::vector<int64_t>& dims, std::mt19937* rng) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : t.flat<float>()) v = u(*rng);
  return t;
}

WindowGeometry Geometry(const Case& c) {
  WindowAttrs attrs;
  attrs.strides = c.strides;
  attrs.dilations = c.dilations;
  attrs.pads = c.pads;
  std::vector<int64_t> in(c.x.begin() + 2, c.x.end()), kernel(c.w.begin() + 2, c.w.end());
  auto g = ComputeWindowGeometry(in, kernel, attrs, false);
  EXPECT_OK(g);
  return *g;
}

// Calls fn(b, o, ci (within the group), flat x index, flat w index, flat y index) for every
// product term of the convolution.
template <typename Fn>
void ForEachTerm(const Case& c, const WindowGeometry& g, Fn fn) {
  const int spatial = static_cast<int>(c.x.size()) - 2;
  const int64_t n = c.x[0], ch = c.x[1], m = c.w[0], cg = ch / c.group, mg = m / c.group;
  int64_t out_size = 1, k_size = 1, in_size = 1;
  for (int i = 0; i < spatial; ++i) {
    out_size *= g.out[i];
    k_size *= g.kernel[i];
    in_size *= c.x[2 + i];
  }
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < m; ++o) {
      const int64_t gi = o / mg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        for (int64_t op = 0; op < out_size; ++op) {
          for (int64_t kp = 0; kp < k_size; ++kp) {
            int64_t xi = 0, rest_o = op, rest_k = kp;
            bool inside = true;
            std::vector<int64_t> pos(spatial);
            for (int i = spatial - 1; i >= 0; --i) {
              const int64_t oi = rest_o % g.out[i], ki = rest_k % g.kernel[i];
              rest_o /= g.out[i];
              rest_k /= g.kernel[i];
              pos[i] = oi * g.strides[i] - g.pad_begin[i] + ki * g.dilations[i];
              inside = inside && pos[i] >= 0 && pos[i] < c.x[2 + i];
            }
            if (!inside) continue;
            for (int i = 0; i < spatial; ++i) xi = xi * c.x[2 + i] + pos[i];
            fn((b * ch + gi * cg + ci) * in_size + xi, (o * cg + ci) * k_size + kp, (b * m + o) * out_size + op);
          }
        }
      }
    }
  }
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size())) << what;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got.flat<float>()[i] - want[i]) / (1.0 + std::abs(want[i])));
  }
  EXPECT_LT(worst, 1e-4) << what;
}

void Check(const Case& c) {
  const std::string what = absl::StrCat("x ", TensorShape(c.x).DebugString(), " w ",
                                        TensorShape(c.w).DebugString(), " group ", c.group);
  std::mt19937 rng(7);
  const WindowGeometry g = Geometry(c);
  std::vector<int64_t> y_dims = {c.x[0], c.w[0]};
  y_dims.insert(y_dims.end(), g.out.begin(), g.out.end());
  DnnlConvBackward data(DnnlConvBackward::kData), weights(DnnlConvBackward::kWeights);
  for (int round = 0; round < 2; ++round) {  // New values through the prepared primitives.
    const Tensor x = Random(c.x, &rng), w = Random(c.w, &rng), dy = Random(y_dims, &rng);
    std::vector<double> dx(x.NumElements(), 0.0), dw(w.NumElements(), 0.0);
    ForEachTerm(c, g, [&](int64_t xi, int64_t wi, int64_t yi) {
      dx[xi] += static_cast<double>(w.flat<float>()[wi]) * dy.flat<float>()[yi];
      dw[wi] += static_cast<double>(x.flat<float>()[xi]) * dy.flat<float>()[yi];
    });
    Tensor got_dx(DT_FLOAT, TensorShape(c.x)), got_dw(DT_FLOAT, TensorShape(c.w));
    auto done = data.Data(dy, w, g, c.group, 1, &got_dx);
    ASSERT_OK(done);
    ASSERT_TRUE(*done) << what << ": oneDNN took no backward data";
    ExpectNear(got_dx, dx, what + " dX");
    done = weights.Weights(x, dy, g, c.group, 1, &got_dw);
    ASSERT_OK(done);
    ASSERT_TRUE(*done) << what << ": oneDNN took no backward weights";
    ExpectNear(got_dw, dw, what + " dW");
  }
}

TEST(DnnlConvBackwardTest, MatchesTheSumsWrittenOut) {
  Check({{2, 8, 9, 9}, {16, 8, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}});
  Check({{2, 16, 10, 11}, {32, 16, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}});   // Stride 2, uneven.
  Check({{1, 8, 12, 12}, {8, 8, 3, 3}, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}});      // Dilated.
  Check({{1, 8, 10, 10}, {8, 8, 3, 3}, 1, {3, 3}, {1, 1}, {0, 1, 2, 0}});      // Asymmetric pads.
  Check({{2, 16, 8, 8}, {16, 1, 3, 3}, 16, {1, 1}, {1, 1}, {1, 1, 1, 1}});     // Depthwise.
  Check({{2, 8, 8, 8}, {12, 2, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}});       // Grouped.
  Check({{2, 3, 17, 17}, {16, 3, 7, 7}, 1, {2, 2}, {1, 1}, {3, 3, 3, 3}});     // A stem.
  Check({{2, 16, 7, 7}, {8, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}});      // 1x1.
  Check({{2, 16, 8, 8}, {32, 16, 1, 1}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}});     // Downsampling: rows unread.
  Check({{2, 4, 20}, {6, 4, 5}, 1, {2}, {1}, {2, 2}});                         // 1-D.
  Check({{1, 4, 5, 6, 7}, {8, 4, 3, 3, 3}, 1, {1, 2, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}});  // 3-D.
}

TEST(DnnlConvBackwardTest, OneKernelFromManyThreads) {
  const Case c{{2, 16, 14, 14}, {32, 16, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}};
  const WindowGeometry g = Geometry(c);
  std::mt19937 rng(3);
  const Tensor dy = Random({2, 32, 14, 14}, &rng), w = Random(c.w, &rng);
  DnnlConvBackward data(DnnlConvBackward::kData);
  Tensor want(DT_FLOAT, TensorShape(c.x));
  auto done = data.Data(dy, w, g, 1, 1, &want);
  ASSERT_TRUE(done.ok() && *done);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        Tensor got(DT_FLOAT, TensorShape(c.x));
        auto d = data.Data(dy, w, g, 1, 1, &got);
        if (!d.ok() || !*d) {
          ++mismatches[t];
          continue;
        }
        for (int64_t k = 0; k < got.NumElements(); ++k) mismatches[t] += got.flat<float>()[k] != want.flat<float>()[k];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(DnnlConvBackwardTest, OtherDtypesAreLeftToTheCaller) {
  const Case c{{1, 2, 4, 4}, {2, 2, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}};
  Tensor dy(DT_DOUBLE, TensorShape({1, 2, 4, 4})), w(DT_DOUBLE, TensorShape(c.w)), dx(DT_DOUBLE, TensorShape(c.x));
  DnnlConvBackward data(DnnlConvBackward::kData);
  auto done = data.Data(dy, w, Geometry(c), 1, 1, &dx);
  ASSERT_OK(done);
  EXPECT_FALSE(*done);
}

}  // namespace
}  // namespace sluice
