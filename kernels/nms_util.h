// Greedy non-max suppression over one set of boxes, shared by ONNX's NonMaxSuppression
// (kernels/nms_op.cc, per batch and class) and TensorFlow's NonMaxSuppressionV3/4/5
// (kernels/tf_extra_nn_ops.cc). Candidates go by descending score, ties by lower index; each
// is dropped when it overlaps an already selected box too much. With a Soft-NMS sigma > 0
// (TensorFlow's V5) an overlap instead decays the candidate's score by exp(-iou^2 / (2 sigma))
// and the candidate goes back in line, as TensorFlow's CPU kernel does.
#ifndef SLUICE_KERNELS_NMS_UTIL_H_
#define SLUICE_KERNELS_NMS_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace sluice {

// A box as its corners, min before max on each axis.
struct NmsCorners {
  float y1, x1, y2, x2;
  float Area() const { return (y2 - y1) * (x2 - x1); }
};

// [y1, x1, y2, x2] with either diagonal (center_point_box: [x_center, y_center, width, height]).
NmsCorners NmsToCorners(const float* b, bool center_point_box);

// Intersection over union; 0 when either box is empty.
float NmsIoU(const NmsCorners& a, const NmsCorners& b);

struct NmsOptions {
  int64_t max_output = 0;
  float iou_threshold = 0.0f;
  // Only candidates scoring above it (NaN scores never are); none: every non-NaN score.
  std::optional<float> score_threshold;
  float soft_nms_sigma = 0.0f;
  // TensorFlow drops a candidate whose IoU equals the threshold; ONNX keeps it.
  bool suppress_at_threshold = false;
};

struct NmsResult {
  std::vector<int64_t> indices;  // In selection order.
  std::vector<float> scores;     // The (Soft-NMS decayed) score each was selected with.
};

NmsResult GreedyNms(const std::vector<NmsCorners>& boxes, const float* scores, const NmsOptions& options);

}  // namespace sluice

#endif  // SLUICE_KERNELS_NMS_UTIL_H_
