// Random generators with ONNX semantics. A seed in [0, 2^32) draws what numpy's legacy
// generator draws after np.random.seed(int(seed)), the same values on every run; a negative
// seed (the default, standing for ONNX's absent one) draws from std::random_device.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

#define SL_RANDOM_FLOAT_TYPES "{half, float, double}"

REGISTER_OP("RandomUniform")
    .Output("output: dtype")
    .Attr("dtype: " SL_RANDOM_FLOAT_TYPES " = DT_FLOAT")
    .Attr("high: float = 1.0")
    .Attr("low: float = 0.0")
    .Attr("seed: float = -1.0")
    .Attr("shape: list(int)")
    .SetIsStateful()
    .Doc("np.random.uniform(low, high, shape).");

REGISTER_OP("RandomNormal")
    .Output("output: dtype")
    .Attr("dtype: " SL_RANDOM_FLOAT_TYPES " = DT_FLOAT")
    .Attr("mean: float = 0.0")
    .Attr("scale: float = 1.0")
    .Attr("seed: float = -1.0")
    .Attr("shape: list(int)")
    .SetIsStateful()
    .Doc("np.random.normal(mean, scale, shape).");

// The converters fill `dtype` from the input when ONNX leaves it out.
REGISTER_OP("RandomUniformLike")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: type")
    .Attr("dtype: " SL_RANDOM_FLOAT_TYPES)
    .Attr("high: float = 1.0")
    .Attr("low: float = 0.0")
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("np.random.uniform(low, high, input.shape).");

REGISTER_OP("RandomNormalLike")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: type")
    .Attr("dtype: " SL_RANDOM_FLOAT_TYPES)
    .Attr("mean: float = 0.0")
    .Attr("scale: float = 1.0")
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("np.random.normal(mean, scale, input.shape).");

REGISTER_OP("Bernoulli")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: " SL_RANDOM_FLOAT_TYPES)
    .Attr("dtype: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, "
          "uint32, uint64, bool}")
    .Attr("seed: float = -1.0")
    .SetIsStateful()
    .Doc("1 where a uniform draw is < the input probability, as ONNX's function body "
         "(RandomUniformLike, Less, Cast) defines it; the draws are RandomUniformLike's.");

#undef SL_RANDOM_FLOAT_TYPES

}  // namespace sluice
