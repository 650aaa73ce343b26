// One harness for kernel tests: describe a node, add inputs, build the kernel the registry
// selects for it (type attrs inferred from the inputs, as the C API does) and compare outputs.
//
//   KernelTester t("Add");
//   t.Attr("T", DT_FLOAT).Input<float>({2}, {1, 2}).Input<float>({}, {10});
//   ASSERT_OK(t.Run());
//   t.ExpectOutput<float>(0, {2}, {11, 12});
#ifndef SLUICE_KERNELS_KERNEL_TEST_UTIL_H_
#define SLUICE_KERNELS_KERNEL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "framework/node_attr.h"
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

  // Infers type attrs from the inputs (one per input arg unless `list_arg` groups them),
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
  std::vector<Tensor> outputs_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Device> device_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_KERNEL_TEST_UTIL_H_
