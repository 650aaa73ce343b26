// What the kernels that call oneDNN primitives share: the one CPU engine, and scratchpads the
// caller provides ("user" mode).
//
//   dnnl::primitive_attr attr = DnnlUserScratchpad();   // when making the primitive_desc
//   DnnlExecute(prim, pd.scratchpad_desc(), stream, {{DNNL_ARG_SRC, src}, ...});
#ifndef SLUICE_KERNELS_DNNL_UTIL_H_
#define SLUICE_KERNELS_DNNL_UTIL_H_

#include <list>
#include <memory>
#include <unordered_map>

#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {

// The process's CPU engine (made on first use, never destroyed).
dnnl::engine& DnnlEngine();

// Primitives are made on one thread and run on others (whichever runs the kernel), so they
// take their scratchpad from the caller ("user" mode) instead of oneDNN's own, which is kept
// per thread and was missing on the thread that ran: a grouped convolution that needs one
// (gemm:jit) wrote through a null pointer.
dnnl::primitive_attr DnnlUserScratchpad();

// This thread's scratchpad buffer, grown to fit `md`, as a memory of `md`. The stream runs in
// order on the calling thread, so the primitives one thread runs share it. Throws dnnl::error
// when out of memory.
dnnl::memory DnnlThreadScratchpad(const dnnl::memory::desc& md, const dnnl::engine& eng);
// The same buffer as a pointer, grown to at least `bytes` (for memory objects made once and
// pointed at it per call).
void* DnnlThreadScratchpadData(size_t bytes);

// This thread's buffer number `slot` (1 to kDnnlThreadBuffers - 1; 0 is the scratchpad's),
// grown to at least `bytes`: where kernels put the copies of their operands in oneDNN's blocked
// layouts for the length of one call. Kept per thread, not per prepared primitive: a training
// graph's 50 convolutions each holding blocked copies of their activations doubled its memory.
constexpr int kDnnlThreadBuffers = 4;
void* DnnlThreadBuffer(int slot, size_t bytes);

// Runs `prim` with `args` plus this thread's scratchpad, when `scratchpad` (the primitive_desc's
// scratchpad_desc()) needs one.
void DnnlExecute(const dnnl::primitive& prim, const dnnl::memory::desc& scratchpad, dnnl::stream& stream,
                 std::unordered_map<int, dnnl::memory> args);

// The cache lookup of the kernels that keep prepared primitives per problem, most recently used
// first (the caller holds the cache's lock): the entry for which same_problem holds moves to
// the front and is returned when same_weights holds too (its reordered weights are this call's);
// otherwise it is taken out into *stale (its primitive may serve again with new weights).
template <typename Entry, typename SameProblem, typename SameWeights>
std::shared_ptr<Entry> FindPreparedEntry(std::list<std::shared_ptr<Entry>>* entries, SameProblem same_problem,
                                         SameWeights same_weights, std::shared_ptr<Entry>* stale) {
  for (auto it = entries->begin(); it != entries->end(); ++it) {
    if (!same_problem(**it)) continue;
    if (same_weights(**it)) {
      std::shared_ptr<Entry> found = *it;
      entries->splice(entries->begin(), *entries, it);
      return found;
    }
    *stale = *it;
    entries->erase(it);  // Its weights are out of date; a new entry replaces it.
    return nullptr;
  }
  return nullptr;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_UTIL_H_
