// RNN, GRU and LSTM (ONNX). GRU and LSTM in their common form (default activations, no clip,
// input_forget or peepholes, full-length sequences) run as one oneDNN primitive over the whole
// sequence (dnnl_rnn.h); LSTM's, where the CPU has AVX2, by Sluice's own kernel (lstm_fast.h).
// Otherwise the input projection of every time step is one GEMM; each
// step adds the recurrent product (oneDNN's matmul on R prepared once, dnnl_matmul.h) and the
// gate arithmetic. Directions, sequence_lens, clip, peepholes, linear_before_reset,
// input_forget, both layouts and the configurable activations.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/blas.h"
#include "kernels/dnnl_matmul.h"
#include "kernels/dnnl_rnn.h"
#include "kernels/fast_math.h"
#include "kernels/kernel_registry.h"
#include "kernels/lstm_fast.h"

namespace sluice {
namespace {

enum class Cell { kRnn, kGru, kLstm };

constexpr int Gates(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }

// An RNN activation, applied to a whole gate's values at once: sigmoid and tanh (nearly every
// model's) in vectorized float arithmetic (fast_math.h), the others per value.
struct Activation {
  enum class Kind { kSigmoid, kTanh, kOther };
  Kind kind = Kind::kOther;
  std::function<float(float)> fn;  // For kOther.

