// Image ops with ONNX semantics.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

// ONNX ImageDecoder (opset 20).
REGISTER_OP("Onnx>ImageDecoder")
    .Input("encoded_stream: uint8")
    .Output("image: uint8")
    .Attr("pixel_format: {'RGB', 'BGR', 'Grayscale'} = 'RGB'")
    .Doc("Decodes a JPEG, PNG, BMP, TIFF, WebP, PNM or JPEG 2000 stream to [H, W, 3] (RGB, BGR) "
         "or [H, W, 1] (Grayscale) as PIL does.");

// ONNX Resize (version 11 and later; older Resize and Upsample are converted onto it). `axes`
// names the dims that roi, scales and sizes describe (empty: every dim, in order).
REGISTER_OP("Onnx>Resize")
    .Input("x: T")
    .Input("roi: Troi")
    .Input("scales: Tscales")
    .Input("sizes: Tsizes")
    .Output("y: T")
    .Attr("T: {half, bfloat16, float, double, int8, uint8, int16, uint16, int32, int64}")
    .Attr("Troi: list(type) >= 0")
    .Attr("Tscales: list(type) >= 0")
    .Attr("Tsizes: list(type) >= 0")
    .Attr("antialias: int = 0")
    .Attr("axes: list(int) = []")
    .Attr("coordinate_transformation_mode: {'half_pixel', 'half_pixel_symmetric', 'pytorch_half_pixel', "
          "'align_corners', 'asymmetric', 'tf_half_pixel_for_nn', 'tf_crop_and_resize'} = 'half_pixel'")
    .Attr("cubic_coeff_a: float = -0.75")
    .Attr("exclude_outside: int = 0")
    .Attr("extrapolation_value: float = 0.0")
    .Attr("keep_aspect_ratio_policy: {'stretch', 'not_larger', 'not_smaller'} = 'stretch'")
    .Attr("mode: {'nearest', 'linear', 'cubic'} = 'nearest'")
    .Attr("nearest_mode: {'round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'} = "
          "'round_prefer_floor'")
    .Attr("layout: {'NCHW', 'NHWC'} = 'NCHW'")
    .Doc("With layout NHWC (set by the importer between NHWC convolutions: 4-D float, N and C "
         "kept), X and Y keep N,C,H,W shapes but hold values in N,H,W,C order.");

}  // namespace sluice
