// The measurements behind DnnlConv's choices among oneDNN's convolution implementations
// (kernels/dnnl_conv.cc, table in docs/performance.md): each layer shape alone, f32, batch 1,
// NHWC tensors as the NHWC layout pass keeps them, a fused Relu.
//
//   bazel run -c opt //bench:conv_algorithms_bench                      # all, 1 thread
//   OMP_NUM_THREADS=2 bazel run -c opt //bench:conv_algorithms_bench -- --benchmark_filter=Winograd
//
// BM_Direct3x3 / BM_Winograd3x3: a 3x3 stride-1 convolution I->O channels on an HxH map, oneDNN's
// direct kernel on NHWC against its Winograd kernel in the blocked layout it needs, with the
// reorders from and to NHWC timed too (as DnnlConv runs it); BM_SluiceWinograd3x3: Sluice's own
// F(4x4, 3x3) (the kernel DnnlConv measures where oneDNN has no Winograd: below AVX-512). BM_DepthwiseFirstChoice /
// BM_DepthwiseDirect: a KxK depthwise convolution (stride S) of C channels on NHWC, oneDNN's
// first-ranked implementation (batch-reduce) against its direct depthwise kernel. Compare the
// pairs' times in one run; the ratio is what matters, not the absolute time on a shared machine.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <omp.h>

#include "benchmark/benchmark.h"
#include "kernels/winograd_conv.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using tag = memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::primitive_attr ReluAttr() {
  dnnl::primitive_attr attr;
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  return attr;
}

// Runs `pd`'s convolution in `state`'s loop; src and dst in the user's NHWC when `user` is set
// and the primitive wants another layout (reordered in and out, timed).
void RunConvolution(benchmark::State& state, const dnnl::convolution_forward::primitive_desc& pd,
                    const memory::desc& user_src, const memory::desc& user_dst) {
  dnnl::engine& eng = Engine();
  dnnl::stream stream(eng);
  memory x(user_src, eng), y(user_dst, eng), src(pd.src_desc(), eng), dst(pd.dst_desc(), eng);
  memory w(pd.weights_desc(), eng), b({{pd.dst_desc().dims()[1]}, memory::data_type::f32, tag::a}, eng);
  for (memory* m : {&x, &w, &b}) {
    float* p = static_cast<float*>(m->get_data_handle());
    for (size_t i = 0; i < m->get_desc().get_size() / sizeof(float); ++i) p[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  }
  const bool reorder_in = pd.src_desc() != user_src, reorder_out = pd.dst_desc() != user_dst;
  std::optional<dnnl::reorder> to_src, from_dst;
  if (reorder_in) to_src = dnnl::reorder(x, src);
  if (reorder_out) from_dst = dnnl::reorder(dst, y);
  dnnl::convolution_forward conv(pd);
  const memory& in = reorder_in ? src : x;
  const memory& out = reorder_out ? dst : y;
  for (auto _ : state) {
    if (to_src) to_src->execute(stream, x, src);
    conv.execute(stream, {{DNNL_ARG_SRC, in}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, out}});
    if (from_dst) from_dst->execute(stream, dst, y);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
}

// Args: I, O, H.
void Conv3x3(benchmark::State& state, bool winograd) {
  const int64_t in = state.range(0), out = state.range(1), h = state.range(2);
  const memory::desc user_src({1, in, h, h}, memory::data_type::f32, tag::nhwc);
  const memory::desc user_dst({1, out, h, h}, memory::data_type::f32, tag::nhwc);
  auto any = [](memory::dims d) { return memory::desc(d, memory::data_type::f32, tag::any); };
  const memory::desc bias({out}, memory::data_type::f32, tag::a);
  try {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference,
        winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct,
        winograd ? any({1, in, h, h}) : user_src, any({out, in, 3, 3}), bias, winograd ? any({1, out, h, h}) : user_dst,
        {1, 1}, {1, 1}, {1, 1});
    RunConvolution(state, dnnl::convolution_forward::primitive_desc(d, ReluAttr(), Engine()), user_src, user_dst);
  } catch (const dnnl::error& e) {
    state.SkipWithError(e.what());  // No Winograd kernel on this CPU (oneDNN 2.6: AVX-512 only).
  }
}
void BM_Direct3x3(benchmark::State& state) { Conv3x3(state, false); }
void BM_Winograd3x3(benchmark::State& state) { Conv3x3(state, true); }

