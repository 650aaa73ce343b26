// A per-session memory budget: the bytes of tensors a session's kernels allocate and still
// hold, against a limit. The executor makes a session's budget current on the thread that
// runs each of its kernels; every tensor buffer allocated there is charged to it and gives its
// bytes back when the last reference goes, wherever that happens.
//
//   auto budget = std::make_shared<MemoryBudget>(1 << 30);   // 1 GiB for this session.
//   {
//     MemoryBudget::Scope scope(budget);                     // While a kernel runs.
//     SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_FLOAT, shape));  // Charged, or
//   }                                                        // RESOURCE_EXHAUSTED.
//   if (budget->Exceeded()) ...                              // After the kernel: fail it.
#ifndef SLUICE_FRAMEWORK_MEMORY_BUDGET_H_
#define SLUICE_FRAMEWORK_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>

namespace sluice {

// Thread-safe.
class MemoryBudget {
 public:
  // `limit_bytes` > 0.
  explicit MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Charges `bytes` if that keeps the total within the limit; false (charging nothing) if not.
  bool TryCharge(uint64_t bytes);
  // Charges `bytes` even past the limit: for allocations that cannot fail where they happen.
  // Whoever runs the kernel checks Exceeded() afterwards.
  void Charge(uint64_t bytes);
  void Release(uint64_t bytes);

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  bool Exceeded() const { return used() > limit_; }

  // The budget of the kernel running on this thread; null when none.
  static const std::shared_ptr<MemoryBudget>& Current();

  // Makes `budget` current on this thread until destroyed. A null budget leaves the current
  // one in place (a function body run inside a kernel keeps its caller's budget).
  class Scope {
   public:
    explicit Scope(const std::shared_ptr<MemoryBudget>& budget);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    bool set_;
    std::shared_ptr<MemoryBudget> previous_;
  };

 private:
  void RaisePeak(uint64_t total);

  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_MEMORY_BUDGET_H_
