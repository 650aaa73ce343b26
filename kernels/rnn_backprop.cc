#include "kernels/rnn_backprop.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/status.h"
#include "kernels/blas.h"
#include "kernels/fast_math.h"

namespace sluice {
namespace {

template <typename T>
void Sigmoid(T* v, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    SigmoidInPlace(v, n);
  } else {
    for (int64_t i = 0; i < n; ++i) v[i] = T(1) / (T(1) + std::exp(-v[i]));
  }
}

template <typename T>
void Tanh(T* v, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    TanhInPlace(v, n);
  } else {
    for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
  }
}

// C = op(A) op(B) (+ C when accumulate); nothing to multiply when a dim is 0 (C then stays,
// and the callers zero their outputs first).
template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          bool accumulate, T* c, int64_t ldc, int threads) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  GemmRowMajor<T>(ta, tb, m, n, k, T(1), a, lda, b, ldb, accumulate ? T(1) : T(0), c, ldc, threads);
}

template <typename T>
void Zero(Tensor* t) {
  if (t != nullptr) std::fill(t->data<T>(), t->data<T>() + t->NumElements(), T(0));
}

// One direction of one node: the forward pass with its tape, then the backward pass. Rows of
// the tape are X's rows (t, b), in X's order, so that the products with X and dX over all
// steps are single GEMMs in either layout; rows past a sequence's end stay zero.
template <typename T>
class Direction {
 public:
  Direction(const RnnSpec& spec, const RnnInputs& in, const RnnDims& dims, const std::vector<int64_t>& lens, int d,
            int threads)
      : s_(spec), lens_(lens), d_(d), threads_(threads), seq_(dims.seq), n_(dims.batch), in_(dims.input),
        h_(spec.hidden), g_(dims.gates), gh_(dims.gates * spec.hidden), rows_(dims.seq * dims.batch) {
    reverse_ = spec.reverse_only || d == 1;
    x_ = in.x->data<T>();
    w_ = in.w->data<T>() + d * gh_ * in_;
    r_ = in.r->data<T>() + d * gh_ * h_;
    if (in.b != nullptr) {
      wb_ = in.b->data<T>() + d * 2 * gh_;
      rb_ = wb_ + gh_;
    }
    if (in.p != nullptr) p_ = in.p->data<T>() + d * 3 * h_;
    h0_ = in.h0 != nullptr ? in.h0->data<T>() : nullptr;
    c0_ = in.c0 != nullptr ? in.c0->data<T>() : nullptr;
  }

  // Runs the recurrence, keeping the tape; writes this direction's part of Y, Y_h and Y_c
  // where given (null: not wanted).
  void Forward(T* y, T* yh, T* yc);
  // From this direction's part of dY, dY_h and dY_c (dyc null: zeros), accumulates dX and
  // writes this direction's parts of the other gradients.
  void Backward(const T* dy, const T* dyh, const T* dyc, const RnnGrads& grads);

 private:
  int64_t Row(int64_t t, int64_t b) const { return s_.layout == 0 ? t * n_ + b : b * seq_ + t; }
  int64_t YOffset(int64_t t, int64_t b) const {
    const int64_t dirs = s_.num_dirs;
    return (s_.layout == 0 ? (t * dirs + d_) * n_ + b : (b * seq_ + t) * dirs + d_) * h_;
  }
  int64_t StateOffset(int64_t b) const {
    return (s_.layout == 0 ? d_ * n_ + b : b * s_.num_dirs + d_) * h_;
  }
  // The time step processed at step `step` for batch entry b; -1 past its sequence's end.
  int64_t TimeAt(int64_t step, int64_t b) const {
    if (step >= lens_[b]) return -1;
    return reverse_ ? lens_[b] - 1 - step : step;
  }
  T Wb(int64_t j) const { return wb_ != nullptr ? wb_[j] : T(0); }
  T Rb(int64_t j) const { return rb_ != nullptr ? rb_[j] : T(0); }
  T Peep(int gate, int64_t k) const { return p_ != nullptr ? p_[gate * h_ + k] : T(0); }

