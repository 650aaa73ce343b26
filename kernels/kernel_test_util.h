// One harness for kernel tests: describe a node, add inputs, build the kernel the registry
// selects for it (type attrs inferred from the inputs, as the C API does) and compare outputs.
//
//   KernelTester t("Add");
//   t.Attr("T", DT_FLOAT).Input<float>({2}, {1, 2}).Input<float>({}, {10});
//   ASSERT_OK(t.Run());
//   t.ExpectOutput<float>(0, {2}, {11, 12});
//
// Optional and variadic inputs are list args. By default each arg takes one input and a list
// arg takes what the args after it leave (with fewer inputs than args, the inputs go in order,
// one per list); ArgSizes says exactly how many each arg takes:
//   KernelTester c("Onnx>Clip");  // Clip(input, min: list, max: list): a min and no max.
//   c.Input<float>({2}, {-1, 3}).Input<float>({}, {0}).ArgSizes({1, 1, 0});
#ifndef SLUICE_KERNELS_KERNEL_TEST_UTIL_H_
#define SLUICE_KERNELS_KERNEL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "framework/node_attr.h"
#include "framework/status_matchers.h"
#include "framework/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"

namespace sluice {

class KernelTester {
 public:
  explicit KernelTester(std::string op);

  template <typename T>
  KernelTester& Attr(const std::string& name, const T& value) {
    AddNodeAttr(name, value, &node_);
    return *this;
  }
  template <typename T>
  KernelTester& Input(std::initializer_list<int64_t> shape, std::vector<T> values) {
    return Input<T>(std::vector<int64_t>(shape), std::move(values));
  }
  template <typename T>
  KernelTester& Input(const std::vector<int64_t>& shape, std::vector<T> values) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape(shape));
    auto f = t.flat<T>();
    EXPECT_EQ(f.size(), values.size()) << "input " << inputs_.size() << " of " << node_.op();
    for (size_t i = 0; i < f.size() && i < values.size(); ++i) f[i] = values[i];
    inputs_.push_back(t);
    return *this;
  }
  KernelTester& Input(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  // How many of the inputs, in order, each input arg of the op takes: 0 for an absent optional
  // input, any count for a list, 1 for any other arg. Run() checks them against the op.
  KernelTester& ArgSizes(std::vector<int> sizes) {
    arg_sizes_ = std::move(sizes);
    return *this;
  }

  // Groups the inputs per arg (ArgSizes, or the default above), infers type attrs from them,
  // fills defaults, validates, builds the kernel and runs it.
  absl::Status Run();

  const Tensor& output(int i) const { return outputs_[i]; }

  template <typename T>
  void ExpectOutput(int i, std::initializer_list<int64_t> shape, std::vector<T> want) const {
    ASSERT_LT(i, static_cast<int>(outputs_.size()));
    const Tensor& got = outputs_[i];
    ASSERT_EQ(got.dtype(), DataTypeToEnum<T>::value);
    ASSERT_EQ(got.shape(), TensorShape(shape)) << got.DebugString();
    auto g = got.flat<T>();
    ASSERT_EQ(g.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j) {
      if constexpr (std::is_floating_point_v<T>) {
        EXPECT_NEAR(g[j], want[j], 1e-5 + 1e-5 * std::abs(want[j])) << "element " << j;
      } else {
        EXPECT_EQ(g[j], want[j]) << "element " << j;
      }
    }
  }

 private:
  NodeDef node_;
  std::vector<Tensor> inputs_;
  std::vector<int> arg_sizes_;  // Empty: the default grouping.
  std::vector<Tensor> outputs_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Device> device_;
};

// Runs the tester and expects INVALID_ARGUMENT with `fragment` in the message.
void ExpectInvalid(KernelTester& t, const std::string& fragment);

}  // namespace sluice

#endif  // SLUICE_KERNELS_KERNEL_TEST_UTIL_H_
