#include "kernels/dnnl_conv.h"

#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <list>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kernels/blas.h"
#include "kernels/cpu_isa.h"
#include "kernels/dnnl_util.h"
#include "kernels/fast_math.h"
#include "kernels/threading.h"
#include "kernels/tuning_cache.h"
#include "kernels/winograd_conv.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

memory::dims Dims(const Tensor& t) {
  return memory::dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
}

// Runs `prim` with `args`, whose DNNL_ARG_SCRATCHPAD (when the primitive needs one) is pointed
// at this thread's scratchpad first.
void ExecuteWithScratchpad(const dnnl::primitive& prim, dnnl::stream& stream, std::unordered_map<int, memory>& args) {
  auto it = args.find(DNNL_ARG_SCRATCHPAD);
  if (it != args.end()) it->second.set_data_handle(DnnlThreadScratchpadData(it->second.get_desc().get_size()));
  prim.execute(stream, args);
}

tag WeightTag(int spatial, bool grouped) {
  if (grouped) return spatial == 1 ? tag::goiw : spatial == 2 ? tag::goihw : tag::goidhw;
  return spatial == 1 ? tag::oiw : spatial == 2 ? tag::oihw : tag::oidhw;
}

// Whether a convolution with weights `wd` (oneDNN's dims: [O, I, kh, kw] ungrouped) and
// output dims `y_dims`, on `threads` threads, runs faster as Winograd's F(2x2 or 4x4, 3x3) in
// oneDNN's blocked layout, reorders to and from it included, than directly: 3x3, stride 1,
// undilated, ungrouped, with enough channels (I*O/(I+O) at least 16, 12 on one thread) and
// work (20M multiply-adds) that the transforms pay. Measured on ResNet, Inception, GoogLeNet,
// DenseNet and SqueezeNet shapes (docs/performance.md has the table): 0.35-0.65x the direct
// time on maps of 24x24 and more; on 14x14 maps only on one thread and with O a multiple of
// 32 (96->208 channels took 3x as long), on 7x7 maps only for the widest layers (512->512:
// 0.8x). Its error against a double-precision reference is that of the direct kernel (max
// 1e-5 on outputs of magnitude 6). SLUICE_CONV_WINOGRAD=0 turns it off.
bool WinogradPays(const memory::dims& wd, int64_t group, const WindowGeometry& g, const memory::dims& y_dims,
                  int threads) {
  static const bool enabled = [] {
    const char* env = std::getenv("SLUICE_CONV_WINOGRAD");
    return env == nullptr || std::string(env) != "0";
  }();
  if (!enabled || group != 1 || wd.size() != 4 || wd[2] != 3 || wd[3] != 3 || y_dims.size() != 4) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (g.strides[i] != 1 || g.dilations[i] != 1) return false;
  }
  const double o = static_cast<double>(wd[0]), in = static_cast<double>(wd[1]);
  const double area = static_cast<double>(y_dims[2]) * static_cast<double>(y_dims[3]);
  const double multiply_adds = 9.0 * o * in * area * static_cast<double>(y_dims[0]);
  // On one thread 16->64 channels (SqueezeNet's expand) still gains (0.77x); on two, 0.99x.
  if (o * in / (o + in) < (threads <= 1 ? 12.0 : 16.0) || multiply_adds < 20e6) return false;
  if (multiply_adds >= 100e6) return true;
  if (threads <= 1) return area >= 576 || (area >= 196 && wd[0] % 32 == 0);
  return area >= 576 && multiply_adds >= 50e6;
}

// Whether to look past oneDNN's first choice, `impl`, for its direct depthwise kernel: a
// depthwise (one input and one output channel per group) 2-D convolution with grouped weights
// `wd` ([g, 1, 1, kh, kw]) and output dims `y_dims`, whose rows are at least 14 wide.
bool PreferDirectDepthwise(const memory::dims& wd, int64_t group, const memory::dims& y_dims,
                           const char* impl) {
  return group > 1 && wd.size() == 5 && wd[1] == 1 && wd[2] == 1 && y_dims.size() == 4 &&
         y_dims[3] >= 14 && absl::StartsWith(impl, "brdgmm");
}

}  // namespace

namespace {

// A choice an environment variable forces: 0 ("0"), 1 ("1"), or -1 (unset or anything else:
// measured, or the table's guess).
int ForcedByEnv(const char* name) {
  const char* env = std::getenv(name);
  if (env == nullptr) return -1;
  return std::string(env) == "0" ? 0 : std::string(env) == "1" ? 1 : -1;
}

// SLUICE_CONV_MERGE_GROUPS=0 or =1 forces GroupMergeFactor's merging off or on.
int GroupsMergedForced() {
  static const int forced = ForcedByEnv("SLUICE_CONV_MERGE_GROUPS");
  return forced;
}

// Grouped convolutions of a few channels per group (ResNeXt's first stage: 32 groups of 4)
// have no vector kernel in oneDNN below AVX-512, whose vectors hold 8 floats: it takes its GEMM
// path, 20x slower than AVX-512's kernel (4.5 ms against 0.22 for ResNeXt-50's 56x56 ones).
// Run as groups of `merge` neighbours at once, with block-diagonal weights (zeros between the
// groups), they fill a vector; the arithmetic grows `merge` times, far less than the GEMM path
// loses. The channel order of X, Y and the bias is the same either way. Returns the factor
// that brings input and output channels per group to at least 8 and leaves two groups or more,
// or 1 where none does (or for depthwise convolutions, which have kernels of their own).
int64_t GroupMergeFactor(const memory::dims& wd, int64_t group) {
  if (group <= 1 || wd.size() < 4) return 1;
  const int64_t co = wd[1], ci = wd[2];
  if (co == 1 && ci == 1) return 1;
  if (co >= 8 && ci >= 8) return 1;
  for (int64_t f = 2; f < group && f <= 8; ++f) {
    if (group % f == 0 && f * co >= 8 && f * ci >= 8) return f;
  }
  return 1;
}

// W [group * co, ci, k...] as `merge`-merged groups: [group / merge, merge * co, merge * ci, k...],
// group g's block on the diagonal of merged group g / merge, zeros elsewhere.
void ExpandGroups(const float* w, const memory::dims& wd, int64_t merge, std::vector<float>* out) {
  const int64_t group = wd[0], co = wd[1], ci = wd[2];
  int64_t taps = 1;
  for (size_t d = 3; d < wd.size(); ++d) taps *= wd[d];
  out->assign(static_cast<size_t>(group * co * merge * ci * taps), 0.0f);
  for (int64_t g = 0; g < group; ++g) {
    const int64_t mg = g / merge, a = g % merge;
    for (int64_t o = 0; o < co; ++o) {
      // Merged output channel a * co + o of merged group mg; its inputs a * ci .. a * ci + ci.
      float* dst = out->data() + ((mg * merge * co + a * co + o) * merge * ci + a * ci) * taps;
      const float* src = w + ((g * co + o) * ci) * taps;
      std::copy(src, src + ci * taps, dst);
    }
  }
}

}  // namespace

