// Random generators with ONNX semantics. A seed in [0, 2^32) draws what numpy's legacy
// generator draws after np.random.seed(int(seed)), the same values on every run; a negative
// seed (the default, standing for ONNX's absent one) draws from std::random_device.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Onnx>RandomUniform")
    .Output("output: dtype")
    .Attr(absl::StrCat("dtype: ", kIeeeFloatTypes, " = DT_FLOAT"))
    .Attr("high: float = 1.0")
    .Attr("low: float = 0.0")
    .Attr("seed: float = -1.0")
    .Attr("shape: list(int)")
    .SetIsStateful()
    .Doc("np.random.uniform(low, high, shape).");

REGISTER_OP("Onnx>RandomNormal")
    .Output("output: dtype")
    .Attr(absl::StrCat("dtype: ", kIeeeFloatTypes, " = DT_FLOAT"))
    .Attr("mean: float = 0.0")
    .Attr("scale: float = 1.0")
    .Attr("seed: float = -1.0")
    .Attr("shape: list(int)")
    .SetIsStateful()
    .Doc("np.random.normal(mean, scale, shape).");

// The converters fill `dtype` from the input when ONNX leaves it out.
REGISTER_OP("Onnx>RandomUniformLike")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: type")
    .Attr(absl::StrCat("dtype: ", kIeeeFloatTypes))
    .Attr("high: float = 1.0")
    .Attr("low: float = 0.0")
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("np.random.uniform(low, high, input.shape).");

REGISTER_OP("Onnx>RandomNormalLike")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: type")
    .Attr(absl::StrCat("dtype: ", kIeeeFloatTypes))
    .Attr("mean: float = 0.0")
    .Attr("scale: float = 1.0")
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("np.random.normal(mean, scale, input.shape).");

REGISTER_OP("Onnx>Bernoulli")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr(absl::StrCat("T1: ", kIeeeFloatTypes))
    .Attr(absl::StrCat("dtype: ", kNumericOrBoolTypes))
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("1 where a uniform draw is < the input probability, as ONNX's function body "
         "(RandomUniformLike, Less, Cast) defines it; the draws are RandomUniformLike's.");

}  // namespace sluice
