#include "kernels/nms_util.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace sluice {

NmsCorners NmsToCorners(const float* b, bool center_point_box) {
  if (center_point_box) {  // [x_center, y_center, width, height]
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

float NmsIoU(const NmsCorners& a, const NmsCorners& b) {
  const float area_a = a.Area(), area_b = b.Area();
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float h = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float w = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float inter = h * w;
  return inter / (area_a + area_b - inter);
}

NmsResult GreedyNms(const std::vector<NmsCorners>& boxes, const float* scores, const NmsOptions& o) {
  struct Candidate {
    int64_t index;
    float score;
    // Selected boxes before this one were already applied to `score` (a candidate decayed
    // once by a box is not decayed by it again when it comes back).
    int64_t compared;
  };
  // The top is the highest score, then the lowest index.
  auto after = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(after)> queue(after);
  const int64_t n = static_cast<int64_t>(boxes.size());
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(scores[i])) continue;
    if (!o.score_threshold.has_value() || scores[i] > *o.score_threshold) queue.push({i, scores[i], 0});
  }
  const bool soft = o.soft_nms_sigma > 0.0f;
  const float scale = soft ? -0.5f / o.soft_nms_sigma : 0.0f;
  auto below_threshold = [&](float s) { return o.score_threshold.has_value() && s <= *o.score_threshold; };
  NmsResult r;
  while (static_cast<int64_t>(r.indices.size()) < o.max_output && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float original = c.score;
    bool suppressed = false;
    // Newest selections first: overlapping boxes tend to have close scores.
    for (int64_t j = static_cast<int64_t>(r.indices.size()) - 1; j >= c.compared; --j) {
      const float iou = NmsIoU(boxes[c.index], boxes[r.indices[j]]);
      if (o.suppress_at_threshold ? iou >= o.iou_threshold : iou > o.iou_threshold) {
        suppressed = true;
        break;
      }
      if (soft) c.score *= std::exp(scale * iou * iou);
      if (below_threshold(c.score)) break;
    }
    if (suppressed) continue;
    c.compared = static_cast<int64_t>(r.indices.size());
    if (c.score == original) {
      r.indices.push_back(c.index);
      r.scores.push_back(c.score);
    } else if (!below_threshold(c.score)) {
      queue.push(c);  // Decayed: back in line at its new score.
    }
  }
  return r;
}

}  // namespace sluice