// One convolution oneDNN runs: the whole tensor, or (for a huge convolution, so a deadline can
// stop it part-way) one image's band of output rows. Dims are logical (N, C, spatial...);
// strides are those of the user's tensors, so a band is a strided view of them.
struct ConvPiece {
  memory::dims x_dims, x_strides, y_dims, y_strides, pad_l, pad_r;
  const float* x;
  float* y;
};

// What a convolution's primitives are made from, besides the piece it runs on.
struct ConvSpec {
  memory::dims w_dims;  // W's dims: [O, I/group, k...].
  memory::dims wd;      // W as oneDNN sees it: grouped [g, O/g, I/g, k...] when grouped.
  int spatial = 2;
  int64_t group = 1;
  bool has_bias = false;
  ConvPostOp post = ConvPostOp::kNone;
  float alpha = 0, beta = 0;
  bool x_nhwc = false, y_nhwc = false, accumulate = false;
  int threads = 1;
};

// What a cached primitive was made for (dims, strides, padding, post-ops, layouts): inline, so
// a call looking one up allocates nothing.
using ConvKey = absl::InlinedVector<int64_t, 64>;

namespace {

// `spec` with every `merge` neighbouring groups as one.
ConvSpec MergedGroups(ConvSpec spec, int64_t merge) {
  if (merge <= 1) return spec;
  spec.group /= merge;
  spec.wd[0] = spec.group;
  spec.wd[1] *= merge;
  spec.wd[2] *= merge;
  return spec;
}

}  // namespace

struct DnnlConv::Impl {
  struct Entry {
    // What the primitives were made for: the piece's dims, strides and padding, the post-op
    // and the layouts.
    ConvKey key;
    memory::dims w_dims;
    // The weights `weights` was reordered from. Holding the buffer keeps its address from being
    // reused for other values (weights fed per run, as in training), and keeps kernels from
    // writing into it in place, so the same address means the same values.
    std::shared_ptr<TensorBuffer> w_buffer;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    memory weights;  // In pd.weights_desc() layout.
    // The reorder of the user's weights into `weights`, made once: training feeds new weights
    // every step, and making a reorder primitive each time cost more than running it.
    std::optional<dnnl::reorder> w_reorder;
    memory user_w;  // Pointed at each new weights buffer.
    // Built once: creating a primitive costs far more than running a small one.
    // to_dst: an accumulating convolution's y into oneDNN's layout, when that is not y's.
    std::optional<dnnl::reorder> to_src, from_dst, to_dst;
    // X is NCHW of at most 4 channels and oneDNN reads NHWC: NchwToNhwcFewChannels instead of
    // to_src (a network's first convolution, its RGB input).
    bool interleave_src = false;
    bool winograd = false;  // pd is Winograd's, or own_winograd runs instead of pd.
    // Sluice's own F(4x4, 3x3) (where oneDNN has no Winograd kernel: below AVX-512), with the
    // entry's post-op as its epilogue; pd, conv and the reorders are then unused.
    struct OwnWinograd {
      WinogradConv3x3 conv;
      WinogradConv3x3::Epilogue epilogue;
      float alpha, beta;
      bool accumulate;
      int threads;
    };
    std::shared_ptr<const OwnWinograd> own_winograd;
    // > 1: the convolution runs with every `merge` neighbouring groups as one (MergedGroups),
    // its weights expanded block-diagonally into merged_w before the reorder.
    int64_t merge = 1;
    std::vector<float> merged_w;
    memory::desc to_src_scratchpad, from_dst_scratchpad, to_dst_scratchpad;  // Empty when none is needed.
    memory::desc user_x_md, user_y_md;
    // The memory objects and argument maps of one call, made once and pointed at each call's
    // buffers (creating them cost as much as a small convolution's arithmetic). A call takes an
    // idle set or makes one; the blocked copies of X and Y, when there are reorders, are the
    // calling thread's buffers (DnnlThreadBuffer), pointed at per call.
    struct Bound {
      memory x, y, bias, src, dst;
      std::unordered_map<int, memory> conv_args, to_src_args, from_dst_args, to_dst_args;
    };
    struct BoundPool {
      absl::Mutex mu;
      std::vector<std::unique_ptr<Bound>> idle ABSL_GUARDED_BY(mu);
    };
    std::shared_ptr<BoundPool> bound = std::make_shared<BoundPool>();
  };
  // A few shapes (or bands) per kernel; the most recently used first.
  static constexpr size_t kMaxEntries = 8;
  static std::unique_ptr<Entry::Bound> MakeBound(const Entry& e, const dnnl::engine& eng, bool has_bias,
                                                 int64_t out_channels);
  // An entry's primitives for piece `p` (Winograd's when `winograd` and oneDNN has it), its
  // weights not yet reordered. Throws dnnl::error where oneDNN takes no such convolution.
  static std::shared_ptr<Entry> MakeEntry(const ConvPiece& p, const ConvSpec& spec, const WindowGeometry& g,
                                          const ConvKey& key, bool winograd);
  // An entry that runs WinogradConv3x3 with weights `w` (transformed here), for a convolution
  // OwnWinogradTakes.
  static std::shared_ptr<Entry> MakeOwnWinogradEntry(const ConvSpec& spec, const ConvKey& key, const Tensor& w);
  // `w` into e's weights, in its primitive's layout.
  void ReorderWeights(Entry* e, const ConvSpec& spec, const Tensor& w, dnnl::stream& stream) const;
  // A prepared entry for piece `p`, its weights `w` reordered: Winograd's (oneDNN's, or
  // Sluice's own where oneDNN has none) or the direct kernel as measured on this machine
  // (TuningCache: once per shape; only when `tunable`), as SLUICE_CONV_WINOGRAD forces, or as
  // WinogradPays' table guesses.
  // Throws dnnl::error.
  std::shared_ptr<Entry> PrepareEntry(const ConvPiece& p, const ConvSpec& spec, const WindowGeometry& g,
                                      const ConvKey& key, const Tensor& w, const Tensor* bias, bool tunable,
                                      TuningCache& tuning, dnnl::stream& stream) const;
  // The fastest of three runs of each entry on piece `p`, taking turns, in ms (measuring ways
  // of running one convolution), with y in a copy of p's y (so an accumulating convolution's
  // residual stays as it is), each run with its weights out of the caches, as in a network
  // whose weights do not all fit there (Winograd's take 4x the bytes: on ResNet-50's 7x7 maps,
  // 38 MB a layer, which took 0.7 ms more in the network than alone). Throws dnnl::error.
  static std::vector<double> TimeInTurn(const std::vector<Entry*>& entries, const ConvPiece& p, const Tensor* bias,
                                        dnnl::stream& stream, int64_t out_channels);
  // Runs e on piece `p` (and `bias`, or null). Throws dnnl::error.
  static void Execute(Entry& e, const ConvPiece& p, const Tensor* bias, dnnl::stream& stream,
                      int64_t out_channels);
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
  // Set once a convolution this kernel prepared saw new weights (training: every step). Winograd
  // then stops paying: its weight transform runs on every change (in oneDNN 2.6, plain C++ that
  // took ResNet-18's training step from 1.16 to 1.40 s at batch 8, against 0.35 s saved).
  mutable std::atomic<bool> weights_vary{false};
};

