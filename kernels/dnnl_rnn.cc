#include "kernels/dnnl_rnn.h"

#include <algorithm>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/dnnl_util.h"
#include "kernels/threading.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

struct DnnlRnn::Impl {
  struct Entry {
    std::vector<int64_t> key;  // The problem and which optional inputs it has.
    // The buffers the weights and biases were prepared from. Holding them keeps their addresses
    // from being reused for other values, so the same buffers mean the same values.
    std::shared_ptr<TensorBuffer> w_buffer, r_buffer, b_buffer;
    // Empty when oneDNN refused the problem (it is not asked again).
    std::optional<dnnl::primitive> prim;
    memory::desc scratchpad, weights_layer_md, weights_iter_md, bias_md;
    memory weights_layer, weights_iter, bias;  // In the primitive's layouts.
  };
  // A few shapes per kernel (sequence lengths and batch sizes vary between runs); the most
  // recently used first. Entries with the same weights in the same layouts share them.
  static constexpr size_t kMaxEntries = 8;
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
};

namespace {

int OnnxGates(DnnlRnnCell cell) { return cell == DnnlRnnCell::kLstm ? 4 : 3; }

// oneDNN's gate k is ONNX's gate GateOf(cell, k): oneDNN's LSTM gates are i, f, c, o where
// ONNX has i, o, f, c; both GRUs have z (oneDNN's u), r, h in the same order.
int GateOf(DnnlRnnCell cell, int k) {
  static constexpr int kLstm[4] = {0, 2, 3, 1};
  return cell == DnnlRnnCell::kLstm ? kLstm[k] : k;
}

// W or R ([dirs, G*H, cols], ONNX's gate order) with its gate blocks in oneDNN's order: as
// oneDNN's ldgoi layout of dims {1, dirs, cols, G, H}.
std::vector<float> PermuteGates(DnnlRnnCell cell, const float* src, int dirs, int64_t hidden, int64_t cols) {
  const int gates = OnnxGates(cell);
  const int64_t block = hidden * cols;
  std::vector<float> out(static_cast<size_t>(dirs) * gates * block);
  for (int d = 0; d < dirs; ++d) {
    for (int k = 0; k < gates; ++k) {
      const float* from = src + (int64_t{d} * gates + GateOf(cell, k)) * block;
      std::copy(from, from + block, out.data() + (int64_t{d} * gates + k) * block);
    }
  }
  return out;
}

// oneDNN's bias (ldgo, {1, dirs, G, H}; G + 1 gates for linear-before-reset GRU) from ONNX's B
// ([dirs, 2*G*H]: the input biases, then the recurrent ones), or zeros without B. oneDNN adds
// one bias per gate where ONNX adds two, except the lbr GRU's candidate gate, whose recurrent
// bias is inside the reset product: oneDNN's extra fourth gate.
std::vector<float> Bias(DnnlRnnCell cell, const float* b, int dirs, int64_t hidden) {
  const int gates = OnnxGates(cell);
  const int out_gates = cell == DnnlRnnCell::kLbrGru ? 4 : gates;
  std::vector<float> out(static_cast<size_t>(dirs) * out_gates * hidden, 0.0f);
  if (b == nullptr) return out;
  for (int d = 0; d < dirs; ++d) {
    const float* wb = b + int64_t{d} * 2 * gates * hidden;
    const float* rb = wb + gates * hidden;
    float* o = out.data() + int64_t{d} * out_gates * hidden;
    for (int k = 0; k < gates; ++k) {
      const int64_t g = GateOf(cell, k) * hidden;
      const bool split = cell == DnnlRnnCell::kLbrGru && k == 2;
      for (int64_t j = 0; j < hidden; ++j) o[k * hidden + j] = wb[g + j] + (split ? 0.0f : rb[g + j]);
    }
    if (cell == DnnlRnnCell::kLbrGru) std::copy(rb + 2 * hidden, rb + 3 * hidden, o + 3 * hidden);
  }
  return out;
}

// [a, b, H] blocks to [b, a, H].
void SwapOuter(const float* src, int64_t a, int64_t b, int64_t hidden, float* dst) {
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      const float* from = src + (i * b + j) * hidden;
      std::copy(from, from + hidden, dst + (j * a + i) * hidden);
    }
  }
}

}  // namespace

DnnlRnn::DnnlRnn() : impl_(std::make_unique<Impl>()) {}
DnnlRnn::~DnnlRnn() = default;

