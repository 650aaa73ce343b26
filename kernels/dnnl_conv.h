// Convolution through oneDNN for float tensors of 1 to 3 spatial dims. oneDNN picks its
// preferred (blocked) layouts; inputs and outputs are reordered from and to ONNX's NCHW, and
// the weights are reordered once per weight buffer and kept. Primitives are cached per input
// shape. Safe to call from several threads. A convolution of more than kGemmSliceMultiplyAdds
// runs image by image in bands of output rows, checking `cancellation` between bands.
//
//   DnnlConv conv;   // one per kernel
//   SL_ASSIGN_OR_RETURN(bool done, conv.Run(x, w, bias, geometry, group, ConvPostOp::kNone, y));
//   if (!done) { /* fall back to im2col + GEMM */ }
//
// x_nhwc / y_nhwc: the tensor's values are in N,H,W,C order (2-D only; see Conv's layouts).
// accumulate: y already holds values (a residual connection's) that the convolution adds to,
// before the activation (oneDNN's sum post-op).
#ifndef SLUICE_KERNELS_DNNL_CONV_H_
#define SLUICE_KERNELS_DNNL_CONV_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/cancellation.h"
#include "kernels/blas.h"
#include "kernels/conv_util.h"
#include "kernels/tuning_cache.h"

namespace sluice {

// An activation applied to the convolution's output as oneDNN post-ops. Its parameters
// (`alpha`, `beta` below): Clip's min and max, LeakyRelu's alpha, HardSigmoid's alpha and beta;
// Swish is y * sigmoid(y).
enum class ConvPostOp { kNone, kRelu, kClip, kLeakyRelu, kHardSwish, kHardSigmoid, kSigmoid, kSwish };

// The activation by its ONNX name ("" for none); false for other names.
bool ParseConvPostOp(const std::string& name, ConvPostOp* post);

// `post` applied to one value, for paths oneDNN does not run.
float ApplyConvPostOp(ConvPostOp post, float alpha, float beta, float v);

// The internal attr (on Onnx>Conv nodes) that makes the kernel call AssumeWeightsVary.
inline constexpr char kConvWeightsVaryAttr[] = "_weights_vary";

class DnnlConv {
 public:
  // `slice_multiply_adds`: the most work between two cancellation checks (smaller in tests).
  explicit DnnlConv(int64_t slice_multiply_adds = kGemmSliceMultiplyAdds);
  ~DnnlConv();
  // False (and nothing written) when oneDNN cannot run this convolution.
  // `threads`: how many threads oneDNN may use (its OpenMP team size is per calling thread).
  absl::StatusOr<bool> Run(const Tensor& x, const Tensor& w, const Tensor* bias,
                           const WindowGeometry& g, int64_t group, ConvPostOp post, float alpha,
                           float beta, int threads, Tensor* y, bool x_nhwc = false,
                           bool y_nhwc = false, const CancellationManager* cancellation = nullptr,
                           bool accumulate = false) const;
  // Weights will change from call to call (training): no Winograd from the first call on (its
  // weight transform would run on every change; without this, the kernel learns it at the
  // second call, after a first one that ran Winograd, with its larger rounding error).
  void AssumeWeightsVary();
  // Where measured choices (Winograd or the direct kernel, per shape) are looked up and kept:
  // TuningCache::Global() unless set (tests give their own). Not owned; set before Run.
  void UseTuningCache(TuningCache* cache);
  // oneDNN's name for the implementation of each prepared convolution, most recent first
  // ("jit_wino_4x3:avx512_core", "brgconv:avx512_core", ...), for tests and profiles, with
  // " +interleaved x", " +reordered x" and " +reordered y" where x or y is copied into or out
  // of the kernel's layout.
  std::vector<std::string> ImplementationNames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t slice_multiply_adds_;
  TuningCache* tuning_ = nullptr;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_CONV_H_