namespace {

// Dense strides of a tensor with logical dims (N, C, spatial...), stored as NCHW... or, for a
// 2-D convolution's NHWC layout, as N,H,W,C.
memory::dims UserStrides(const memory::dims& d, bool nhwc) {
  if (nhwc) return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  memory::dims s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// Flushes [p, p + bytes) from every cache level (each 64-byte line), and waits for it.
void EvictFromCaches(const void* p, size_t bytes) {
  if (p == nullptr) return;
  const char* c = static_cast<const char*>(p);
  for (size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
}

// oneDNN wants the end padding that exactly produces the output size; it is negative when the
// last window ends before the input does (a stride that does not divide evenly).
int64_t EndPad(int64_t in, int64_t out, int64_t stride, int64_t kernel, int64_t dilation, int64_t pad_l) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_l;
}

// The pieces of a convolution: one when it is small enough to run between two cancellation
// checks (`slice_macs` multiply-adds); else runs of whole images when one image is that small
// (so a large batch of small images is a few pieces, not one per image); else bands of rows of
// the first spatial dim, image by image. Empty when a band would read no input row (padding
// wider than a band): the caller then takes the GEMM path.
std::vector<ConvPiece> Pieces(const Tensor& x, Tensor* y, const WindowGeometry& g, int64_t group,
                              bool x_nhwc, bool y_nhwc, int64_t slice_macs) {
  const memory::dims x_dims = Dims(x), y_dims = Dims(*y);
  const int spatial = x.dims() - 2;
  ConvPiece whole{x_dims, UserStrides(x_dims, x_nhwc), y_dims, UserStrides(y_dims, y_nhwc), {}, {},
                  static_cast<const float*>(x.raw_data()), static_cast<float*>(y->raw_data())};
  for (int i = 0; i < spatial; ++i) {
    whole.pad_l.push_back(g.pad_begin[i]);
    whole.pad_r.push_back(EndPad(x_dims[2 + i], g.out[i], g.strides[i], g.kernel[i], g.dilations[i], g.pad_begin[i]));
  }
  // Multiply-adds of one output row (of the first spatial dim) of one image, in double: the
  // factors are element counts of real tensors, but their product need not fit in int64.
  double row_macs = static_cast<double>(y_dims[1]) * static_cast<double>(x_dims[1] / group);
  for (int i = 0; i < spatial; ++i) {
    row_macs *= static_cast<double>(g.kernel[i]) * (i > 0 ? static_cast<double>(g.out[i]) : 1.0);
  }
  const double total = row_macs * static_cast<double>(g.out[0]) * static_cast<double>(x_dims[0]);
  if (total <= static_cast<double>(slice_macs)) {
    std::vector<ConvPiece> one;
    one.push_back(std::move(whole));
    return one;
  }
  const double image_macs = row_macs * static_cast<double>(g.out[0]);
  std::vector<ConvPiece> pieces;
  if (image_macs <= static_cast<double>(slice_macs)) {
    // Images are dense blocks in either layout: a run of them is the same view with a smaller N.
    const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(slice_macs / image_macs));
    for (int64_t b = 0; b < x_dims[0]; b += per) {
      ConvPiece p = whole;
      p.x_dims[0] = p.y_dims[0] = std::min(per, x_dims[0] - b);
      p.x = whole.x + b * whole.x_strides[0];
      p.y = whole.y + b * whole.y_strides[0];
      pieces.push_back(std::move(p));
    }
    return pieces;
  }
  const int64_t rows = std::max<int64_t>(
      1, static_cast<int64_t>(std::min(static_cast<double>(g.out[0]), slice_macs / row_macs)));
  const int64_t dk = (g.kernel[0] - 1) * g.dilations[0] + 1;
  for (int64_t b = 0; b < x_dims[0]; ++b) {
    for (int64_t o0 = 0; o0 < g.out[0]; o0 += rows) {
      const int64_t o1 = std::min(g.out[0], o0 + rows);
      const int64_t first = o0 * g.strides[0] - g.pad_begin[0];        // Input rows the band reads:
      const int64_t last = (o1 - 1) * g.strides[0] - g.pad_begin[0] + dk;  // [first, last).
      const int64_t lo = std::max<int64_t>(first, 0), hi = std::min<int64_t>(last, x_dims[2]);
      if (hi <= lo) return {};
      ConvPiece p = whole;
      p.x_dims[0] = p.y_dims[0] = 1;
      p.x_dims[2] = hi - lo;
      p.y_dims[2] = o1 - o0;
      p.x = whole.x + b * whole.x_strides[0] + lo * whole.x_strides[2];
      p.y = whole.y + b * whole.y_strides[0] + o0 * whole.y_strides[2];
      p.pad_l[0] = lo - first;
      p.pad_r[0] = EndPad(hi - lo, o1 - o0, g.strides[0], g.kernel[0], g.dilations[0], p.pad_l[0]);
      pieces.push_back(std::move(p));
    }
  }
  return pieces;
}

}  // namespace

bool ParseConvPostOp(const std::string& name, ConvPostOp* post) {
  static const auto* names = new std::vector<std::pair<std::string, ConvPostOp>>{
      {"", ConvPostOp::kNone},
      {"Relu", ConvPostOp::kRelu},
      {"Clip", ConvPostOp::kClip},
      {"LeakyRelu", ConvPostOp::kLeakyRelu},
      {"HardSwish", ConvPostOp::kHardSwish},
      {"HardSigmoid", ConvPostOp::kHardSigmoid},
      {"Sigmoid", ConvPostOp::kSigmoid},
      {"Swish", ConvPostOp::kSwish}};
  for (const auto& [n, p] : *names) {
    if (n == name) {
      *post = p;
      return true;
    }
  }
  return false;
}

