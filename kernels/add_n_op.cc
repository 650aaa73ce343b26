// AddN: the sum of N tensors of one shape (no broadcasting), accumulated in float for half and
// bfloat16.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// out[j] = a[j] + b[j], where out may be a or b (AddN writes into an input's buffer): floats and
// doubles in explicit 16-byte vectors, each loaded before it is stored (GCC's own vectorized
// loop checks for overlap and falls back to scalar code whenever the buffers are the same).
template <typename T>
void AddInto(const T* a, const T* b, T* out, int64_t n) {
  int64_t j = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    typedef T V __attribute__((vector_size(16)));
    constexpr int64_t kLanes = 16 / sizeof(T);
    for (; j + kLanes <= n; j += kLanes) {
      V x, y;
      std::memcpy(&x, a + j, sizeof(V));
      std::memcpy(&y, b + j, sizeof(V));
      x += y;
      std::memcpy(out + j, &x, sizeof(V));
    }
  }
  for (; j < n; ++j) out[j] = a[j] + b[j];
}

template <typename T>
class AddNOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    using C = typename sluice::Compute<T>::type;
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddN inputs must have one shape: input 0 is ", first.shape().DebugString(),
            ", input ", i, " is ", ctx->input(i).shape().DebugString()));
      }
    }
    // Into input 0's buffer when nothing else reads it (gradients summed in a backward pass).
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, first.shape(), &out));
    T* po = out->data<T>();
    const int64_t n = first.NumElements();
    absl::InlinedVector<const T*, 8> in;
    for (int i = 0; i < ctx->num_inputs(); ++i) in.push_back(ctx->input(i).data<T>());
    if constexpr (std::is_same_v<C, T>) {
      // Input by input, in order: each element sums as ((x0 + x1) + x2) + ..., as before.
      if (in.size() == 1) {
        if (po != in[0]) std::copy_n(in[0], n, po);
        return absl::OkStatus();
      }
      AddInto<T>(in[0], in[1], po, n);
      for (size_t i = 2; i < in.size(); ++i) AddInto<T>(po, in[i], po, n);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        C sum = C(in[0][j]);
        for (size_t i = 1; i < in.size(); ++i) sum += C(in[i][j]);
        po[j] = T(sum);
      }
    }
    return absl::OkStatus();
  }
};

#define SL_REGISTER_ADDN(T) \
  REGISTER_KERNEL_BUILDER(Name("AddN").Device(DEVICE_CPU).TypeConstraint<T>("T"), AddNOp<T>)
SL_REGISTER_ADDN(float);
SL_REGISTER_ADDN(double);
SL_REGISTER_ADDN(half);
SL_REGISTER_ADDN(bfloat16);
SL_REGISTER_ADDN(int32_t);
SL_REGISTER_ADDN(int64_t);

}  // namespace
}  // namespace sluice
