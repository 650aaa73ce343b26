#include "kernels/dnnl_conv.h"

#include <cstdlib>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/blas.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

memory::dims Dims(const Tensor& t) {
  return memory::dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
}

// Primitives are made on one thread and run on others (whichever runs the kernel), so they
// take their scratchpad from the caller ("user" mode) instead of oneDNN's own, which is kept
// per thread and was missing on the thread that ran: a grouped convolution that needs one
// (gemm:jit) wrote through a null pointer. Each thread has one buffer, grown as needed; the
// stream runs in order on the calling thread, so the primitives of one Run share it.
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

memory ThreadScratchpad(const memory::desc& md, const dnnl::engine& eng) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  const size_t need = md.get_size();
  if (need > buffer.bytes) {
    std::free(buffer.data);
    buffer.bytes = (need + 4095) / 4096 * 4096;
    buffer.data = std::aligned_alloc(64, buffer.bytes);
    if (buffer.data == nullptr) {
      buffer.bytes = 0;
      throw dnnl::error(dnnl_out_of_memory, "no memory for a oneDNN scratchpad");
    }
  }
  return memory(md, eng, buffer.data);
}

// Runs `prim` with `args` plus this thread's scratchpad, when `pd` needs one.
void ExecuteWithScratchpad(const dnnl::primitive& prim, const memory::desc& scratchpad, dnnl::stream& stream,
                           std::unordered_map<int, memory> args) {
  if (scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = ThreadScratchpad(scratchpad, stream.get_engine());
  prim.execute(stream, args);
}

tag DataTag(int spatial) { return spatial == 1 ? tag::ncw : spatial == 2 ? tag::nchw : tag::ncdhw; }
tag WeightTag(int spatial, bool grouped) {
  if (grouped) return spatial == 1 ? tag::goiw : spatial == 2 ? tag::goihw : tag::goidhw;
  return spatial == 1 ? tag::oiw : spatial == 2 ? tag::oihw : tag::oidhw;
}

}  // namespace

struct DnnlConv::Impl {
  struct Entry {
    memory::dims x_dims, w_dims;
    // The weights `weights` was reordered from. Holding the buffer keeps its address from being
    // reused for other values (weights fed per run, as in training), and keeps kernels from
    // writing into it in place, so the same address means the same values.
    std::shared_ptr<TensorBuffer> w_buffer;
    ConvPostOp post;
    bool x_nhwc, y_nhwc;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    memory weights;  // In pd.weights_desc() layout.
    // Built once: creating a primitive costs far more than running a small one.
    std::optional<dnnl::reorder> to_src, from_dst;
    memory::desc to_src_scratchpad, from_dst_scratchpad;  // Empty when none is needed.
  };
  // A few shapes per kernel; the most recently used first.
  static constexpr size_t kMaxEntries = 8;
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
};

DnnlConv::DnnlConv() : impl_(std::make_unique<Impl>()) {}
DnnlConv::~DnnlConv() = default;