float ApplyConvPostOp(ConvPostOp post, float alpha, float beta, float v) {
  switch (post) {
    case ConvPostOp::kNone:
      return v;
    case ConvPostOp::kRelu:
      return std::max(v, 0.0f);
    case ConvPostOp::kClip:
      return std::min(std::max(v, alpha), beta);
    case ConvPostOp::kLeakyRelu:
      return v < 0 ? alpha * v : v;
    case ConvPostOp::kHardSwish:
      return v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f));
    case ConvPostOp::kHardSigmoid:
      return std::max(0.0f, std::min(1.0f, alpha * v + beta));
    case ConvPostOp::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
    case ConvPostOp::kSwish:
      return v / (1.0f + std::exp(-v));
  }
  return v;
}

// A set of memory objects and argument maps for `e`'s primitives; the user's buffers (X, Y,
// bias) and the scratchpads are pointed at each call's before it runs.
std::unique_ptr<DnnlConv::Impl::Entry::Bound> DnnlConv::Impl::MakeBound(const Entry& e, const dnnl::engine& eng,
                                                                       bool has_bias, int64_t out_channels) {
  auto b = std::make_unique<Entry::Bound>();
  b->x = memory(e.user_x_md, eng, nullptr);
  b->y = memory(e.user_y_md, eng, nullptr);
  // Blocked copies point at this thread's buffers when a call runs (DnnlThreadBuffer).
  b->src = e.to_src || e.interleave_src ? memory(e.pd.src_desc(), eng, nullptr) : b->x;
  b->dst = e.from_dst ? memory(e.pd.dst_desc(), eng, nullptr) : b->y;
  auto scratchpad = [&](const memory::desc& md, std::unordered_map<int, memory>* args) {
    if (md.get_size() > 0) args->insert({DNNL_ARG_SCRATCHPAD, memory(md, eng, nullptr)});
  };
  b->conv_args = {{DNNL_ARG_SRC, b->src}, {DNNL_ARG_WEIGHTS, e.weights}, {DNNL_ARG_DST, b->dst}};
  if (has_bias) {
    b->bias = memory({{out_channels}, memory::data_type::f32, tag::x}, eng, nullptr);
    b->conv_args[DNNL_ARG_BIAS] = b->bias;
  }
  scratchpad(e.pd.scratchpad_desc(), &b->conv_args);
  if (e.to_src) {
    b->to_src_args = {{DNNL_ARG_FROM, b->x}, {DNNL_ARG_TO, b->src}};
    scratchpad(e.to_src_scratchpad, &b->to_src_args);
  }
  if (e.from_dst) {
    b->from_dst_args = {{DNNL_ARG_FROM, b->dst}, {DNNL_ARG_TO, b->y}};
    scratchpad(e.from_dst_scratchpad, &b->from_dst_args);
  }
  if (e.to_dst) {
    b->to_dst_args = {{DNNL_ARG_FROM, b->y}, {DNNL_ARG_TO, b->dst}};
    scratchpad(e.to_dst_scratchpad, &b->to_dst_args);
  }
  return b;
}

DnnlConv::DnnlConv(int64_t slice_multiply_adds)
    : impl_(std::make_unique<Impl>()), slice_multiply_adds_(std::max<int64_t>(1, slice_multiply_adds)) {}
DnnlConv::~DnnlConv() = default;

void DnnlConv::UseTuningCache(TuningCache* cache) { tuning_ = cache; }

void DnnlConv::AssumeWeightsVary() { impl_->weights_vary.store(true, std::memory_order_relaxed); }

std::vector<std::string> DnnlConv::ImplementationNames() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<std::string> names;
  for (const auto& e : impl_->entries) {
    if (e->own_winograd != nullptr) {
      names.push_back(absl::StrCat("sluice_wino_4x3:", CpuIsaName(MaxCpuIsa())));
      continue;
    }
    names.push_back(absl::StrCat(e->pd.impl_info_str(), e->interleave_src ? " +interleaved x" : "",
                                 e->to_src ? " +reordered x" : "", e->from_dst ? " +reordered y" : ""));
  }
  return names;
}

namespace {

// The post-ops of a convolution (a sum first when it accumulates into y, then its activation),
// with the scratchpad left to the caller.
dnnl::primitive_attr ConvAttr(ConvPostOp post, float alpha, float beta, bool accumulate) {
  dnnl::primitive_attr attr = DnnlUserScratchpad();
  dnnl::post_ops ops;
  if (accumulate) ops.append_sum(1.0f);  // y = conv + y, before any activation.
  if (post != ConvPostOp::kNone) {
    using alg = dnnl::algorithm;
    switch (post) {
      case ConvPostOp::kRelu:
        ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
        break;
      case ConvPostOp::kClip:
        if (alpha == 0.0f) {
          // ReLU6 and friends: bounded_relu has fast JIT paths where clip may not.
          ops.append_eltwise(1.0f, alg::eltwise_bounded_relu, beta, 0.0f);
        } else {
          ops.append_eltwise(1.0f, alg::eltwise_clip, alpha, beta);
        }
        break;
      case ConvPostOp::kLeakyRelu:
        ops.append_eltwise(1.0f, alg::eltwise_relu, alpha, 0.0f);  // alpha: the negative slope.
        break;
      case ConvPostOp::kHardSwish:
        ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f);
        break;
      case ConvPostOp::kHardSigmoid:  // clip(alpha * y + beta, 0, 1)
        ops.append_eltwise(1.0f, alg::eltwise_linear, alpha, beta);
        ops.append_eltwise(1.0f, alg::eltwise_clip, 0.0f, 1.0f);
        break;
      case ConvPostOp::kSigmoid:
        ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f);
        break;
      case ConvPostOp::kSwish:
        // Applied after the convolution by SiluInPlace: oneDNN 2.6's swish post-op took
        // 0.5 ns per value, longer than most convolutions it followed.
        break;
      case ConvPostOp::kNone:
        break;
    }
  }
  if (ops.len() > 0) attr.set_post_ops(ops);
  return attr;
}

// Whether Winograd's 3x3 kernel is worth timing against the direct one for a convolution of
// weights `wd` (oneDNN's dims) and output `y_dims`: ungrouped, stride 1, undilated, with enough
// channels and work that its transforms could pay.
bool WinogradCandidate(const memory::dims& wd, int64_t group, const WindowGeometry& g, const memory::dims& y_dims) {
  if (group != 1 || wd.size() != 4 || wd[2] != 3 || wd[3] != 3 || y_dims.size() != 4) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (g.strides[i] != 1 || g.dilations[i] != 1) return false;
  }
  const double o = static_cast<double>(wd[0]), in = static_cast<double>(wd[1]);
  const double multiply_adds =
      9.0 * o * in * static_cast<double>(y_dims[2]) * static_cast<double>(y_dims[3]) * static_cast<double>(y_dims[0]);
  return o * in / (o + in) >= 8.0 && multiply_adds >= 10e6;
}