  const RnnSpec& s_;
  const std::vector<int64_t>& lens_;
  const int d_, threads_;
  const int64_t seq_, n_, in_, h_, g_, gh_, rows_;
  bool reverse_ = false;
  const T *x_ = nullptr, *w_ = nullptr, *r_ = nullptr, *wb_ = nullptr, *rb_ = nullptr, *p_ = nullptr;
  const T *h0_ = nullptr, *c0_ = nullptr;

  // The tape, [rows, G H] and [rows, H]: the activated gates; the state each step started
  // from; for LSTM the cell state it produced; for GRU r . h_prev (whose product with R_h
  // the candidate takes) or, with linear_before_reset, h_prev R_h^T + Rb_h.
  std::vector<T> gates_, h_prev_, c_prev_, cell_, gru_extra_;
};

template <typename T>
void Direction<T>::Forward(T* y, T* yh, T* yc) {
  const int64_t H = h_, GH = gh_;
  const bool lstm = s_.cell == RnnCell::kLstm, gru = s_.cell == RnnCell::kGru;
  gates_.assign(rows_ * GH, T(0));
  h_prev_.assign(rows_ * H, T(0));
  if (lstm) {
    c_prev_.assign(rows_ * H, T(0));
    cell_.assign(rows_ * H, T(0));
  }
  if (gru) gru_extra_.assign(rows_ * H, T(0));
  // Input projections of every step at once.
  Gemm<T>(false, true, rows_, GH, in_, x_, in_, w_, in_, false, gates_.data(), GH, threads_);
  std::vector<T> h(n_ * H, T(0)), c(n_ * H, T(0)), hr(n_ * GH), rh(gru ? n_ * H : 0, T(0)), rhr(rh.size()),
      tanh_c(H);
  for (int64_t b = 0; b < n_; ++b) {
    for (int64_t k = 0; k < H; ++k) {
      if (h0_) h[b * H + k] = h0_[StateOffset(b) + k];
      if (c0_) c[b * H + k] = c0_[StateOffset(b) + k];
    }
  }
  for (int64_t step = 0; step < seq_; ++step) {
    Gemm<T>(false, true, n_, GH, H, h.data(), H, r_, H, false, hr.data(), GH, threads_);
    // First pass: every gate that needs only the projections.
    for (int64_t b = 0; b < n_; ++b) {
      const int64_t t = TimeAt(step, b);
      if (t < 0) continue;
      const int64_t row = Row(t, b);
      T* g = gates_.data() + row * GH;
      const T* q = hr.data() + b * GH;
      T* hb = h.data() + b * H;
      std::copy(hb, hb + H, h_prev_.data() + row * H);
      if (s_.cell == RnnCell::kRnn) {
        for (int64_t k = 0; k < H; ++k) g[k] += q[k] + Wb(k) + Rb(k);
        Tanh(g, H);
        std::copy(g, g + H, hb);
      } else if (gru) {
        for (int64_t k = 0; k < 2 * H; ++k) g[k] += q[k] + Wb(k) + Rb(k);
        Sigmoid(g, 2 * H);
        T* extra = gru_extra_.data() + row * H;
        if (s_.linear_before_reset) {
          for (int64_t k = 0; k < H; ++k) {
            extra[k] = q[2 * H + k] + Rb(2 * H + k);
            g[2 * H + k] += Wb(2 * H + k) + g[H + k] * extra[k];
          }
        } else {
          for (int64_t k = 0; k < H; ++k) extra[k] = rh[b * H + k] = g[H + k] * hb[k];
        }
      } else {
        T* cb = c.data() + b * H;
        std::copy(cb, cb + H, c_prev_.data() + row * H);
        for (int64_t k = 0; k < H; ++k) {
          g[k] += q[k] + Wb(k) + Rb(k) + Peep(0, k) * cb[k];
          g[2 * H + k] += q[2 * H + k] + Wb(2 * H + k) + Rb(2 * H + k) + Peep(2, k) * cb[k];
          g[3 * H + k] += q[3 * H + k] + Wb(3 * H + k) + Rb(3 * H + k);
        }
        Sigmoid(g, H);
        if (s_.input_forget) {
          for (int64_t k = 0; k < H; ++k) g[2 * H + k] = T(1) - g[k];
        } else {
          Sigmoid(g + 2 * H, H);
        }
        Tanh(g + 3 * H, H);
        for (int64_t k = 0; k < H; ++k) {
          cb[k] = g[2 * H + k] * cb[k] + g[k] * g[3 * H + k];
          g[H + k] += q[H + k] + Wb(H + k) + Rb(H + k) + Peep(1, k) * cb[k];
        }
        std::copy(cb, cb + H, cell_.data() + row * H);
        Sigmoid(g + H, H);
        std::copy(cb, cb + H, tanh_c.data());
        Tanh(tanh_c.data(), H);
        for (int64_t k = 0; k < H; ++k) hb[k] = g[H + k] * tanh_c[k];
      }
    }
    // GRU: the candidate, from (r . h_prev) R_h^T of the whole batch.
    if (gru) {
      if (!s_.linear_before_reset) {
        Gemm<T>(false, true, n_, H, H, rh.data(), H, r_ + 2 * H * H, H, false, rhr.data(), H, threads_);
      }
      for (int64_t b = 0; b < n_; ++b) {
        const int64_t t = TimeAt(step, b);
        if (t < 0) continue;
        T* g = gates_.data() + Row(t, b) * GH;
        if (!s_.linear_before_reset) {
          for (int64_t k = 0; k < H; ++k) g[2 * H + k] += rhr[b * H + k] + Wb(2 * H + k) + Rb(2 * H + k);
        }
        Tanh(g + 2 * H, H);
        T* hb = h.data() + b * H;
        for (int64_t k = 0; k < H; ++k) hb[k] = (T(1) - g[k]) * g[2 * H + k] + g[k] * hb[k];
      }
    }
    if (y != nullptr) {
      for (int64_t b = 0; b < n_; ++b) {
        const int64_t t = TimeAt(step, b);
        if (t >= 0) std::copy(h.data() + b * H, h.data() + (b + 1) * H, y + YOffset(t, b));
      }
    }
  }
  for (int64_t b = 0; b < n_; ++b) {
    if (yh) std::copy(h.data() + b * H, h.data() + (b + 1) * H, yh + StateOffset(b));
    if (yc) std::copy(c.data() + b * H, c.data() + (b + 1) * H, yc + StateOffset(b));
  }
}