absl::StatusOr<bool> DnnlConv::Run(const Tensor& x, const Tensor& w, const Tensor* bias,
                                   const WindowGeometry& g, int64_t group, ConvPostOp post,
                                   float clip_lo, float clip_hi, int threads, Tensor* y, bool x_nhwc,
                                   bool y_nhwc) const {
  const int spatial = x.dims() - 2;
  if ((x_nhwc || y_nhwc) && spatial != 2) return false;
  UseOmpThreads(threads);
  if (spatial < 1 || spatial > 3 || x.dtype() != DT_FLOAT) return false;
  const memory::dims x_dims = Dims(x), w_dims = Dims(w), y_dims = Dims(*y);
  std::shared_ptr<Impl::Entry> entry, stale;  // stale: the same convolution, other weights.
  {
    absl::MutexLock lock(&impl_->mu);
    for (auto it = impl_->entries.begin(); it != impl_->entries.end(); ++it) {
      if ((*it)->x_dims == x_dims && (*it)->w_dims == w_dims && (*it)->post == post &&
          (*it)->x_nhwc == x_nhwc && (*it)->y_nhwc == y_nhwc) {
        if ((*it)->w_buffer == w.buffer()) {
          entry = *it;
          impl_->entries.splice(impl_->entries.begin(), impl_->entries, it);
        } else {
          stale = *it;
          impl_->entries.erase(it);  // Its weights are out of date; a new entry replaces it.
        }
        break;
      }
    }
  }
  dnnl::engine& eng = Engine();
  // One stream per thread: creating one per call costs as much as a small convolution.
  thread_local dnnl::stream stream(eng);
  // The weights in oneDNN's layout for `e`, from W as grouped [g, O/g, I, ...] when grouped.
  auto reorder_weights = [&](Impl::Entry* e) {
    memory::dims wd = w_dims;
    if (group > 1) {
      wd = {group, w_dims[0] / group};
      wd.insert(wd.end(), w_dims.begin() + 1, w_dims.end());
    }
    memory user_w({wd, memory::data_type::f32, WeightTag(spatial, group > 1)}, eng, const_cast<void*>(w.raw_data()));
    e->w_buffer = w.buffer();
    e->weights = memory(e->pd.weights_desc(), eng);
    dnnl::reorder(user_w, e->weights).execute(stream, user_w, e->weights);
    stream.wait();
  };
  if (entry == nullptr && stale != nullptr) {
    // New weights for a known convolution: its primitives stay, its weights are reordered again.
    try {
      auto e = std::make_shared<Impl::Entry>(*stale);
      reorder_weights(e.get());
      entry = e;
      absl::MutexLock lock(&impl_->mu);
      impl_->entries.push_front(e);
    } catch (const dnnl::error&) {
      return false;
    }
  }
  if (entry == nullptr) {
    try {
      memory::dims strides(g.strides.begin(), g.strides.end());
      memory::dims dilates, pad_l(g.pad_begin.begin(), g.pad_begin.end()), pad_r;
      for (int i = 0; i < spatial; ++i) {
        dilates.push_back(g.dilations[i] - 1);
        // oneDNN wants the padding that exactly produces the output size; it is negative when
        // the last window ends before the input does (a stride that does not divide evenly).
        const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
        pad_r.push_back((g.out[i] - 1) * g.strides[i] + dk - x_dims[2 + i] - g.pad_begin[i]);
      }
      memory::dims wd = w_dims;
      const bool grouped = group > 1;
      if (grouped) {
        wd = {group, w_dims[0] / group};
        wd.insert(wd.end(), w_dims.begin() + 1, w_dims.end());
      }
      auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::any); };
      memory::desc bias_md = bias ? memory::desc({w_dims[0]}, memory::data_type::f32, tag::x) : memory::desc();
      auto nhwc = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::nhwc); };
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           x_nhwc ? nhwc(x_dims) : any(x_dims), any(wd), bias_md,
                                           y_nhwc ? nhwc(y_dims) : any(y_dims), strides, dilates, pad_l, pad_r);
      dnnl::primitive_attr attr = UserScratchpad();
      if (post != ConvPostOp::kNone) {
        dnnl::post_ops ops;
        if (post == ConvPostOp::kRelu) {
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        } else if (clip_lo == 0.0f) {
          // ReLU6 and friends: bounded_relu has fast JIT paths where clip may not.
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_bounded_relu, clip_hi, 0.0f);
        } else {
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, clip_lo, clip_hi);
        }
        attr.set_post_ops(ops);
      }
      auto e = std::make_shared<Impl::Entry>();
      e->x_dims = x_dims;
      e->w_dims = w_dims;
      e->post = post;
      e->x_nhwc = x_nhwc;
      e->y_nhwc = y_nhwc;
      e->pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
      e->conv = dnnl::convolution_forward(e->pd);
      reorder_weights(e.get());
      const memory::desc user_x_md(x_dims, memory::data_type::f32, x_nhwc ? tag::nhwc : DataTag(spatial));
      const memory::desc user_y_md(y_dims, memory::data_type::f32, y_nhwc ? tag::nhwc : DataTag(spatial));
      if (e->pd.src_desc() != user_x_md) {
        dnnl::reorder::primitive_desc rpd(eng, user_x_md, eng, e->pd.src_desc(), UserScratchpad());
        e->to_src = dnnl::reorder(rpd);
        e->to_src_scratchpad = rpd.scratchpad_desc();
      }
      if (e->pd.dst_desc() != user_y_md) {
        dnnl::reorder::primitive_desc rpd(eng, e->pd.dst_desc(), eng, user_y_md, UserScratchpad());
        e->from_dst = dnnl::reorder(rpd);
        e->from_dst_scratchpad = rpd.scratchpad_desc();
      }
      entry = e;
      absl::MutexLock lock(&impl_->mu);
      impl_->entries.push_front(e);
      if (impl_->entries.size() > Impl::kMaxEntries) impl_->entries.pop_back();
    } catch (const dnnl::error&) {
      return false;  // Shapes or attrs oneDNN does not take: the caller falls back.
    }
  }
  try {
    memory user_x({x_dims, memory::data_type::f32, x_nhwc ? tag::nhwc : DataTag(spatial)}, eng,
                  const_cast<void*>(x.raw_data()));
    memory user_y({y_dims, memory::data_type::f32, y_nhwc ? tag::nhwc : DataTag(spatial)}, eng, y->raw_data());
    memory src = user_x, dst = user_y;
    if (entry->to_src) {
      src = memory(entry->pd.src_desc(), eng);
      ExecuteWithScratchpad(*entry->to_src, entry->to_src_scratchpad, stream,
                            {{DNNL_ARG_FROM, user_x}, {DNNL_ARG_TO, src}});
    }
    if (entry->from_dst) dst = memory(entry->pd.dst_desc(), eng);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, entry->weights}, {DNNL_ARG_DST, dst}};
    if (bias) {
      args[DNNL_ARG_BIAS] = memory({{w_dims[0]}, memory::data_type::f32, tag::x}, eng, const_cast<void*>(bias->raw_data()));
    }
    ExecuteWithScratchpad(entry->conv, entry->pd.scratchpad_desc(), stream, std::move(args));
    if (entry->from_dst) {
      ExecuteWithScratchpad(*entry->from_dst, entry->from_dst_scratchpad, stream,
                            {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, user_y}});
    }
    stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(std::string("oneDNN convolution failed: ") + e.what());
  }
  return true;
}

}  // namespace sluice