// SLUICE_CONV_WINOGRAD: "0" never, "1" always (oneDNN's kernel, else Sluice's), unset: measured
// (or the table).
int WinogradForced() {
  static const int forced = ForcedByEnv("SLUICE_CONV_WINOGRAD");
  return forced;
}

// Whether WinogradConv3x3 runs a Winograd candidate with `spec` and output dims `y_dims`: NHWC
// in and out (its only layout) and an epilogue it has (Swish follows the convolution anyway),
// on a CPU with AVX2, with at least a 4x4 tile of output per MB of its transformed weights.
// Each of those bytes serves every tile once; with fewer tiles the products wait on memory
// (ResNet-50's 7x7 maps, one tile per 9 MB: alone, with its weights flushed, 1.76 against the
// direct kernel's 2.23 ms; in the network, 2.34 against 2.30).
// WinogradConv3x3's epilogue for `post`, if it has one (Swish: none, as it runs after the
// convolution, DnnlConv::Run).
std::optional<WinogradConv3x3::Epilogue> OwnEpilogue(ConvPostOp post) {
  switch (post) {
    case ConvPostOp::kNone:
    case ConvPostOp::kSwish:
      return WinogradConv3x3::kNone;
    case ConvPostOp::kRelu:
      return WinogradConv3x3::kRelu;
    case ConvPostOp::kClip:
      return WinogradConv3x3::kClip;
    case ConvPostOp::kLeakyRelu:
      return WinogradConv3x3::kLeakyRelu;
    default:
      return std::nullopt;
  }
}

bool OwnWinogradTakes(const ConvSpec& spec, const memory::dims& y_dims) {
  if (spec.spatial != 2 || !spec.x_nhwc || !spec.y_nhwc || !WinogradConv3x3::Available()) return false;
  const double tiles = static_cast<double>(y_dims[0]) * static_cast<double>((y_dims[2] + 3) / 4) *
                       static_cast<double>((y_dims[3] + 3) / 4);
  const double weight_bytes = static_cast<double>(WinogradConv3x3::WeightBytes(spec.w_dims[0], spec.w_dims[1]));
  return weight_bytes <= tiles * (1 << 20) && OwnEpilogue(spec.post).has_value();
}

}  // namespace

std::shared_ptr<DnnlConv::Impl::Entry> DnnlConv::Impl::MakeEntry(const ConvPiece& p, const ConvSpec& spec,
                                                                 const WindowGeometry& g, const ConvKey& key,
                                                                 bool try_winograd) {
  dnnl::engine& eng = DnnlEngine();
  const memory::dims& wd = spec.wd;
  const int spatial = spec.spatial;
  const bool x_nhwc = spec.x_nhwc, y_nhwc = spec.y_nhwc;
  const int64_t group = spec.group;
  const bool accumulate = spec.accumulate;
  const memory::desc user_x_md(p.x_dims, memory::data_type::f32, p.x_strides);
  const memory::desc user_y_md(p.y_dims, memory::data_type::f32, p.y_strides);
  memory::dims strides(g.strides.begin(), g.strides.end()), dilates;
  for (int i = 0; i < spatial; ++i) dilates.push_back(g.dilations[i] - 1);
  auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::any); };
  memory::desc bias_md = spec.has_bias ? memory::desc({spec.w_dims[0]}, memory::data_type::f32, tag::x) : memory::desc();
  // NHWC tensors are read and written in place; other layouts are oneDNN's choice.
  auto make_desc = [&](bool in_place, dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
    return dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, algorithm,
        in_place && x_nhwc ? user_x_md : any(p.x_dims), any(wd), bias_md,
        in_place && y_nhwc ? user_y_md : any(p.y_dims), strides, dilates, p.pad_l, p.pad_r);
  };
  const dnnl::primitive_attr attr = ConvAttr(spec.post, spec.alpha, spec.beta, spec.accumulate);
  auto e = std::make_shared<Entry>();
  e->key = key;
  e->w_dims = spec.w_dims;
  e->user_x_md = user_x_md;
  e->user_y_md = user_y_md;
  bool winograd = false;
  if (try_winograd) {
    // Winograd's transform in oneDNN's blocked layout, reorders included; where it has no
    // kernel (some post-ops, shapes), the direct one runs.
    try {
      e->pd = dnnl::convolution_forward::primitive_desc(make_desc(false, dnnl::algorithm::convolution_winograd),
                                                        attr, eng);
      winograd = true;
    } catch (const dnnl::error&) {
    }
  }
  e->winograd = winograd;
  if (!winograd) e->pd = dnnl::convolution_forward::primitive_desc(make_desc(true), attr, eng);
  if (!winograd && (x_nhwc || y_nhwc) && absl::StartsWith(e->pd.impl_info_str(), "ref")) {
    // oneDNN has no optimized kernel for this convolution on plain NHWC (grouped ones
    // with a few channels per group: its reference loop ran RegNet 20x slower than ONNX
    // Runtime); in its blocked layouts it does, and the reorders cost far less.
    e->pd = dnnl::convolution_forward::primitive_desc(make_desc(false), attr, eng);
    if (spatial == 2 && !x_nhwc && y_nhwc && p.x_dims[1] <= 4 && group == 1 &&
        user_x_md == memory::desc(p.x_dims, memory::data_type::f32, tag::nchw) &&
        e->pd.dst_desc() != user_y_md) {
      // A network's first convolution (RGB in NCHW, NHWC out) where oneDNN's kernel for NCHW
      // in writes its blocked layout (AVX2): on NHWC in, interleaved by NchwToNhwcFewChannels
      // below, its kernel writes y in place, where the blocked output's reorder cost about a
      // third of the convolution (RegNet's and ResNet's 112x112x32 stems).
      try {
        dnnl::convolution_forward::primitive_desc nhwc_in(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            memory::desc(p.x_dims, memory::data_type::f32, tag::nhwc), any(wd),
                                            bias_md, user_y_md, strides, dilates, p.pad_l, p.pad_r),
            attr, eng);
        if (!absl::StartsWith(nhwc_in.impl_info_str(), "ref")) e->pd = nhwc_in;
      } catch (const dnnl::error&) {
      }
    }
  } else if (!winograd && !x_nhwc && !y_nhwc && spatial == 2 && p.x_dims[1] >= 16 &&
             e->pd.src_desc() == memory::desc(p.x_dims, memory::data_type::f32, tag::nhwc)) {
    // NCHW tensors (training graphs keep NCHW) and a kernel that reads NHWC (oneDNN's
    // batch-reduce ones, its first choice for 1x1 and depthwise convolutions): its
    // reorders between NCHW and NHWC are the slow generic ones (14 ms each way for
    // 8x144x56x56, against 4 ms into 16-channel blocks), and EfficientNet-B0's training
    // step spent 250 ms in them. A kernel on 16-channel blocks runs instead where there
    // is one (asked for by layout: oneDNN 2.6's next_impl() crashed on some of these).
    try {
      auto blocked = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::nChw16c); };
      dnnl::convolution_forward::primitive_desc on_blocks(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                          blocked(p.x_dims), any(wd), bias_md, blocked(p.y_dims), strides,
                                          dilates, p.pad_l, p.pad_r),
          attr, eng);
      if (!absl::StartsWith(on_blocks.impl_info_str(), "ref")) e->pd = on_blocks;
    } catch (const dnnl::error&) {
    }
  } else if (!winograd && x_nhwc && PreferDirectDepthwise(wd, group, p.y_dims, e->pd.impl_info_str())) {
    // oneDNN 2.6 ranks its batch-reduce depthwise kernel first on NHWC, but its direct
    // one is 1.1-2x faster wherever rows are at least 14 wide (MobileNet, EfficientNet,
    // ShuffleNet, ConvNeXt's 7x7); on 7-wide rows batch-reduce stays ahead.
    while (!absl::StartsWith(e->pd.impl_info_str(), "jit_dw") && e->pd.next_impl()) {
    }
    if (!absl::StartsWith(e->pd.impl_info_str(), "jit_dw")) {
      e->pd = dnnl::convolution_forward::primitive_desc(make_desc(true), attr, eng);
    }
  }
  e->conv = dnnl::convolution_forward(e->pd);
  if (spatial == 2 && p.x_dims[1] <= 4 && user_x_md == memory::desc(p.x_dims, memory::data_type::f32, tag::nchw) &&
      e->pd.src_desc() == memory::desc(p.x_dims, memory::data_type::f32, tag::nhwc)) {
    e->interleave_src = true;
  } else if (e->pd.src_desc() != user_x_md) {
    dnnl::reorder::primitive_desc rpd(eng, user_x_md, eng, e->pd.src_desc(), DnnlUserScratchpad());
    e->to_src = dnnl::reorder(rpd);
    e->to_src_scratchpad = rpd.scratchpad_desc();
  }
  if (e->pd.dst_desc() != user_y_md) {
    dnnl::reorder::primitive_desc rpd(eng, e->pd.dst_desc(), eng, user_y_md, DnnlUserScratchpad());
    e->from_dst = dnnl::reorder(rpd);
    e->from_dst_scratchpad = rpd.scratchpad_desc();
    if (accumulate) {
      dnnl::reorder::primitive_desc back(eng, user_y_md, eng, e->pd.dst_desc(), DnnlUserScratchpad());
      e->to_dst = dnnl::reorder(back);
      e->to_dst_scratchpad = back.scratchpad_desc();
    }
  }
  return e;
}