template <typename T>
void Direction<T>::Backward(const T* dy, const T* dyh, const T* dyc, const RnnGrads& grads) {
  const int64_t H = h_, GH = gh_;
  const bool lstm = s_.cell == RnnCell::kLstm, gru = s_.cell == RnnCell::kGru;
  const bool gru_plain = gru && !s_.linear_before_reset;
  // Gradients of the gates' pre-activations, per tape row: through the input projection (dA)
  // and through the recurrent one (dB; differs from dA only in GRU's candidate).
  std::vector<T> da(rows_ * GH, T(0)), db_store(gru ? rows_ * GH : 0, T(0));
  std::vector<T>& db = gru ? db_store : da;
  std::vector<T> dh(n_ * H), dc(n_ * H, T(0)), dstep(n_ * GH), dnext(n_ * H), direct(n_ * H), drh(gru ? n_ * H : 0),
      dht(H), tanh_c(H), dp(lstm ? 3 * H : 0, T(0));
  for (int64_t b = 0; b < n_; ++b) {
    std::copy(dyh + StateOffset(b), dyh + StateOffset(b) + H, dh.data() + b * H);
    if (dyc) std::copy(dyc + StateOffset(b), dyc + StateOffset(b) + H, dc.data() + b * H);
  }
  for (int64_t step = seq_; step-- > 0;) {
    std::fill(dstep.begin(), dstep.end(), T(0));
    std::fill(direct.begin(), direct.end(), T(0));
    for (int64_t b = 0; b < n_; ++b) {
      const int64_t t = TimeAt(step, b);
      if (t < 0) continue;  // Past its end: the state, and its gradient, pass unchanged.
      const int64_t row = Row(t, b);
      const T* g = gates_.data() + row * GH;
      T* ds = dstep.data() + b * GH;
      const T* dyt = dy + YOffset(t, b);
      for (int64_t k = 0; k < H; ++k) dht[k] = dh[b * H + k] + dyt[k];
      if (s_.cell == RnnCell::kRnn) {
        for (int64_t k = 0; k < H; ++k) ds[k] = dht[k] * (T(1) - g[k] * g[k]);
      } else if (gru) {
        const T* hp = h_prev_.data() + row * H;
        const T* extra = gru_extra_.data() + row * H;
        T* dir = direct.data() + b * H;
        for (int64_t k = 0; k < H; ++k) {
          const T z = g[k], r = g[H + k], cand = g[2 * H + k];
          ds[k] = dht[k] * (hp[k] - cand) * z * (T(1) - z);
          const T dcand = dht[k] * (T(1) - z) * (T(1) - cand * cand);
          dir[k] = dht[k] * z;
          da[row * GH + 2 * H + k] = dcand;
          if (s_.linear_before_reset) {
            // cand = g(x W_h + Wb_h + r . extra): extra gets dcand . r, r gets dcand . extra.
            ds[2 * H + k] = dcand * r;
            ds[H + k] = dcand * extra[k] * r * (T(1) - r);
          } else {
            ds[2 * H + k] = dcand;  // Against r . h_prev; r's part waits for the product with R_h.
          }
        }
      } else {
        const T* cur = cell_.data() + row * H;
        const T* prev = c_prev_.data() + row * H;
        std::copy(cur, cur + H, tanh_c.data());
        Tanh(tanh_c.data(), H);
        T* dcb = dc.data() + b * H;
        for (int64_t k = 0; k < H; ++k) {
          const T i = g[k], o = g[H + k], f = g[2 * H + k], cand = g[3 * H + k], tc = tanh_c[k];
          const T dout = dht[k] * tc * o * (T(1) - o);
          const T dcell = dcb[k] + dht[k] * o * (T(1) - tc * tc) + Peep(1, k) * dout;
          const T dcand = dcell * i * (T(1) - cand * cand);
          // With input_forget f = 1 - i: f's own gate gets nothing, i gets -dcell c_prev too.
          const T dforget = s_.input_forget ? T(0) : dcell * prev[k] * f * (T(1) - f);
          const T din = (s_.input_forget ? dcell * (cand - prev[k]) : dcell * cand) * i * (T(1) - i);
          dcb[k] = dcell * f + Peep(0, k) * din + Peep(2, k) * dforget;
          ds[k] = din;
          ds[H + k] = dout;
          ds[2 * H + k] = dforget;
          ds[3 * H + k] = dcand;
          if (p_ != nullptr) {
            dp[k] += din * prev[k];
            dp[H + k] += dout * cur[k];
            dp[2 * H + k] += dforget * prev[k];
          }
        }
      }
    }
    if (gru_plain) {
      // d(r . h_prev) = dcand R_h; then r's gate and h_prev's share of it.
      Gemm<T>(false, false, n_, H, H, dstep.data() + 2 * H, GH, r_ + 2 * H * H, H, false, drh.data(), H, threads_);
      for (int64_t b = 0; b < n_; ++b) {
        const int64_t t = TimeAt(step, b);
        if (t < 0) continue;
        const int64_t row = Row(t, b);
        const T* g = gates_.data() + row * GH;
        const T* hp = h_prev_.data() + row * H;
        for (int64_t k = 0; k < H; ++k) {
          const T r = g[H + k], d_rh = drh[b * H + k];
          dstep[b * GH + H + k] = d_rh * hp[k] * r * (T(1) - r);
          direct[b * H + k] += d_rh * r;
        }
      }
      Gemm<T>(false, false, n_, H, 2 * H, dstep.data(), GH, r_, H, false, dnext.data(), H, threads_);
    } else {
      Gemm<T>(false, false, n_, H, GH, dstep.data(), GH, r_, H, false, dnext.data(), H, threads_);
    }
    for (int64_t b = 0; b < n_; ++b) {
      const int64_t t = TimeAt(step, b);
      if (t < 0) continue;
      const int64_t row = Row(t, b);
      for (int64_t k = 0; k < H; ++k) dh[b * H + k] = dnext[b * H + k] + direct[b * H + k];
      const T* ds = dstep.data() + b * GH;
      std::copy(ds, ds + GH, db.data() + row * GH);
      if (gru) std::copy(ds, ds + 2 * H, da.data() + row * GH);  // The candidate's is already there.
    }
  }
  for (int64_t b = 0; b < n_; ++b) {
    std::copy(dh.data() + b * H, dh.data() + (b + 1) * H, grads.dh0->data<T>() + StateOffset(b));
    if (grads.dc0) std::copy(dc.data() + b * H, dc.data() + (b + 1) * H, grads.dc0->data<T>() + StateOffset(b));
  }
  // The weights' gradients over all steps at once.
  Gemm<T>(false, false, rows_, in_, GH, da.data(), GH, w_, in_, true, grads.dx->data<T>(), in_, threads_);
  Gemm<T>(true, false, GH, in_, rows_, da.data(), GH, x_, in_, false, grads.dw->data<T>() + d_ * GH * in_, in_,
          threads_);
  T* dr = grads.dr->data<T>() + d_ * GH * H;
  if (gru_plain) {
    Gemm<T>(true, false, 2 * H, H, rows_, db.data(), GH, h_prev_.data(), H, false, dr, H, threads_);
    Gemm<T>(true, false, H, H, rows_, db.data() + 2 * H, GH, gru_extra_.data(), H, false, dr + 2 * H * H, H,
            threads_);
  } else {
    Gemm<T>(true, false, GH, H, rows_, db.data(), GH, h_prev_.data(), H, false, dr, H, threads_);
  }
  T* dwb = grads.db->data<T>() + d_ * 2 * GH;
  T* drb = dwb + GH;
  for (int64_t row = 0; row < rows_; ++row) {
    for (int64_t j = 0; j < GH; ++j) {
      dwb[j] += da[row * GH + j];
      drb[j] += db[row * GH + j];
    }
  }
  if (grads.dp) std::copy(dp.begin(), dp.end(), grads.dp->data<T>() + d_ * 3 * H);
}

