// No exception escapes a kernel: the executor turns one into the node's error status.
#include <new>
#include <stdexcept>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"
#include "worker/executor.h"
#include "worker/local_rendezvous.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

REGISTER_OP("_TestThrow").Attr("what: {'bad_alloc', 'runtime_error'}");

// Throws as a kernel calling into the standard library or oneDNN may.
class TestThrowOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("what", &what_); }
  absl::Status Compute(OpKernelContext*) const override {
    if (what_ == "bad_alloc") throw std::bad_alloc();
    throw std::runtime_error("the library gave up");
  }

 private:
  std::string what_;
};
REGISTER_KERNEL_BUILDER(Name("_TestThrow").Device(DEVICE_CPU), TestThrowOp);

absl::Status RunThrowing(const std::string& what) {
  ThreadPool pool("test", 1);
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  attrs.set_incarnation(1);
  Device device(attrs, &pool);
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "node { name: 'thrower' op: '_TestThrow' attr { key: 'what' value { s: '" + what + "' } } }", &def));
  auto exec = Executor::Create(def, &device);
  if (!exec.ok()) return exec.status();
  LocalRendezvous r;
  Executor::Args args;
  args.rendezvous = &r;
  args.runner = &pool;
  return (*exec)->Run(args);
}

TEST(ExecutorExceptionsTest, AThrowingKernelFailsItsNode) {
  absl::Status s = RunThrowing("bad_alloc");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("'thrower'")) << s;
  s = RunThrowing("runtime_error");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'thrower'"), HasSubstr("the library gave up"))) << s;
}

}  // namespace
}  // namespace sluice
