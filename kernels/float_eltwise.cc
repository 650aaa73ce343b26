#include "kernels/float_eltwise.h"

#include <algorithm>

#include "kernels/fast_math.h"

namespace sluice {

bool FloatEltwise(EltwiseAlgo algo, const float* x, float* y, int64_t n) {
  void (*in_place)(float*, int64_t) = algo == EltwiseAlgo::kExp       ? ExpInPlace
                                      : algo == EltwiseAlgo::kTanh    ? TanhInPlace
                                      : algo == EltwiseAlgo::kSigmoid ? SigmoidInPlace
                                                                      : nullptr;
  if (in_place == nullptr) return false;
  if (x != y) std::copy(x, x + n, y);
  in_place(y, n);
  return true;
}

}  // namespace sluice