template <typename T>
const T* DataOrNull(const Tensor* t) {
  return t != nullptr ? t->data<T>() : nullptr;
}

template <typename T>
T* DataOrNull(Tensor* t) {
  return t != nullptr ? t->data<T>() : nullptr;
}

}  // namespace

absl::StatusOr<RnnDims> CheckRnnInputs(const RnnSpec& spec, const RnnInputs& in, std::vector<int64_t>* lens) {
  const Tensor& x = *in.x;
  if (x.dims() != 3) return absl::InvalidArgumentError(absl::StrCat("X must be 3-D, got ", x.shape().DebugString()));
  RnnDims dims;
  dims.seq = spec.layout == 0 ? x.dim_size(0) : x.dim_size(1);
  dims.batch = spec.layout == 0 ? x.dim_size(1) : x.dim_size(0);
  dims.input = x.dim_size(2);
  dims.gates = spec.cell == RnnCell::kRnn ? 1 : spec.cell == RnnCell::kGru ? 3 : 4;
  const int64_t H = spec.hidden, D = spec.num_dirs;
  // hidden_size is an attribute and batch a dim of an X that may be empty: every size the
  // passes allocate is checked (the tape holds G H + 4 H values per row of X).
  int64_t gh, four_h, per_row, rows, tape, bh, dbh, ydims, dgh, wsize, rsize;
  if (!CheckedMul(dims.gates, H, &gh) || !CheckedMul(int64_t{4}, H, &four_h) || !CheckedAdd(gh, four_h, &per_row) ||
      !CheckedMul(dims.seq, dims.batch, &rows) || !CheckedMul(rows, per_row, &tape) ||
      !CheckedMul(dims.batch, H, &bh) || !CheckedMul(D, bh, &dbh) || !CheckedMul(dims.seq, dbh, &ydims) ||
      !CheckedMul(D, gh, &dgh) || !CheckedMul(dgh, dims.input, &wsize) || !CheckedMul(dgh, H, &rsize)) {
    return absl::InvalidArgumentError(absl::StrCat("hidden_size ", H, " with X of shape ", x.shape().DebugString(),
                                                   ": the state, output and gate sizes overflow"));
  }
  SL_RETURN_IF_ERROR(TensorBytes(DT_DOUBLE, tape, "the gates of every step").status());
  SL_RETURN_IF_ERROR(TensorBytes(DT_DOUBLE, ydims, "output Y").status());
  if (in.w->shape() != TensorShape({D, gh, dims.input})) {
    return absl::InvalidArgumentError(
        absl::StrCat("W must be [", D, ",", gh, ",", dims.input, "], got ", in.w->shape().DebugString()));
  }
  if (in.r->shape() != TensorShape({D, gh, H})) {
    return absl::InvalidArgumentError(absl::StrCat("R must be [", D, ",", gh, ",", H, "], got ", in.r->shape().DebugString()));
  }
  if (in.b && in.b->NumElements() != D * 2 * gh) return absl::InvalidArgumentError("B has the wrong size");
  if (in.h0 && in.h0->NumElements() != dbh) return absl::InvalidArgumentError("initial_h has the wrong size");
  if (in.c0 && in.c0->NumElements() != dbh) return absl::InvalidArgumentError("initial_c has the wrong size");
  if (in.p && in.p->NumElements() != D * 3 * H) return absl::InvalidArgumentError("P has the wrong size");
  lens->assign(dims.batch, dims.seq);
  if (in.seq) {
    if (in.seq->NumElements() != dims.batch) {
      return absl::InvalidArgumentError("sequence_lens needs one value per batch entry");
    }
    for (int64_t i = 0; i < dims.batch; ++i) {
      (*lens)[i] = in.seq->dtype() == DT_INT64 ? in.seq->flat<int64_t>()[i] : in.seq->flat<int32_t>()[i];
      if ((*lens)[i] < 0 || (*lens)[i] > dims.seq) return absl::InvalidArgumentError("sequence_lens out of range");
    }
  }
  return dims;
}