absl::StatusOr<bool> DnnlRnn::Run(const DnnlRnnProblem& p, const Tensor& x, const Tensor& w, const Tensor& r,
                                  const Tensor* b, const Tensor* h0, const Tensor* c0, int threads, Tensor* y,
                                  Tensor* yh, Tensor* yc) const {
  if (p.seq_len <= 0 || p.batch <= 0 || p.input <= 0 || p.hidden <= 0 || x.dtype() != DT_FLOAT) return false;
  const bool lstm = p.cell == DnnlRnnCell::kLstm;
  const int64_t D = p.num_dirs, T = p.seq_len, N = p.batch, I = p.input, H = p.hidden;
  const std::vector<int64_t> key = {static_cast<int64_t>(p.cell), D, p.reverse, p.batch_major, T, N, I, H,
                                    h0 != nullptr, lstm && c0 != nullptr};
  std::shared_ptr<Impl::Entry> entry, stale;  // stale: the same problem, other weights.
  {
    absl::MutexLock lock(&impl_->mu);
    entry = FindPreparedEntry(
        &impl_->entries, [&](const Impl::Entry& e) { return e.key == key; },
        [&](const Impl::Entry& e) {
          return e.w_buffer == w.buffer() && e.r_buffer == r.buffer() && e.b_buffer == (b ? b->buffer() : nullptr);
        },
        &stale);
  }
  dnnl::engine& eng = DnnlEngine();
  // One stream per thread: creating one per call costs as much as a short sequence.
  thread_local dnnl::stream stream(eng);
  const double gates = lstm ? 4 : 3;
  UseOmpThreads(ThreadsForWork(static_cast<double>(D * T * N) * gates * static_cast<double>(H * (I + H)), threads));
  const tag layer_tag = p.batch_major ? tag::ntc : tag::tnc;
  const memory::data_type f32 = memory::data_type::f32;
  const memory::desc src_layer_md({T, N, I}, f32, layer_tag);
  const memory::desc dst_layer_md({T, N, D * H}, f32, layer_tag);
  const memory::desc state_md({1, D, N, H}, f32, tag::ldnc);
  const memory::desc src_iter_md = h0 ? state_md : memory::desc();
  const memory::desc src_iter_c_md = lstm && c0 ? state_md : memory::desc();
  if (entry == nullptr) {
    // A new entry; for new weights in a known problem, its primitive is kept (making one costs
    // far more than preparing the weights).
    auto e = stale ? std::make_shared<Impl::Entry>(*stale) : std::make_shared<Impl::Entry>();
    e->key = key;
    e->w_buffer = w.buffer();
    e->r_buffer = r.buffer();
    e->b_buffer = b ? b->buffer() : nullptr;
    const int64_t G = OnnxGates(p.cell);
    try {
      if (stale == nullptr) {
        const dnnl::rnn_direction direction = D == 2      ? dnnl::rnn_direction::bidirectional_concat
                                              : p.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                                          : dnnl::rnn_direction::unidirectional_left2right;
        const memory::desc any_wl({1, D, I, G, H}, f32, tag::any), any_wi({1, D, H, G, H}, f32, tag::any);
        e->bias_md = memory::desc({1, D, p.cell == DnnlRnnCell::kLbrGru ? 4 : G, H}, f32, tag::ldgo);
        const auto inference = dnnl::prop_kind::forward_inference;
        const dnnl::primitive_attr attr = DnnlUserScratchpad();
        // The primitive and the layouts it wants its weights in.
        auto make = [&](const auto& pd) {
          e->prim = dnnl::primitive(pd);
          e->weights_layer_md = pd.weights_layer_desc();
          e->weights_iter_md = pd.weights_iter_desc();
          e->scratchpad = pd.scratchpad_desc();
        };
        if (lstm) {
          make(dnnl::lstm_forward::primitive_desc(
              dnnl::lstm_forward::desc(inference, direction, src_layer_md, src_iter_md, src_iter_c_md, any_wl, any_wi,
                                       e->bias_md, dst_layer_md, state_md, state_md),
              attr, eng));
        } else if (p.cell == DnnlRnnCell::kGru) {
          make(dnnl::gru_forward::primitive_desc(
              dnnl::gru_forward::desc(inference, direction, src_layer_md, src_iter_md, any_wl, any_wi, e->bias_md,
                                      dst_layer_md, state_md),
              attr, eng));
        } else {
          make(dnnl::lbr_gru_forward::primitive_desc(
              dnnl::lbr_gru_forward::desc(inference, direction, src_layer_md, src_iter_md, any_wl, any_wi, e->bias_md,
                                          dst_layer_md, state_md),
              attr, eng));
        }
      }
      bool shared = false;
      if (e->prim && stale == nullptr) {
        // Another shape's entry may hold these weights in this layout already (the layout
        // depends on the primitive, not on the sequence length or batch).
        absl::MutexLock lock(&impl_->mu);
        for (const auto& other : impl_->entries) {
          if (other->prim && other->w_buffer == e->w_buffer && other->r_buffer == e->r_buffer &&
              other->b_buffer == e->b_buffer && other->weights_layer_md == e->weights_layer_md &&
              other->weights_iter_md == e->weights_iter_md && other->bias_md == e->bias_md) {
            e->weights_layer = other->weights_layer;
            e->weights_iter = other->weights_iter;
            e->bias = other->bias;
            shared = true;
            break;
          }
        }
      }
      if (e->prim && !shared) {
        // The weights and biases: ONNX's layouts (gates permuted) reordered into the
        // primitive's, into new memory (a stale entry's may still be running elsewhere).
        std::vector<float> wl = PermuteGates(p.cell, w.data<float>(), D, H, I);
        std::vector<float> wi = PermuteGates(p.cell, r.data<float>(), D, H, H);
        memory user_wl({{1, D, I, G, H}, f32, tag::ldgoi}, eng, wl.data());
        memory user_wi({{1, D, H, G, H}, f32, tag::ldgoi}, eng, wi.data());
        e->weights_layer = memory(e->weights_layer_md, eng);
        e->weights_iter = memory(e->weights_iter_md, eng);
        dnnl::reorder(user_wl, e->weights_layer).execute(stream, user_wl, e->weights_layer);
        dnnl::reorder(user_wi, e->weights_iter).execute(stream, user_wi, e->weights_iter);
        stream.wait();
        std::vector<float> bias = Bias(p.cell, b ? b->data<float>() : nullptr, D, H);
        e->bias = memory(e->bias_md, eng);
        std::copy(bias.begin(), bias.end(), static_cast<float*>(e->bias.get_data_handle()));
      }
    } catch (const dnnl::error&) {
      e->prim.reset();  // Shapes oneDNN does not take: remembered, and the caller falls back.
    }
    entry = e;
    absl::MutexLock lock(&impl_->mu);
    impl_->entries.push_front(e);
    if (impl_->entries.size() > Impl::kMaxEntries) impl_->entries.pop_back();
  }
  if (!entry->prim) return false;
  // oneDNN's dst_layer is [T, N, D*H] (or [N, T, D*H]): ONNX's Y itself except for a
  // bidirectional time-major Y ([T, D, N, H]), which takes a copy. Its states are
  // [D, N, H]: ONNX's when time-major, else [N, D, H] copies.
  const bool y_direct = D == 1 || p.batch_major;
  const bool states_direct = !p.batch_major || D == 1;
  std::vector<float> y_buf(y_direct ? 0 : T * N * D * H);
  std::vector<float> state_buf(states_direct ? 0 : 4 * D * N * H);
  float* h0_data = h0 ? const_cast<float*>(h0->data<float>()) : nullptr;
  float* c0_data = c0 ? const_cast<float*>(c0->data<float>()) : nullptr;
  float* yh_data = yh->data<float>();
  float* yc_data = yc ? yc->data<float>() : nullptr;
  std::vector<float> yc_unused;
  if (lstm && yc == nullptr) {
    yc_unused.resize(D * N * H);
    yc_data = yc_unused.data();
  }
  if (!states_direct) {
    float* s = state_buf.data();
    const int64_t n = D * N * H;
    if (h0_data) {
      SwapOuter(h0_data, N, D, H, s);
      h0_data = s;
    }
    if (c0_data) {
      SwapOuter(c0_data, N, D, H, s + n);
      c0_data = s + n;
    }
    yh_data = s + 2 * n;
    if (yc_data) yc_data = s + 3 * n;
  }
  try {
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC_LAYER, memory(src_layer_md, eng, const_cast<float*>(x.data<float>()))},
        {DNNL_ARG_WEIGHTS_LAYER, entry->weights_layer},
        {DNNL_ARG_WEIGHTS_ITER, entry->weights_iter},
        {DNNL_ARG_BIAS, entry->bias},
        {DNNL_ARG_DST_LAYER, memory(dst_layer_md, eng, y_direct ? y->data<float>() : y_buf.data())},
        {DNNL_ARG_DST_ITER, memory(state_md, eng, yh_data)}};
    if (h0_data) args[DNNL_ARG_SRC_ITER] = memory(state_md, eng, h0_data);
    if (lstm) {
      if (c0_data) args[DNNL_ARG_SRC_ITER_C] = memory(state_md, eng, c0_data);
      args[DNNL_ARG_DST_ITER_C] = memory(state_md, eng, yc_data);
    }
    DnnlExecute(*entry->prim, entry->scratchpad, stream, std::move(args));
    stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(std::string("oneDNN recurrent primitive failed: ") + e.what());
  }
  if (!y_direct) {
    for (int64_t t = 0; t < T; ++t) SwapOuter(y_buf.data() + t * N * D * H, N, D, H, y->data<float>() + t * D * N * H);
  }
  if (!states_direct) {
    SwapOuter(yh_data, D, N, H, yh->data<float>());
    if (yc) SwapOuter(yc_data, D, N, H, yc->data<float>());
  }
  return true;
}

}  // namespace sluice
