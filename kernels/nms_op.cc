// NonMaxSuppression (ONNX): greedy suppression per batch and class.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/nms_util.h"

namespace sluice {
namespace {

class NonMaxSuppressionOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t center_point_box;
    SL_RETURN_IF_ERROR(ctx->GetAttr("center_point_box", &center_point_box));
    if (center_point_box != 0 && center_point_box != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("center_point_box must be 0 or 1, got ", center_point_box));
    }
    center_point_box_ = center_point_box == 1;
    for (const char* attr : {"Tmax_output_boxes_per_class", "Tiou_threshold", "Tscore_threshold"}) {
      DataTypeVector types;
      SL_RETURN_IF_ERROR(ctx->GetAttr(attr, &types));
      present_.push_back(!types.empty());
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    if (boxes.dims() != 3 || boxes.dim_size(2) != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NonMaxSuppression: boxes must be [num_batches, spatial_dimension, 4], got ",
          boxes.shape().DebugString()));
    }
    if (scores.dims() != 3 || scores.dim_size(0) != boxes.dim_size(0) ||
        scores.dim_size(2) != boxes.dim_size(1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NonMaxSuppression: scores must be [num_batches, num_classes, spatial_dimension] "
          "matching boxes ", boxes.shape().DebugString(), ", got ", scores.shape().DebugString()));
    }
    int64_t max_per_class = 0;
    float iou_threshold = 0.0f, score_threshold = 0.0f;
    bool has_score_threshold = false;
    int next = 2;
    auto scalar = [&](const char* what) -> absl::StatusOr<const Tensor*> {
      const Tensor& t = ctx->input(next++);
      if (t.NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NonMaxSuppression: ", what, " must hold one value, got shape ", t.shape().DebugString()));
      }
      return &t;
    };
    if (present_[0]) {
      SL_ASSIGN_OR_RETURN(const Tensor* t, scalar("max_output_boxes_per_class"));
      max_per_class = std::max<int64_t>(0, t->flat<int64_t>()[0]);
    }
    if (present_[1]) {
      SL_ASSIGN_OR_RETURN(const Tensor* t, scalar("iou_threshold"));
      iou_threshold = t->flat<float>()[0];
      if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat("NonMaxSuppression: iou_threshold must be in [0, 1], got ", iou_threshold));
      }
    }
    if (present_[2]) {
      SL_ASSIGN_OR_RETURN(const Tensor* t, scalar("score_threshold"));
      score_threshold = t->flat<float>()[0];
      has_score_threshold = true;
    }

    const int64_t num_batches = boxes.dim_size(0), num_boxes = boxes.dim_size(1);
    const int64_t num_classes = scores.dim_size(1);
    const float* box_data = boxes.data<float>();
    const float* score_data = scores.data<float>();
    std::vector<int64_t> selected;  // Triples [batch, class, box].
    std::vector<NmsCorners> corners(num_boxes);
    NmsOptions options;
    options.max_output = max_per_class;
    options.iou_threshold = iou_threshold;
    if (has_score_threshold) options.score_threshold = score_threshold;
    for (int64_t b = 0; b < num_batches && max_per_class > 0; ++b) {
      for (int64_t i = 0; i < num_boxes; ++i) {
        corners[i] = NmsToCorners(box_data + (b * num_boxes + i) * 4, center_point_box_);
      }
      for (int64_t c = 0; c < num_classes; ++c) {
        const NmsResult kept = GreedyNms(corners, score_data + (b * num_classes + c) * num_boxes, options);
        for (int64_t i : kept.indices) selected.insert(selected.end(), {b, c, i});
      }
    }
    Tensor* out;
    const int64_t rows = static_cast<int64_t>(selected.size()) / 3;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({rows, 3}), &out));
    std::copy(selected.begin(), selected.end(), out->data<int64_t>());
    return absl::OkStatus();
  }

 private:
  bool center_point_box_ = false;
  std::vector<bool> present_;  // max_output_boxes_per_class, iou_threshold, score_threshold.
};

REGISTER_KERNEL_BUILDER(Name("Onnx>NonMaxSuppression").Device(DEVICE_CPU), NonMaxSuppressionOp);

}  // namespace
}  // namespace sluice