  Activation() = default;
  explicit Activation(std::function<float(float)> f) : fn(std::move(f)) {}
  static Activation Of(Kind k) {
    Activation a;
    a.kind = k;
    return a;
  }
  void Apply(float* v, int64_t n) const {
    switch (kind) {
      case Kind::kSigmoid:
        SigmoidInPlace(v, n);
        break;
      case Kind::kTanh:
        TanhInPlace(v, n);
        break;
      case Kind::kOther:
        for (int64_t i = 0; i < n; ++i) v[i] = fn(v[i]);
        break;
    }
  }
};

absl::StatusOr<Activation> MakeActivation(std::string name, const std::vector<float>& alphas,
                                          const std::vector<float>& betas, size_t* next_alpha,
                                          size_t* next_beta) {
  name = absl::AsciiStrToLower(name);
  auto take = [](const std::vector<float>& v, size_t* i, float fallback) {
    return *i < v.size() ? v[(*i)++] : fallback;
  };
  if (name == "sigmoid") return Activation::Of(Activation::Kind::kSigmoid);
  if (name == "tanh") return Activation::Of(Activation::Kind::kTanh);
  if (name == "relu") return Activation([](float x) { return x > 0 ? x : 0.0f; });
  if (name == "softsign") return Activation([](float x) { return x / (1 + std::fabs(x)); });
  if (name == "softplus") return Activation([](float x) { return std::log1p(std::exp(x)); });
  if (name == "affine") {
    float a = take(alphas, next_alpha, 1.0f), b = take(betas, next_beta, 0.0f);
    return Activation([a, b](float x) { return a * x + b; });
  }
  if (name == "leakyrelu") {
    float a = take(alphas, next_alpha, 0.01f);
    return Activation([a](float x) { return x >= 0 ? x : a * x; });
  }
  if (name == "thresholdedrelu") {
    float a = take(alphas, next_alpha, 1.0f);
    return Activation([a](float x) { return x > a ? x : 0.0f; });
  }
  if (name == "scaledtanh") {
    float a = take(alphas, next_alpha, 1.0f), b = take(betas, next_beta, 1.0f);
    return Activation([a, b](float x) { return a * std::tanh(b * x); });
  }
  if (name == "hardsigmoid") {
    float a = take(alphas, next_alpha, 0.2f), b = take(betas, next_beta, 0.5f);
    return Activation([a, b](float x) { return std::max(0.0f, std::min(1.0f, a * x + b)); });
  }
  if (name == "elu") {
    float a = take(alphas, next_alpha, 1.0f);
    return Activation([a](float x) { return x >= 0 ? x : a * (std::exp(x) - 1); });
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown activation '", name, "'"));
}

template <Cell kCell>
class RecurrentOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::vector<float> alphas, betas;
    std::vector<std::string> names;
    SL_RETURN_IF_ERROR(ctx->GetAttr("activation_alpha", &alphas));
    SL_RETURN_IF_ERROR(ctx->GetAttr("activation_beta", &betas));
    SL_RETURN_IF_ERROR(ctx->GetAttr("activations", &names));
    SL_RETURN_IF_ERROR(ctx->GetAttr("clip", &clip_));
    std::string direction;
    SL_RETURN_IF_ERROR(ctx->GetAttr("direction", &direction));
    SL_RETURN_IF_ERROR(ctx->GetAttr("hidden_size", &hidden_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("layout", &layout_));
    if (kCell == Cell::kGru) SL_RETURN_IF_ERROR(ctx->GetAttr("linear_before_reset", &linear_before_reset_));
    if (kCell == Cell::kLstm) SL_RETURN_IF_ERROR(ctx->GetAttr("input_forget", &input_forget_));
    num_dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_only_ = direction == "reverse";
    const int per_dir = kCell == Cell::kRnn ? 1 : kCell == Cell::kGru ? 2 : 3;
    if (names.empty()) {
      std::vector<std::string> defaults = kCell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
                                          : kCell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
      for (int d = 0; d < num_dirs_; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    }
    if (static_cast<int>(names.size()) != per_dir * num_dirs_) {
      return absl::InvalidArgumentError(absl::StrCat("expected ", per_dir * num_dirs_, " activations, got ", names.size()));
    }
    size_t ia = 0, ib = 0;
    for (const auto& n : names) {
      SL_ASSIGN_OR_RETURN(Activation f, MakeActivation(n, alphas, betas, &ia, &ib));
      activations_.push_back(std::move(f));
    }
    // oneDNN's cells have the default activations: sigmoid for the gates, tanh for the rest.
    default_activations_ = true;
    for (size_t i = 0; i < activations_.size(); ++i) {
      const auto want = i % per_dir == 0 ? Activation::Kind::kSigmoid : Activation::Kind::kTanh;
      default_activations_ &= activations_[i].kind == want;
    }
    DataTypeVector tb, tsl, th, tc, tp;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tb", &tb));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tsl", &tsl));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Th", &th));
    has_b_ = !tb.empty();
    has_seq_ = !tsl.empty();
    has_h0_ = !th.empty();
    if (kCell == Cell::kLstm) {
      SL_RETURN_IF_ERROR(ctx->GetAttr("Tc", &tc));
      SL_RETURN_IF_ERROR(ctx->GetAttr("Tp", &tp));
      has_c0_ = !tc.empty();
      has_p_ = !tp.empty();
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& w = ctx->input(1);
    const Tensor& r = ctx->input(2);
    int next = 3;
    const Tensor* b = has_b_ ? &ctx->input(next++) : nullptr;
    const Tensor* seq = has_seq_ ? &ctx->input(next++) : nullptr;
    const Tensor* h0 = has_h0_ ? &ctx->input(next++) : nullptr;
    const Tensor* c0 = has_c0_ ? &ctx->input(next++) : nullptr;
    const Tensor* p = has_p_ ? &ctx->input(next++) : nullptr;
    if (x.dims() != 3) return absl::InvalidArgumentError(absl::StrCat("X must be 3-D, got ", x.shape().DebugString()));
    const int64_t seq_len = layout_ == 0 ? x.dim_size(0) : x.dim_size(1);
    const int64_t batch = layout_ == 0 ? x.dim_size(1) : x.dim_size(0);
    const int64_t input = x.dim_size(2);
    const int64_t H = hidden_, G = Gates(kCell);
    // hidden_size is an attribute and batch a dim of X that may be huge when X is empty: every
    // size below is checked before it is used (a hidden_size of 2^62 overflowed G * H).
    int64_t gh, bh, bgh, dbh, sbgh, ydims, four_h;
    if (!CheckedMul(G, H, &gh) || !CheckedMul(batch, H, &bh) || !CheckedMul(batch, gh, &bgh) ||
        !CheckedMul(int64_t{num_dirs_}, bh, &dbh) || !CheckedMul(seq_len, bgh, &sbgh) ||
        !CheckedMul(seq_len, dbh, &ydims) || !CheckedMul(int64_t{4}, H, &four_h)) {
      return absl::InvalidArgumentError(absl::StrCat("hidden_size ", H, " with X of shape ", x.shape().DebugString(),
                                                     ": the state and output sizes overflow"));
    }
    // The scratch buffers below hold X's projections for every step and the recurrent state.
    SL_RETURN_IF_ERROR(TensorBytes(DT_FLOAT, sbgh, "the input projections").status());
    SL_RETURN_IF_ERROR(TensorBytes(DT_FLOAT, ydims, "output Y").status());
    SL_RETURN_IF_ERROR(TensorBytes(DT_FLOAT, four_h, "the gates").status());
    if (w.shape() != TensorShape({num_dirs_, G * H, input})) {
      return absl::InvalidArgumentError(absl::StrCat("W must be [", num_dirs_, ",", G * H, ",", input, "], got ", w.shape().DebugString()));
    }
    if (r.shape() != TensorShape({num_dirs_, G * H, H})) {
      return absl::InvalidArgumentError(absl::StrCat("R must be [", num_dirs_, ",", G * H, ",", H, "], got ", r.shape().DebugString()));
    }
    if (b && b->NumElements() != num_dirs_ * 2 * G * H) return absl::InvalidArgumentError("B has the wrong size");
    if (h0 && h0->NumElements() != num_dirs_ * batch * H) return absl::InvalidArgumentError("initial_h has the wrong size");
    if (c0 && c0->NumElements() != num_dirs_ * batch * H) return absl::InvalidArgumentError("initial_c has the wrong size");
    if (p && p->NumElements() != num_dirs_ * 3 * H) return absl::InvalidArgumentError("P has the wrong size");
    std::vector<int64_t> lens(batch, seq_len);
    if (seq) {
      if (seq->NumElements() != batch) return absl::InvalidArgumentError("sequence_lens needs one value per batch entry");
      for (int64_t i = 0; i < batch; ++i) {
        lens[i] = seq->dtype() == DT_INT64 ? seq->flat<int64_t>()[i] : seq->flat<int32_t>()[i];
        if (lens[i] < 0 || lens[i] > seq_len) return absl::InvalidArgumentError("sequence_lens out of range");
      }
    }
    // Y: [seq, dirs, batch, H] (layout 0) or [batch, seq, dirs, H]; Y_h/Y_c: [dirs, batch, H]
    // or [batch, dirs, H].
    Tensor *y, *yh, *yc = nullptr;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, layout_ == 0 ? TensorShape({seq_len, num_dirs_, batch, H})
                                                            : TensorShape({batch, seq_len, num_dirs_, H}), &y));
    TensorShape state_shape = layout_ == 0 ? TensorShape({num_dirs_, batch, H}) : TensorShape({batch, num_dirs_, H});
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, state_shape, &yh));
    if (kCell == Cell::kLstm) SL_RETURN_IF_ERROR(ctx->allocate_output(2, state_shape, &yc));
    if constexpr (kCell != Cell::kRnn) {
      // The common case (every sequence at full length, default activations, no clip, no
      // input_forget, no peepholes) runs as one oneDNN primitive over the whole sequence, or
      // for LSTM as Sluice's own kernel (lstm_fast.h) where the CPU has AVX2.
      const bool full_length = std::all_of(lens.begin(), lens.end(), [&](int64_t n) { return n == seq_len; });
      if (full_length && default_activations_ && clip_ <= 0 && !input_forget_ && p == nullptr) {
        DnnlRnnProblem problem;
        problem.cell = kCell == Cell::kLstm ? DnnlRnnCell::kLstm
                       : linear_before_reset_ ? DnnlRnnCell::kLbrGru
                                              : DnnlRnnCell::kGru;
        problem.num_dirs = num_dirs_;
        problem.reverse = reverse_only_;
        problem.batch_major = layout_ == 1;
        problem.seq_len = seq_len;
        problem.batch = batch;
        problem.input = input;
        problem.hidden = H;
        if (kCell == Cell::kLstm && UseFastLstm()) {
          SL_ASSIGN_OR_RETURN(bool done, fast_lstm_.Run(problem, x, w, r, b, h0, c0, ctx->intra_op_threads(), y, yh, yc));
          if (done) return absl::OkStatus();
        }
        SL_ASSIGN_OR_RETURN(bool done, dnnl_.Run(problem, x, w, r, b, h0, c0, ctx->intra_op_threads(), y, yh, yc));
        if (done) return absl::OkStatus();
      }
    }
    float* yd = y->data<float>();
    std::fill(yd, yd + y->NumElements(), 0.0f);
    auto y_at = [&](int64_t t, int d, int64_t bi) {
      return layout_ == 0 ? yd + ((t * num_dirs_ + d) * batch + bi) * H : yd + ((bi * seq_len + t) * num_dirs_ + d) * H;
    };
    auto state_at = [&](Tensor* s, int d, int64_t bi) {
      return layout_ == 0 ? s->data<float>() + (d * batch + bi) * H : s->data<float>() + (bi * num_dirs_ + d) * H;
    };
    auto init_at = [&](const Tensor* s, int d, int64_t bi) {
      return layout_ == 0 ? s->data<float>() + (d * batch + bi) * H : s->data<float>() + (bi * num_dirs_ + d) * H;
    };
    // X as [seq, batch, input] rows.
    std::vector<float> xs(seq_len * batch * input);
    for (int64_t t = 0; t < seq_len; ++t) {
      for (int64_t bi = 0; bi < batch; ++bi) {
        const float* src = layout_ == 0 ? x.data<float>() + (t * batch + bi) * input : x.data<float>() + (bi * seq_len + t) * input;
        std::copy(src, src + input, xs.data() + (t * batch + bi) * input);
      }
    }
    const int per_dir = static_cast<int>(activations_.size()) / num_dirs_;
    std::vector<float> xw(seq_len * batch * G * H), hr(batch * G * H), h(batch * H), c(batch * H), hprev(batch * H);
    std::vector<float> gates(4 * H);  // One batch row's gates, activated in place.
    for (int d = 0; d < num_dirs_; ++d) {
      const bool reverse = reverse_only_ || d == 1;
      const float* wd = w.data<float>() + d * G * H * input;
      const float* rd = r.data<float>() + d * G * H * H;
      const float* wb = b ? b->data<float>() + d * 2 * G * H : nullptr;
      const float* rb = b ? wb + G * H : nullptr;
      const float* pd = p ? p->data<float>() + d * 3 * H : nullptr;
      const Activation& f = activations_[d * per_dir];
      const Activation& g = activations_[d * per_dir + (per_dir > 1 ? 1 : 0)];
      const Activation& hact = activations_[d * per_dir + (per_dir > 2 ? 2 : 0)];
      // Input projections of every step at once: [seq*batch, input] x [input, G*H].
      if (seq_len * batch > 0) {
        GemmRowMajor<float>(false, true, seq_len * batch, G * H, input, 1.0f, xs.data(), input, wd, input, 0.0f,
                            xw.data(), G * H, ctx->intra_op_threads());
      }
      for (int64_t bi = 0; bi < batch; ++bi) {
        for (int64_t k = 0; k < H; ++k) {
          h[bi * H + k] = h0 ? init_at(h0, d, bi)[k] : 0.0f;
          c[bi * H + k] = c0 ? init_at(c0, d, bi)[k] : 0.0f;
        }
      }
      auto clip = [this](float v) { return clip_ > 0 ? std::max(-clip_, std::min(clip_, v)) : v; };
      // The recurrent product of every step: R reordered once for oneDNN's matmul, or a GEMM.
      std::shared_ptr<const DnnlConstMatmul::Prepared> prepared =
          batch > 0 ? recurrent_.Prepare(batch, G * H, H, r, rd, ctx->intra_op_threads()) : nullptr;
      std::optional<DnnlConstMatmul::Call> recurrent;
      if (prepared) recurrent.emplace(*prepared);
      for (int64_t step = 0; step < seq_len; ++step) {
        hprev = h;
        if (!recurrent || !recurrent->Run(hprev.data(), hr.data())) {
          GemmRowMajor<float>(false, true, batch, G * H, H, 1.0f, hprev.data(), H, rd, H, 0.0f, hr.data(), G * H,
                              ctx->intra_op_threads());
        }
        for (int64_t bi = 0; bi < batch; ++bi) {
          if (step >= lens[bi]) continue;  // Past this sequence's end: state and output stay.
          const int64_t t = reverse ? lens[bi] - 1 - step : step;
          const float* xg = xw.data() + (t * batch + bi) * G * H;
          const float* hg = hr.data() + bi * G * H;
          float* hb = h.data() + bi * H;
          float* cb = c.data() + bi * H;
          const float* hp = hprev.data() + bi * H;
          // Gate i's pre-activation at k: input and recurrent projections plus both biases.
          auto gate = [&](int i, int64_t k) {
            float v = xg[i * H + k] + hg[i * H + k];
            if (wb) v += wb[i * H + k] + rb[i * H + k];
            return v;
          };
          // Each gate is computed for all k, then activated as a whole (vectorized).
          float* g0 = gates.data();
          float* g1 = g0 + H;
          float* g2 = g1 + H;
          float* g3 = g2 + H;
          if constexpr (kCell == Cell::kRnn) {
            for (int64_t k = 0; k < H; ++k) hb[k] = clip(gate(0, k));
            f.Apply(hb, H);
          } else if constexpr (kCell == Cell::kGru) {
            // Gates z, r, h: h_new = (1 - z) h~ + z h_prev.
            for (int64_t k = 0; k < H; ++k) {
              g0[k] = clip(gate(0, k));
              g1[k] = clip(gate(1, k));
            }
            f.Apply(g0, H);
            f.Apply(g1, H);
            if (linear_before_reset_) {
              // h~ = g(x W_h + b_wh + r . (h_prev R_h + b_rh)).
              for (int64_t k = 0; k < H; ++k) {
                const float rh = hg[2 * H + k] + (rb ? rb[2 * H + k] : 0.0f);
                g2[k] = clip(xg[2 * H + k] + (wb ? wb[2 * H + k] : 0.0f) + g1[k] * rh);
              }
            } else {
              // h~ = g(x W_h + (r . h_prev) R_h + b_wh + b_rh).
              for (int64_t k = 0; k < H; ++k) g3[k] = g1[k] * hp[k];
              for (int64_t k = 0; k < H; ++k) {
                float acc = 0;
                const float* rrow = rd + (2 * H + k) * H;
                for (int64_t j = 0; j < H; ++j) acc += g3[j] * rrow[j];
                g2[k] = clip(xg[2 * H + k] + acc + (wb ? wb[2 * H + k] + rb[2 * H + k] : 0.0f));
              }
            }
            g.Apply(g2, H);
            for (int64_t k = 0; k < H; ++k) hb[k] = (1 - g0[k]) * g2[k] + g0[k] * hp[k];
          } else {
            // Gates i, o, f, c; peepholes i, o, f.
            for (int64_t k = 0; k < H; ++k) {
              g0[k] = clip(gate(0, k) + (pd ? pd[k] * cb[k] : 0.0f));
              g2[k] = clip(gate(2, k) + (pd ? pd[2 * H + k] * cb[k] : 0.0f));
              g3[k] = clip(gate(3, k));
            }
            f.Apply(g0, H);
            if (input_forget_) {
              for (int64_t k = 0; k < H; ++k) g2[k] = 1.0f - g0[k];
            } else {
              f.Apply(g2, H);
            }
            g.Apply(g3, H);
            for (int64_t k = 0; k < H; ++k) {
              cb[k] = g2[k] * cb[k] + g0[k] * g3[k];
              g1[k] = clip(gate(1, k) + (pd ? pd[H + k] * cb[k] : 0.0f));
            }
            f.Apply(g1, H);
            std::copy(cb, cb + H, g3);
            hact.Apply(g3, H);
            for (int64_t k = 0; k < H; ++k) hb[k] = g1[k] * g3[k];
          }
          std::copy(hb, hb + H, y_at(t, d, bi));
        }
      }
      for (int64_t bi = 0; bi < batch; ++bi) {
        std::copy(h.data() + bi * H, h.data() + (bi + 1) * H, state_at(yh, d, bi));
        if (yc) std::copy(c.data() + bi * H, c.data() + (bi + 1) * H, state_at(yc, d, bi));
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<Activation> activations_;
  bool default_activations_ = false;
  DnnlRnn dnnl_;  // The fast path's primitives and prepared weights.
  FastLstm fast_lstm_;  // LSTM's fast path where the CPU has AVX2 (lstm_fast.h).
  DnnlConstMatmul recurrent_;  // The general path's recurrent products, R prepared per direction.
  float clip_ = 0;
  int64_t hidden_ = 0, layout_ = 0, linear_before_reset_ = 0, input_forget_ = 0;
  int num_dirs_ = 1;
  bool reverse_only_ = false;
  bool has_b_ = false, has_seq_ = false, has_h0_ = false, has_c0_ = false, has_p_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>RNN").Device(DEVICE_CPU).TypeConstraint<float>("T"), RecurrentOp<Cell::kRnn>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GRU").Device(DEVICE_CPU).TypeConstraint<float>("T"), RecurrentOp<Cell::kGru>);
REGISTER_KERNEL_BUILDER(Name("Onnx>LSTM").Device(DEVICE_CPU).TypeConstraint<float>("T"), RecurrentOp<Cell::kLstm>);

}  // namespace
}  // namespace sluice
