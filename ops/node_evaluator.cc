#include "ops/node_evaluator.h"

#include <atomic>

namespace sluice {
namespace {

std::atomic<NodeEvaluator>& Installed() {
  static std::atomic<NodeEvaluator> evaluator{nullptr};
  return evaluator;
}

}  // namespace

void SetNodeEvaluator(NodeEvaluator evaluator) { Installed().store(evaluator, std::memory_order_release); }

NodeEvaluator GetNodeEvaluator() { return Installed().load(std::memory_order_acquire); }

}  // namespace sluice