std::shared_ptr<DnnlConv::Impl::Entry> DnnlConv::Impl::MakeOwnWinogradEntry(const ConvSpec& spec, const ConvKey& key,
                                                                            const Tensor& w) {
  auto e = std::make_shared<Entry>();
  e->key = key;
  e->w_dims = spec.w_dims;
  e->w_buffer = w.buffer();
  e->winograd = true;
  e->own_winograd = std::make_shared<const Entry::OwnWinograd>(Entry::OwnWinograd{
      WinogradConv3x3(static_cast<const float*>(w.raw_data()), spec.w_dims[0], spec.w_dims[1]),
      OwnEpilogue(spec.post).value_or(WinogradConv3x3::kNone), spec.alpha, spec.beta, spec.accumulate,
      spec.threads});
  return e;
}

// The weights in oneDNN's layout for `e`, into its own buffer (made on first use). The reorder
// is kept only for weights that change (training); fixed weights are reordered once, and a
// kept reorder into Winograd's layout holds buffers of its own (ResNet-50's: 40 MB).
void DnnlConv::Impl::ReorderWeights(Entry* e, const ConvSpec& spec, const Tensor& w, dnnl::stream& stream) const {
  const ConvSpec s = MergedGroups(spec, e->merge);
  if (!e->w_reorder) {
    e->user_w = memory({s.wd, memory::data_type::f32, WeightTag(s.spatial, s.group > 1)}, DnnlEngine(), nullptr);
    // Made once: the entry's argument sets name this memory.
    if (e->weights.get(true) == nullptr) e->weights = memory(e->pd.weights_desc(), DnnlEngine());
    e->w_reorder = dnnl::reorder(e->user_w, e->weights);
  }
  const void* user = w.raw_data();
  if (e->merge > 1) {
    ExpandGroups(static_cast<const float*>(user), spec.wd, e->merge, &e->merged_w);
    user = e->merged_w.data();
  }
  e->user_w.set_data_handle(const_cast<void*>(user));
  e->w_buffer = w.buffer();
  e->w_reorder->execute(stream, e->user_w, e->weights);
  stream.wait();
  e->user_w.set_data_handle(nullptr);
  if (!weights_vary.load(std::memory_order_relaxed)) {
    e->w_reorder.reset();
    e->merged_w = std::vector<float>();
  }
}

void DnnlConv::Impl::Execute(Entry& e, const ConvPiece& p, const Tensor* bias, dnnl::stream& stream,
                             int64_t out_channels) {
  if (e.own_winograd != nullptr) {
    const Entry::OwnWinograd& own = *e.own_winograd;
    own.conv.Run(p.x, {p.x_dims[0], p.x_dims[2], p.x_dims[3], p.pad_l[0], p.pad_l[1], p.y_dims[2], p.y_dims[3]},
                 bias != nullptr ? static_cast<const float*>(bias->raw_data()) : nullptr, own.epilogue, own.alpha,
                 own.beta, own.accumulate, own.threads, p.y);
    return;
  }
  std::unique_ptr<Entry::Bound> bound;
  {
    absl::MutexLock lock(&e.bound->mu);
    if (!e.bound->idle.empty()) {
      bound = std::move(e.bound->idle.back());
      e.bound->idle.pop_back();
    }
  }
  if (bound == nullptr) bound = MakeBound(e, DnnlEngine(), bias != nullptr, out_channels);
  bound->x.set_data_handle(const_cast<float*>(p.x));
  bound->y.set_data_handle(p.y);
  if (e.to_src || e.interleave_src) bound->src.set_data_handle(DnnlThreadBuffer(1, e.pd.src_desc().get_size()));
  if (e.from_dst) bound->dst.set_data_handle(DnnlThreadBuffer(2, e.pd.dst_desc().get_size()));
  if (bias) bound->bias.set_data_handle(const_cast<void*>(bias->raw_data()));
  if (e.to_src) ExecuteWithScratchpad(*e.to_src, stream, bound->to_src_args);
  if (e.interleave_src) {
    NchwToNhwcFewChannels(p.x, p.x_dims[0], p.x_dims[1], p.x_dims[2] * p.x_dims[3],
                          static_cast<float*>(bound->src.get_data_handle()));
  }
  if (e.to_dst) ExecuteWithScratchpad(*e.to_dst, stream, bound->to_dst_args);
  ExecuteWithScratchpad(e.conv, stream, bound->conv_args);
  if (e.from_dst) ExecuteWithScratchpad(*e.from_dst, stream, bound->from_dst_args);
  stream.wait();
  absl::MutexLock lock(&e.bound->mu);
  e.bound->idle.push_back(std::move(bound));
}

