#include "frontend/onnx/isolated_inference.h"

#include <signal.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "absl/time/clock.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/shape_inference/implementation.h"

#if defined(__has_feature)
#define SL_HAS_FEATURE(x) __has_feature(x)
#else
#define SL_HAS_FEATURE(x) 0
#endif

namespace sluice {
namespace {

using ::testing::HasSubstr;

// y = Relu(x + w): x a [2, 3] float input, w a [3] initializer.
onnx::ModelProto SmallModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  auto* type = x->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_value(2);
  type->mutable_shape()->add_dim()->set_dim_value(3);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  for (float v : {1.0f, 2.0f, 3.0f}) w->add_float_data(v);
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("s");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("s");
  relu->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

TEST(InferShapesIsolatedTest, WhatInferenceAddsComesBackAndInitializersStay) {
  onnx::ModelProto m = SmallModel();
  ASSERT_OK(InferShapesIsolated(&m, "inference", [](onnx::ModelProto& model) {
    onnx::shape_inference::InferShapes(model);
  }));
  const onnx::ValueInfoProto* sum = nullptr;
  for (const auto& v : m.graph().value_info()) {
    if (v.name() == "s") sum = &v;
  }
  ASSERT_NE(sum, nullptr) << m.graph().DebugString();
  const auto& s = sum->type().tensor_type();
  EXPECT_EQ(s.elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(s.shape().dim_size(), 2);
  EXPECT_EQ(s.shape().dim(0).dim_value(), 2);
  EXPECT_EQ(s.shape().dim(1).dim_value(), 3);
  ASSERT_EQ(m.graph().initializer_size(), 1);
  EXPECT_EQ(m.graph().initializer(0).float_data(2), 3.0f);
}

// Before, a crash inside the ONNX library took the importing process with it.
TEST(InferShapesIsolatedTest, ACrashFailsTheCallNotTheProcess) {
  onnx::ModelProto m = SmallModel();
  absl::Status s = InferShapesIsolated(&m, "inference", [](onnx::ModelProto&) { raise(SIGSEGV); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("the ONNX library crashed"));
  EXPECT_EQ(m.graph().initializer_size(), 1);  // The model is as it was.
  EXPECT_EQ(m.graph().value_info_size(), 0);
}

// The parent's fault handlers do not run in the child (a fuzzer's wrote every contained crash
// as a finding): with one that exits quietly, the child still dies of the signal.
TEST(InferShapesIsolatedTest, TheParentsFaultHandlerDoesNotRunInTheChild) {
  struct sigaction quiet = {}, old = {};
  quiet.sa_handler = [](int) { _exit(0); };
  ASSERT_EQ(sigaction(SIGSEGV, &quiet, &old), 0);
  onnx::ModelProto m = SmallModel();
  absl::Status s = InferShapesIsolated(&m, "inference", [](onnx::ModelProto&) { raise(SIGSEGV); });
  sigaction(SIGSEGV, &old, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("signal 11"));
}

TEST(InferShapesIsolatedTest, AnExceptionBecomesInvalidArgumentWithItsMessage) {
  onnx::ModelProto m = SmallModel();
  absl::Status s = InferShapesIsolated(&m, "ONNX shape inference failed",
                                       [](onnx::ModelProto&) { throw std::runtime_error("bad dims"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), "ONNX shape inference failed: bad dims");
}

TEST(InferShapesIsolatedTest, AChildThatHangsIsKilledAtTheTimeout) {
  onnx::ModelProto m = SmallModel();
  const absl::Time start = absl::Now();
  absl::Status s = InferShapesIsolated(&m, "inference", [](onnx::ModelProto&) { sleep(60); },
                                       absl::Milliseconds(200));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

// Before, a model could make the library allocate without bound in the child (a shape input
// declaring 2^31 elements became an output of rank 2^31): the child's memory is capped.
TEST(InferShapesIsolatedTest, AChildThatAllocatesWithoutBoundRunsOutOfItsBudget) {
  onnx::ModelProto m = SmallModel();
  const absl::Time start = absl::Now();
  absl::Status s = InferShapesIsolated(&m, "inference", [](onnx::ModelProto&) {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < (1 << 20); ++i) blocks.emplace_back(new char[size_t{64} << 20]);  // 64 TiB.
  });
#if defined(__SANITIZE_ADDRESS__) || SL_HAS_FEATURE(address_sanitizer)
  // AddressSanitizer's operator new reports the failure and exits instead of throwing.
  EXPECT_TRUE(s.code() == absl::StatusCode::kResourceExhausted ||
              s.code() == absl::StatusCode::kInvalidArgument) << s;
#else
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("MiB of memory"));
#endif
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_EQ(m.graph().initializer_size(), 1);
}

}  // namespace
}  // namespace sluice
