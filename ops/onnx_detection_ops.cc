// Detection and spatial sampling ops with ONNX semantics: NonMaxSuppression, RoiAlign and
// GridSample. Names, attrs and defaults are ONNX's; optional inputs are list(type) args of
// length 0 or 1.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Onnx>NonMaxSuppression")
    .Input("boxes: float")
    .Input("scores: float")
    .Input("max_output_boxes_per_class: Tmax_output_boxes_per_class")
    .Input("iou_threshold: Tiou_threshold")
    .Input("score_threshold: Tscore_threshold")
    .Output("selected_indices: int64")
    .Attr("Tmax_output_boxes_per_class: list({int64}) >= 0")
    .Attr("Tiou_threshold: list({float}) >= 0")
    .Attr("Tscore_threshold: list({float}) >= 0")
    .Attr("center_point_box: int = 0")
    .Doc("Per batch and class, greedily keeps the highest-scoring boxes (score > "
         "score_threshold) whose IoU with every kept box is <= iou_threshold, at most "
         "max_output_boxes_per_class (default 0: none). Rows are [batch, class, box].");

REGISTER_OP("Onnx>RoiAlign")
    .Input("x: T1")
    .Input("rois: T1")
    .Input("batch_indices: int64")
    .Output("y: T1")
    .Attr(absl::StrCat("T1: ", kIeeeFloatTypes))
    .Attr("coordinate_transformation_mode: {'half_pixel', 'output_half_pixel'} = 'half_pixel'")
    .Attr("mode: {'avg', 'max'} = 'avg'")
    .Attr("output_height: int >= 1 = 1")
    .Attr("output_width: int >= 1 = 1")
    .Attr("sampling_ratio: int >= 0 = 0")
    .Attr("spatial_scale: float = 1.0")
    .Doc("RoiAlign-10 is this op with coordinate_transformation_mode 'output_half_pixel'.");

REGISTER_OP("Onnx>AffineGrid")
    .Input("theta: T1")
    .Input("size: T2")
    .Output("grid: T1")
    .Attr(absl::StrCat("T1: ", kFloatTypes))
    .Attr("T2: {int64}")
    .Attr("align_corners: int = 0")
    .Doc("The GridSample grid [N, H, W, 2] (or [N, D, H, W, 3]) of theta [N, 2, 3] (or [N, 3, 4]) "
         "applied to the normalized pixel centres of size [N, C, H, W] (or [N, C, D, H, W]).");

REGISTER_OP("Onnx>GridSample")
    .Input("x: T1")
    .Input("grid: T2")
    .Output("y: T1")
    .Attr(absl::StrCat("T1: ", kIeeeFloatTypes))
    .Attr(absl::StrCat("T2: ", kIeeeFloatTypes))
    .Attr("align_corners: int = 0")
    .Attr("mode: {'bilinear', 'nearest', 'bicubic', 'linear', 'cubic'} = 'bilinear'")
    .Attr("padding_mode: {'zeros', 'border', 'reflection'} = 'zeros'")
    .Doc("Samples N x C x D1 x ... x Dr input at the normalized (x, y, ...) locations of an "
         "N x D1_out x ... x Dr_out x r grid (r = 2 for cubic). linear and cubic are "
         "GridSample-20's names for bilinear and bicubic.");

}  // namespace sluice