std::vector<double> DnnlConv::Impl::TimeInTurn(const std::vector<Entry*>& entries, const ConvPiece& p,
                                               const Tensor* bias, dnnl::stream& stream, int64_t out_channels) {
  int64_t span = 1;  // The floats from p.y to its last element, inclusive.
  for (size_t i = 0; i < p.y_dims.size(); ++i) span += (p.y_dims[i] - 1) * p.y_strides[i];
  std::vector<float> y(p.y, p.y + span);
  ConvPiece on_copy = p;
  on_copy.y = y.data();
  std::vector<double> ms(entries.size(), std::numeric_limits<double>::infinity());
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = *entries[i];
      if (e.own_winograd != nullptr) {
        EvictFromCaches(e.own_winograd->conv.weights(), static_cast<size_t>(e.own_winograd->conv.weight_bytes()));
      } else {
        EvictFromCaches(e.weights.get_data_handle(), e.pd.weights_desc().get_size());
      }
      const auto t = std::chrono::steady_clock::now();
      Execute(*entries[i], on_copy, bias, stream, out_channels);
      ms[i] = std::min(ms[i], MillisSince(t));
    }
  }
  return ms;
}

std::shared_ptr<DnnlConv::Impl::Entry> DnnlConv::Impl::PrepareEntry(const ConvPiece& p, const ConvSpec& spec,
                                                                    const WindowGeometry& g, const ConvKey& key,
                                                                    const Tensor& w, const Tensor* bias, bool tunable,
                                                                    TuningCache& tuning, dnnl::stream& stream) const {
  const bool candidate = !weights_vary.load(std::memory_order_relaxed) && WinogradForced() != 0 &&
                         WinogradCandidate(spec.wd, spec.group, g, p.y_dims);
  // Sluice's own Winograd kernel may run it too (oneDNN's, where it has one, comes first).
  const bool own = candidate && OwnWinogradTakes(spec, p.y_dims);
  bool winograd = candidate && (WinogradForced() == 1 || WinogradPays(spec.wd, spec.group, g, p.y_dims, spec.threads));
  bool use_own = false;
  if (candidate && WinogradForced() == -1 && tuning.enabled()) {
    const std::string tuning_key =
        absl::StrCat("conv3x3 ", absl::StrJoin(key, ","), " w ", absl::StrJoin(spec.w_dims, ","));
    if (std::optional<std::string> known = tuning.Find(tuning_key)) {
      winograd = *known == "winograd";
      use_own = own && *known == "sluice-winograd";
    } else if (tunable && tuning.TakeBudget()) {
      // Each way, three times, in turn; Winograd only when 10% faster than the direct kernel
      // (its transformed weights take 4x the memory, and its rounding is the direct kernel's
      // only at best), on this machine, with its neighbours as they are now.
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::shared_ptr<Entry>> ways = {MakeEntry(p, spec, g, key, false)};
      ReorderWeights(ways[0].get(), spec, w, stream);
      std::shared_ptr<Entry> theirs = MakeEntry(p, spec, g, key, true);
      if (theirs->winograd) {
        ReorderWeights(theirs.get(), spec, w, stream);
        ways.push_back(theirs);
      }
      if (own) ways.push_back(MakeOwnWinogradEntry(spec, key, w));
      std::vector<Entry*> timed;
      for (const auto& e : ways) timed.push_back(e.get());
      const std::vector<double> ms = TimeInTurn(timed, p, bias, stream, spec.w_dims[0]);
      tuning.Spend(MillisSince(start));
      size_t best = 0;
      for (size_t i = 1; i < ways.size(); ++i) {
        if (ms[i] < 0.9 * ms[0] && ms[i] < ms[best]) best = i;
      }
      const std::shared_ptr<Entry>& chosen = ways[best];
      const char* name = chosen->own_winograd != nullptr ? "sluice-winograd" : chosen->winograd ? "winograd" : "direct";
      // "direct 1.234 ms, winograd 0.567 ms" (inf: oneDNN has no Winograd kernel here), and
      // ", sluice winograd 0.456 ms" when Sluice's was timed.
      std::string detail = absl::StrFormat("direct %.3f ms, winograd %.3f ms", ms[0],
                                           theirs->winograd ? ms[1] : std::numeric_limits<double>::infinity());
      if (own) absl::StrAppendFormat(&detail, ", sluice winograd %.3f ms", ms.back());
      tuning.Put(tuning_key, name, detail);
      return chosen;
    }
  }
  if (use_own) return MakeOwnWinogradEntry(spec, key, w);
  std::shared_ptr<Entry> e = MakeEntry(p, spec, g, key, winograd);
  // Where the table or SLUICE_CONV_WINOGRAD=1 asks for Winograd and oneDNN has none here.
  if (winograd && !e->winograd && own) return MakeOwnWinogradEntry(spec, key, w);
  const int64_t merge = winograd ? 1 : GroupMergeFactor(spec.wd, spec.group);
  if (merge > 1 && GroupsMergedForced() != 0) {
    // Merged groups (GroupMergeFactor): measured against the groups as they are, once per
    // shape; the guess, where measuring is off or out of budget, is to merge where oneDNN has
    // no vector kernel for them (its GEMM or reference path).
    std::shared_ptr<Entry> merged = MakeEntry(p, MergedGroups(spec, merge), g, key, false);
    merged->merge = merge;
    const std::string impl = e->pd.impl_info_str();
    bool use_merged = GroupsMergedForced() == 1 || absl::StrContains(impl, "gemm") || absl::StartsWith(impl, "ref");
    const std::string groups_key =
        absl::StrCat("conv-groups ", absl::StrJoin(key, ","), " w ", absl::StrJoin(spec.w_dims, ","));
    std::optional<std::string> known;
    if (GroupsMergedForced() == -1 && tuning.enabled()) known = tuning.Find(groups_key);
    if (known) {
      use_merged = *known == "merged";
    } else if (GroupsMergedForced() == -1 && tunable && tuning.TakeBudget()) {
      // Both ways, three times each, alternating; merged only when 10% faster (its weights
      // take `merge` times the memory).
      const auto start = std::chrono::steady_clock::now();
      ReorderWeights(e.get(), spec, w, stream);
      ReorderWeights(merged.get(), spec, w, stream);
      const std::vector<double> ms = TimeInTurn({e.get(), merged.get()}, p, bias, stream, spec.w_dims[0]);
      const double plain_ms = ms[0], merged_ms = ms[1];
      tuning.Spend(MillisSince(start));
      use_merged = merged_ms < 0.9 * plain_ms;
      tuning.Put(groups_key, use_merged ? "merged" : "plain",
                 absl::StrFormat("%s %.3f ms, merged by %d %s %.3f ms", impl, plain_ms, merge,
                                 merged->pd.impl_info_str(), merged_ms));
      return use_merged ? merged : e;
    }
    if (use_merged) e = merged;
  }
  ReorderWeights(e.get(), spec, w, stream);
  return e;
}

