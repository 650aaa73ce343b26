#include "kernels/dnnl_conv_backward.h"

#include <list>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "kernels/dnnl_util.h"
#include "kernels/threading.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

memory::dims Dims(const TensorShape& s) { return memory::dims(s.dim_sizes().begin(), s.dim_sizes().end()); }

// W's dims as oneDNN takes them: [g, O/g, I/g, spatial...] when grouped.
memory::dims WeightDims(const memory::dims& w, int64_t group) {
  if (group == 1) return w;
  memory::dims wd = {group, w[0] / group};
  wd.insert(wd.end(), w.begin() + 1, w.end());
  return wd;
}

tag PlainTag(size_t rank) {
  switch (rank) {
    case 3: return tag::abc;
    case 4: return tag::abcd;
    case 5: return tag::abcde;
    default: return tag::abcdef;
  }
}

memory::desc Plain(const memory::dims& d) { return memory::desc(d, memory::data_type::f32, PlainTag(d.size())); }
memory::desc Any(const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::any); }

}  // namespace

// One prepared gradient. Its operands, by role: `a` and `b` are read (dY and W for data, X and
// dY for weights), `out` is written (dX or dW). Each has the user's plain layout (`*_user`) and
// the primitive's; a reorder runs between them where they differ.
struct DnnlConvBackward::Impl {
  using Key = absl::InlinedVector<int64_t, 48>;
  struct Operand {
    memory::desc user, prim;
    std::optional<dnnl::reorder> reorder;  // user -> prim for inputs, prim -> user for the output.
    memory::desc reorder_scratchpad;
  };
  struct Entry {
    Key key;
    dnnl::primitive prim;
    memory::desc scratchpad;
    std::string impl;
    Operand a, b, out;
    int a_arg, b_arg, out_arg;
    // The memory objects of one call: user ones pointed at the call's tensors, and the
    // primitive's own copies where a reorder is needed. A call takes an idle set or makes one.
    struct Bound {
      memory a_user, b_user, out_user, a, b, out;
    };
    absl::Mutex mu;
    std::vector<std::unique_ptr<Bound>> idle ABSL_GUARDED_BY(mu);
  };
  static constexpr size_t kMaxEntries = 4;

  explicit Impl(Kind k) : kind(k) {}
  absl::StatusOr<bool> Run(const Tensor& a, const Tensor& b, const WindowGeometry& g, int64_t group, int threads,
                           Tensor* out) const;
  std::shared_ptr<Entry> Prepare(const Key& key, const memory::dims& x, const memory::dims& wd,
                                 const memory::dims& y, const WindowGeometry& g) const;

  Kind kind;
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
};

