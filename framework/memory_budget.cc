#include "framework/memory_budget.h"

#include <utility>

namespace sluice {
namespace {

std::shared_ptr<MemoryBudget>& CurrentSlot() {
  static thread_local std::shared_ptr<MemoryBudget> current;
  return current;
}

}  // namespace

bool MemoryBudget::TryCharge(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || used > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  RaisePeak(used + bytes);
  return true;
}

void MemoryBudget::Charge(uint64_t bytes) {
  RaisePeak(used_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void MemoryBudget::Release(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

void MemoryBudget::RaisePeak(uint64_t total) {
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (total > peak && !peak_.compare_exchange_weak(peak, total, std::memory_order_relaxed)) {
  }
}

const std::shared_ptr<MemoryBudget>& MemoryBudget::Current() { return CurrentSlot(); }

MemoryBudget::Scope::Scope(const std::shared_ptr<MemoryBudget>& budget) : set_(budget != nullptr) {
  if (set_) previous_ = std::exchange(CurrentSlot(), budget);
}

MemoryBudget::Scope::~Scope() {
  if (set_) CurrentSlot() = std::move(previous_);
}

}  // namespace sluice