absl::StatusOr<bool> DnnlConv::Run(const Tensor& x, const Tensor& w, const Tensor* bias,
                                   const WindowGeometry& g, int64_t group, ConvPostOp post,
                                   float alpha, float beta, int threads, Tensor* y, bool x_nhwc,
                                   bool y_nhwc, const CancellationManager* cancellation, bool accumulate) const {
  const int spatial = x.dims() - 2;
  if ((x_nhwc || y_nhwc) && spatial != 2) return false;
  {
    double multiply_adds = static_cast<double>(y->NumElements());
    for (int d = 1; d < w.dims(); ++d) multiply_adds *= static_cast<double>(w.dim_size(d));
    threads = ThreadsForWork(multiply_adds, threads);
  }
  UseOmpThreads(threads);
  if (spatial < 1 || spatial > 3 || x.dtype() != DT_FLOAT) return false;
  const std::vector<ConvPiece> pieces = Pieces(x, y, g, group, x_nhwc, y_nhwc, slice_multiply_adds_);
  if (pieces.empty()) return false;
  ConvSpec spec;
  spec.w_dims = Dims(w);
  // W as oneDNN sees it: grouped [g, O/g, I, ...] when grouped.
  spec.wd = spec.w_dims;
  if (group > 1) {
    spec.wd = {group, spec.w_dims[0] / group};
    spec.wd.insert(spec.wd.end(), spec.w_dims.begin() + 1, spec.w_dims.end());
  }
  spec.spatial = spatial;
  spec.group = group;
  spec.has_bias = bias != nullptr;
  spec.post = post;
  spec.alpha = alpha;
  spec.beta = beta;
  spec.x_nhwc = x_nhwc;
  spec.y_nhwc = y_nhwc;
  spec.accumulate = accumulate;
  spec.threads = threads;
  const memory::dims& w_dims = spec.w_dims;
  // One stream per thread: creating one per call costs as much as a small convolution.
  thread_local dnnl::stream stream(DnnlEngine());
  for (size_t piece_index = 0; piece_index < pieces.size(); ++piece_index) {
    if (piece_index > 0 && cancellation != nullptr && cancellation->IsCancelled()) return cancellation->status();
    const ConvPiece& p = pieces[piece_index];
    ConvKey key;
    for (const memory::dims* d : {&p.x_dims, &p.x_strides, &p.y_dims, &p.y_strides, &p.pad_l, &p.pad_r}) {
      key.insert(key.end(), d->begin(), d->end());
      key.push_back(-1);
    }
    key.insert(key.end(), {static_cast<int64_t>(post), x_nhwc, y_nhwc, accumulate, threads});
    std::shared_ptr<Impl::Entry> entry, stale;  // stale: the same convolution, other weights.
    {
      absl::MutexLock lock(&impl_->mu);
      entry = FindPreparedEntry(
          &impl_->entries, [&](const Impl::Entry& e) { return e.key == key && e.w_dims == w_dims; },
          [&](const Impl::Entry& e) { return e.w_buffer == w.buffer(); }, &stale);
    }
    if (stale != nullptr) impl_->weights_vary.store(true, std::memory_order_relaxed);
    if (stale != nullptr && stale->winograd) stale.reset();  // Made again as a direct convolution.
    if (entry == nullptr && stale != nullptr) {
      // New weights for a known convolution: its primitives stay, its weights are reordered again:
      // into its own buffer when no other call holds the entry (a training step's new weights),
      // else into a copy's (another run still reads the old ones).
      try {
        std::shared_ptr<Impl::Entry> e = std::move(stale);
        if (e.use_count() > 1) {  // Taken off the list under the lock: the count only falls.
          e = std::make_shared<Impl::Entry>(*e);
          e->bound = std::make_shared<Impl::Entry::BoundPool>();  // Its sets name the old weights.
          e->w_reorder.reset();
          e->weights = memory();  // The old ones stay with the runs that read them.
        }
        impl_->ReorderWeights(e.get(), spec, w, stream);
        entry = e;
        absl::MutexLock lock(&impl_->mu);
        impl_->entries.push_front(e);
      } catch (const dnnl::error&) {
        return false;
      }
    }
    if (entry == nullptr) {
      try {
        // Measured on whole convolutions only (not bands of a huge one: a measurement per band).
        entry = impl_->PrepareEntry(p, spec, g, key, w, bias, pieces.size() == 1,
                                    tuning_ != nullptr ? *tuning_ : TuningCache::Global(), stream);
        absl::MutexLock lock(&impl_->mu);
        impl_->entries.push_front(entry);
        if (impl_->entries.size() > Impl::kMaxEntries) impl_->entries.pop_back();
      } catch (const dnnl::error&) {
        if (piece_index > 0) return absl::InternalError("oneDNN took part of a convolution but not the rest");
        return false;  // Shapes or attrs oneDNN does not take: the caller falls back.
      }
    }
    try {
      Impl::Execute(*entry, p, bias, stream, w_dims[0]);
    } catch (const dnnl::error& e) {
      return absl::InternalError(std::string("oneDNN convolution failed: ") + e.what());
    }
  }
  if (post == ConvPostOp::kSwish) {
    float* values = y->flat<float>().data();
    OmpParallelFor(y->NumElements(), 1 << 14, threads,
                   [values](int64_t begin, int64_t end) { SiluInPlace(values + begin, end - begin); });
  }
  return true;
}

}  // namespace sluice