TensorShape RnnYShape(const RnnSpec& spec, const RnnDims& dims) {
  return spec.layout == 0 ? TensorShape({dims.seq, spec.num_dirs, dims.batch, spec.hidden})
                          : TensorShape({dims.batch, dims.seq, spec.num_dirs, spec.hidden});
}

TensorShape RnnStateShape(const RnnSpec& spec, const RnnDims& dims) {
  return spec.layout == 0 ? TensorShape({spec.num_dirs, dims.batch, spec.hidden})
                          : TensorShape({dims.batch, spec.num_dirs, spec.hidden});
}

template <typename T>
void RnnForward(const RnnSpec& spec, const RnnInputs& in, const RnnDims& dims, const std::vector<int64_t>& lens,
                const RnnOutputs& out, int threads) {
  Zero<T>(out.y);  // Past a sequence's end Y is 0.
  for (int d = 0; d < spec.num_dirs; ++d) {
    Direction<T>(spec, in, dims, lens, d, threads).Forward(DataOrNull<T>(out.y), DataOrNull<T>(out.yh),
                                                           DataOrNull<T>(out.yc));
  }
}

template <typename T>
void RnnBackward(const RnnSpec& spec, const RnnInputs& in, const RnnDims& dims, const std::vector<int64_t>& lens,
                 const Tensor& dy, const Tensor& dyh, const Tensor* dyc, const RnnGrads& grads, int threads) {
  for (Tensor* t : {grads.dx, grads.dw, grads.dr, grads.db, grads.dh0, grads.dc0, grads.dp}) Zero<T>(t);
  for (int d = 0; d < spec.num_dirs; ++d) {
    Direction<T> dir(spec, in, dims, lens, d, threads);
    dir.Forward(nullptr, nullptr, nullptr);
    dir.Backward(dy.data<T>(), dyh.data<T>(), DataOrNull<T>(dyc), grads);
  }
}

template void RnnForward<float>(const RnnSpec&, const RnnInputs&, const RnnDims&, const std::vector<int64_t>&,
                                const RnnOutputs&, int);
template void RnnForward<double>(const RnnSpec&, const RnnInputs&, const RnnDims&, const std::vector<int64_t>&,
                                 const RnnOutputs&, int);
template void RnnBackward<float>(const RnnSpec&, const RnnInputs&, const RnnDims&, const std::vector<int64_t>&,
                                 const Tensor&, const Tensor&, const Tensor*, const RnnGrads&, int);
template void RnnBackward<double>(const RnnSpec&, const RnnInputs&, const RnnDims&, const std::vector<int64_t>&,
                                  const Tensor&, const Tensor&, const Tensor*, const RnnGrads&, int);

}  // namespace sluice