std::shared_ptr<DnnlConvBackward::Impl::Entry> DnnlConvBackward::Impl::Prepare(const Key& key, const memory::dims& x,
                                                                               const memory::dims& wd,
                                                                               const memory::dims& y,
                                                                               const WindowGeometry& g) const {
  dnnl::engine& eng = DnnlEngine();
  const size_t spatial = x.size() - 2;
  memory::dims strides(g.strides.begin(), g.strides.end()), dilates, pad_l, pad_r;
  for (size_t i = 0; i < spatial; ++i) {
    dilates.push_back(g.dilations[i] - 1);
    pad_l.push_back(g.pad_begin[i]);
    // The end padding that exactly produces the output size (negative when the last window
    // ends before the input does).
    pad_r.push_back((g.out[i] - 1) * g.strides[i] + (g.kernel[i] - 1) * g.dilations[i] + 1 - x[2 + i] - g.pad_begin[i]);
  }
  const auto direct = dnnl::algorithm::convolution_direct;
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, Any(x), Any(wd), Any(y), strides,
                                      dilates, pad_l, pad_r),
      eng);
  const dnnl::primitive_attr attr = DnnlUserScratchpad();
  auto e = std::make_shared<Entry>();
  e->key = key;
  // An operand in the user's layout and the primitive's, with the reorder between them where
  // they differ: into the primitive's for inputs, out of it for the output.
  auto operand = [&](Operand* op, const memory::desc& user, const memory::desc& prim, bool is_output) {
    op->user = user;
    op->prim = prim;
    if (prim != user) {
      dnnl::reorder::primitive_desc rpd = is_output
                                              ? dnnl::reorder::primitive_desc(eng, prim, eng, user, DnnlUserScratchpad())
                                              : dnnl::reorder::primitive_desc(eng, user, eng, prim, DnnlUserScratchpad());
      op->reorder = dnnl::reorder(rpd);
      op->reorder_scratchpad = rpd.scratchpad_desc();
    }
  };
  if (kind == kData) {
    dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(direct, Any(x), Any(wd), Any(y), strides, dilates, pad_l, pad_r), attr,
        eng, hint);
    e->impl = pd.impl_info_str();
    e->prim = dnnl::convolution_backward_data(pd);
    e->scratchpad = pd.scratchpad_desc();
    operand(&e->a, Plain(y), pd.diff_dst_desc(), false);
    operand(&e->b, Plain(wd), pd.weights_desc(), false);
    operand(&e->out, Plain(x), pd.diff_src_desc(), true);
    e->a_arg = DNNL_ARG_DIFF_DST;
    e->b_arg = DNNL_ARG_WEIGHTS;
    e->out_arg = DNNL_ARG_DIFF_SRC;
  } else {
    dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(direct, Any(x), Any(wd), Any(y), strides, dilates, pad_l, pad_r),
        attr, eng, hint);
    e->impl = pd.impl_info_str();
    e->prim = dnnl::convolution_backward_weights(pd);
    e->scratchpad = pd.scratchpad_desc();
    operand(&e->a, Plain(x), pd.src_desc(), false);
    operand(&e->b, Plain(y), pd.diff_dst_desc(), false);
    operand(&e->out, Plain(wd), pd.diff_weights_desc(), true);
    e->a_arg = DNNL_ARG_SRC;
    e->b_arg = DNNL_ARG_DIFF_DST;
    e->out_arg = DNNL_ARG_DIFF_WEIGHTS;
  }
  return e;
}