// Sluice's own F(4x4, 3x3) (kernels/winograd_conv.h) on the same NHWC tensors, Relu fused, on
// OMP_NUM_THREADS threads.
void BM_SluiceWinograd3x3(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1), h = state.range(2);
  if (!sluice::WinogradConv3x3::Available()) {
    state.SkipWithError("no AVX2 on this CPU");
    return;
  }
  std::vector<float> x(in * h * h), w(out * in * 9), b(out), y(out * h * h);
  for (std::vector<float>* v : {&x, &w, &b}) {
    for (size_t i = 0; i < v->size(); ++i) (*v)[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  }
  const sluice::WinogradConv3x3 conv(w.data(), out, in);
  const int threads = omp_get_max_threads();
  for (auto _ : state) {
    conv.Run(x.data(), {1, h, h, 1, 1, h, h}, b.data(), sluice::WinogradConv3x3::kRelu, 0, 0, false, threads,
             y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel("sluice_wino_4x3");
}

// The shapes of docs/performance.md's table: ResNet, Inception, GoogLeNet, DenseNet, SqueezeNet.
void Conv3x3Shapes(benchmark::internal::Benchmark* b) {
  for (auto [i, o, h] : {std::tuple{64, 64, 56}, {128, 128, 28}, {256, 256, 14}, {512, 512, 7}, {96, 128, 28},
                         {32, 128, 27}, {16, 64, 55}, {128, 256, 14}, {96, 208, 14}, {112, 224, 14}, {192, 384, 7},
                         {160, 320, 7}, {40, 40, 28}, {16, 16, 112}}) {
    b->Args({i, o, h});
  }
}
BENCHMARK(BM_Direct3x3)->Apply(Conv3x3Shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Winograd3x3)->Apply(Conv3x3Shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SluiceWinograd3x3)->Apply(Conv3x3Shapes)->Unit(benchmark::kMicrosecond);

// Args: C, H, K, S.
void Depthwise(benchmark::State& state, bool direct) {
  const int64_t c = state.range(0), h = state.range(1), k = state.range(2), s = state.range(3);
  const int64_t pad = k / 2, oh = (h + 2 * pad - k) / s + 1;
  const memory::desc src({1, c, h, h}, memory::data_type::f32, tag::nhwc);
  const memory::desc dst({1, c, oh, oh}, memory::data_type::f32, tag::nhwc);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                    memory::desc({c, 1, 1, k, k}, memory::data_type::f32, tag::any),
                                    memory::desc({c}, memory::data_type::f32, tag::a), dst, {s, s}, {pad, pad},
                                    {pad, pad});
  dnnl::convolution_forward::primitive_desc pd(d, ReluAttr(), Engine());
  if (direct) {
    while (std::string(pd.impl_info_str()).rfind("jit_dw", 0) != 0) {
      if (!pd.next_impl()) {
        state.SkipWithError("no direct depthwise kernel on this CPU");
        return;
      }
    }
  }
  RunConvolution(state, pd, src, dst);
}
void BM_DepthwiseFirstChoice(benchmark::State& state) { Depthwise(state, false); }
void BM_DepthwiseDirect(benchmark::State& state) { Depthwise(state, true); }

// MobileNet, EfficientNet, ShuffleNet and ConvNeXt depthwise layers, rows 7 to 112 wide.
void DepthwiseShapes(benchmark::internal::Benchmark* b) {
  for (auto [c, h, k, s] : {std::tuple{32, 112, 3, 1}, {144, 56, 3, 1}, {96, 112, 3, 2}, {24, 56, 3, 1},
                            {240, 28, 5, 1}, {120, 28, 5, 1}, {72, 56, 5, 2}, {96, 56, 7, 1}, {384, 14, 7, 1},
                            {768, 7, 7, 1}, {1152, 7, 5, 1}, {1152, 7, 3, 1}, {576, 14, 5, 2}, {480, 14, 3, 2}}) {
    b->Args({c, h, k, s});
  }
}
BENCHMARK(BM_DepthwiseFirstChoice)->Apply(DepthwiseShapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DepthwiseDirect)->Apply(DepthwiseShapes)->Unit(benchmark::kMicrosecond);

}  // namespace
