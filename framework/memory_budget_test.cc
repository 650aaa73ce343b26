#include "framework/memory_budget.h"

#include <memory>
#include <optional>

#include "framework/status_matchers.h"
#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(MemoryBudgetTest, ChargesWithinTheLimitAndReleases) {
  MemoryBudget budget(100);
  EXPECT_TRUE(budget.TryCharge(60));
  EXPECT_FALSE(budget.TryCharge(41));  // 101 > 100: nothing charged.
  EXPECT_EQ(budget.used(), 60u);
  EXPECT_TRUE(budget.TryCharge(40));
  EXPECT_FALSE(budget.TryCharge(UINT64_MAX));  // No wrap-around past the limit.
  budget.Release(100);
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_EQ(budget.peak(), 100u);
  budget.Charge(150);  // Past the limit, on purpose.
  EXPECT_TRUE(budget.Exceeded());
  budget.Release(150);
  EXPECT_FALSE(budget.Exceeded());
}

TEST(MemoryBudgetTest, TensorsAllocatedInScopeAreChargedUntilTheirLastReference) {
  auto budget = std::make_shared<MemoryBudget>(1 << 20);
  std::optional<Tensor> kept;
  {
    MemoryBudget::Scope scope(budget);
    SL_ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::Allocate(DT_FLOAT, TensorShape({1024})));
    EXPECT_EQ(budget->used(), 4096u);
    Tensor b(DT_INT64, TensorShape({16}));  // The form that cannot fail is charged too.
    EXPECT_EQ(budget->used(), 4096u + 128u);
    kept = a;
  }
  EXPECT_EQ(budget->used(), 4096u);  // b is gone; a lives on in `kept`, outside the scope.
  kept.reset();
  EXPECT_EQ(budget->used(), 0u);
  Tensor outside(DT_FLOAT, TensorShape({1024}));  // No scope: not charged.
  EXPECT_EQ(budget->used(), 0u);
}

TEST(MemoryBudgetTest, AllocatingPastTheLimitFailsWithResourceExhausted) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  MemoryBudget::Scope scope(budget);
  SL_ASSERT_OK_AND_ASSIGN(Tensor small, Tensor::Allocate(DT_FLOAT, TensorShape({200})));
  absl::StatusOr<Tensor> big = Tensor::Allocate(DT_FLOAT, TensorShape({100}));
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("over the session's memory limit of 1000 bytes (800 in use)"));
  EXPECT_EQ(budget->used(), 800u);
}

TEST(MemoryBudgetTest, ANullScopeKeepsTheCurrentBudget) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  MemoryBudget::Scope outer(budget);
  {
    MemoryBudget::Scope inner(nullptr);  // A function body run inside a kernel.
    EXPECT_EQ(MemoryBudget::Current(), budget);
  }
  {
    auto other = std::make_shared<MemoryBudget>(10);
    MemoryBudget::Scope inner(other);
    EXPECT_EQ(MemoryBudget::Current(), other);
  }
  EXPECT_EQ(MemoryBudget::Current(), budget);
}

}  // namespace
}  // namespace sluice