absl::StatusOr<bool> DnnlConvBackward::Impl::Run(const Tensor& a, const Tensor& b, const WindowGeometry& g,
                                                 int64_t group, int threads, Tensor* out) const {
  if (a.dtype() != DT_FLOAT || b.dtype() != DT_FLOAT || out->dtype() != DT_FLOAT) return false;
  const int rank = a.dims();
  if (rank < 3 || rank > 5) return false;
  const memory::dims x = Dims(kind == kData ? out->shape() : a.shape());
  const memory::dims w = Dims(kind == kData ? b.shape() : out->shape());
  const memory::dims y = Dims(kind == kData ? a.shape() : b.shape());
  const memory::dims wd = WeightDims(w, group);
  Key key;
  for (const memory::dims* d : {&x, &wd, &y}) key.insert(key.end(), d->begin(), d->end());
  for (const std::vector<int64_t>* v : {&g.strides, &g.dilations, &g.pad_begin, &g.pad_end}) {
    key.insert(key.end(), v->begin(), v->end());
  }
  key.push_back(threads);
  std::shared_ptr<Entry> entry;
  {
    absl::MutexLock lock(&mu);
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if ((*it)->key == key) {
        entries.splice(entries.begin(), entries, it);
        entry = entries.front();
        break;
      }
    }
  }
  UseOmpThreads(threads);
  dnnl::engine& eng = DnnlEngine();
  thread_local dnnl::stream stream(eng);
  if (entry == nullptr) {
    try {
      entry = Prepare(key, x, wd, y, g);
    } catch (const dnnl::error&) {
      return false;  // Shapes oneDNN does not take: the caller's GEMM path runs.
    }
    absl::MutexLock lock(&mu);
    entries.push_front(entry);
    if (entries.size() > kMaxEntries) entries.pop_back();
  }
  // oneDNN's reference loops are slower than the GEMM path (kept, so it is not asked again);
  // for depthwise weight gradients its GEMM-based kernel is slower than the caller's direct one.
  if (absl::StartsWith(entry->impl, "ref")) return false;
  if (kind == kWeights && group > 1 && group == x[1] && group == w[0] && absl::StartsWith(entry->impl, "x64:gemm")) {
    return false;
  }
  try {
    std::unique_ptr<Entry::Bound> bound;
    {
      absl::MutexLock lock(&entry->mu);
      if (!entry->idle.empty()) {
        bound = std::move(entry->idle.back());
        entry->idle.pop_back();
      }
    }
    if (bound == nullptr) {
      bound = std::make_unique<Entry::Bound>();
      bound->a_user = memory(entry->a.user, eng, nullptr);
      bound->b_user = memory(entry->b.user, eng, nullptr);
      bound->out_user = memory(entry->out.user, eng, nullptr);
      bound->a = entry->a.reorder ? memory(entry->a.prim, eng, nullptr) : bound->a_user;
      bound->b = entry->b.reorder ? memory(entry->b.prim, eng, nullptr) : bound->b_user;
      bound->out = entry->out.reorder ? memory(entry->out.prim, eng, nullptr) : bound->out_user;
    }
    // The blocked copies live in this thread's buffers for the call.
    if (entry->a.reorder) bound->a.set_data_handle(DnnlThreadBuffer(1, entry->a.prim.get_size()));
    if (entry->b.reorder) bound->b.set_data_handle(DnnlThreadBuffer(2, entry->b.prim.get_size()));
    if (entry->out.reorder) bound->out.set_data_handle(DnnlThreadBuffer(3, entry->out.prim.get_size()));
    bound->a_user.set_data_handle(const_cast<void*>(a.raw_data()));
    bound->b_user.set_data_handle(const_cast<void*>(b.raw_data()));
    bound->out_user.set_data_handle(out->raw_data());
    if (entry->a.reorder) {
      DnnlExecute(*entry->a.reorder, entry->a.reorder_scratchpad, stream,
                  {{DNNL_ARG_FROM, bound->a_user}, {DNNL_ARG_TO, bound->a}});
    }
    if (entry->b.reorder) {
      DnnlExecute(*entry->b.reorder, entry->b.reorder_scratchpad, stream,
                  {{DNNL_ARG_FROM, bound->b_user}, {DNNL_ARG_TO, bound->b}});
    }
    DnnlExecute(entry->prim, entry->scratchpad, stream,
                {{entry->a_arg, bound->a}, {entry->b_arg, bound->b}, {entry->out_arg, bound->out}});
    if (entry->out.reorder) {
      DnnlExecute(*entry->out.reorder, entry->out.reorder_scratchpad, stream,
                  {{DNNL_ARG_FROM, bound->out}, {DNNL_ARG_TO, bound->out_user}});
    }
    stream.wait();
    // The user's buffers are the caller's: forget them before the set idles.
    bound->a_user.set_data_handle(nullptr);
    bound->b_user.set_data_handle(nullptr);
    bound->out_user.set_data_handle(nullptr);
    absl::MutexLock lock(&entry->mu);
    entry->idle.push_back(std::move(bound));
  } catch (const dnnl::error& e) {
    return absl::InternalError(std::string("oneDNN convolution gradient failed: ") + e.what());
  }
  return true;
}

DnnlConvBackward::DnnlConvBackward(Kind kind) : impl_(std::make_unique<Impl>(kind)) {}
DnnlConvBackward::~DnnlConvBackward() = default;

absl::StatusOr<bool> DnnlConvBackward::Data(const Tensor& dy, const Tensor& w, const WindowGeometry& g,
                                            int64_t group, int threads, Tensor* dx) const {
  if (impl_->kind != kData) return absl::InternalError("DnnlConvBackward::Data on a weights kernel");
  return impl_->Run(dy, w, g, group, threads, dx);
}

absl::StatusOr<bool> DnnlConvBackward::Weights(const Tensor& x, const Tensor& dy, const WindowGeometry& g,
                                               int64_t group, int threads, Tensor* dw) const {
  if (impl_->kind != kWeights) return absl::InternalError("DnnlConvBackward::Weights on a data kernel");
  return impl_->Run(x, dy, g, group, threads, dw);
}

std::vector<std::string> DnnlConvBackward::ImplementationNames() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<std::string> names;
  for (const auto& e : impl_->entries) names.push_back(e->impl);
  return names;
}

}  // namespace sluice
