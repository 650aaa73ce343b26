#include "kernels/dnnl_matmul.h"

#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/dnnl_util.h"
#include "kernels/threading.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

struct DnnlConstMatmul::Prepared {
  std::vector<int64_t> key;  // m, n, k and b's address.
  // The buffer b lies in: held, so its address is not reused for other values.
  std::shared_ptr<TensorBuffer> owner;
  memory::desc a_md, c_md, scratchpad;
  dnnl::matmul prim;
  memory weights;  // b^T in the primitive's layout.
};

struct DnnlConstMatmul::Impl {
  // A few per kernel (one per direction and shape); the most recently used first.
  static constexpr size_t kMaxEntries = 8;
  mutable absl::Mutex mu;
  mutable std::list<std::shared_ptr<const Prepared>> entries ABSL_GUARDED_BY(mu);
};

struct DnnlConstMatmul::Call::State {
  const Prepared& prepared;
  dnnl::stream& stream;
  memory a, c;
  std::unordered_map<int, memory> args;
};

DnnlConstMatmul::Call::Call(const Prepared& prepared) {
  dnnl::engine& eng = DnnlEngine();
  thread_local dnnl::stream stream(eng);
  state_.reset(new State{prepared, stream, memory(prepared.a_md, eng, nullptr), memory(prepared.c_md, eng, nullptr), {}});
  state_->args = {{DNNL_ARG_SRC, state_->a}, {DNNL_ARG_WEIGHTS, prepared.weights}, {DNNL_ARG_DST, state_->c}};
}

DnnlConstMatmul::Call::~Call() = default;

bool DnnlConstMatmul::Call::Run(const float* a, float* c) try {
  state_->a.set_data_handle(const_cast<float*>(a));
  state_->c.set_data_handle(c);
  // Asked for on each run: another primitive on this thread may have grown (moved) the buffer.
  if (state_->prepared.scratchpad.get_size() > 0) {
    state_->args[DNNL_ARG_SCRATCHPAD] = DnnlThreadScratchpad(state_->prepared.scratchpad, DnnlEngine());
  }
  state_->prepared.prim.execute(state_->stream, state_->args);
  state_->stream.wait();
  return true;
} catch (const dnnl::error&) {
  return false;
}

DnnlConstMatmul::DnnlConstMatmul() : impl_(std::make_unique<Impl>()) {}
DnnlConstMatmul::~DnnlConstMatmul() = default;

std::shared_ptr<const DnnlConstMatmul::Prepared> DnnlConstMatmul::Prepare(int64_t m, int64_t n, int64_t k,
                                                                          const Tensor& owner, const float* b,
                                                                          int threads) const {
  if (m <= 0 || n <= 0 || k <= 0) return nullptr;
  UseOmpThreads(threads);  // For the runs that follow on this thread, too.
  const std::vector<int64_t> key = {m, n, k, static_cast<int64_t>(reinterpret_cast<uintptr_t>(b))};
  {
    absl::MutexLock lock(&impl_->mu);
    for (auto it = impl_->entries.begin(); it != impl_->entries.end(); ++it) {
      if ((*it)->key == key) {
        if ((*it)->owner == owner.buffer()) {
          std::shared_ptr<const Prepared> found = *it;
          impl_->entries.splice(impl_->entries.begin(), impl_->entries, it);
          return found;
        }
        impl_->entries.erase(it);  // Other values at the same address: prepared again.
        break;
      }
    }
  }
  auto p = std::make_shared<Prepared>();
  p->key = key;
  p->owner = owner.buffer();
  try {
    dnnl::engine& eng = DnnlEngine();
    thread_local dnnl::stream stream(eng);
    const auto f32 = memory::data_type::f32;
    p->a_md = memory::desc({m, k}, f32, tag::ab);
    p->c_md = memory::desc({m, n}, f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a_md, memory::desc({k, n}, f32, tag::any), p->c_md),
                                    DnnlUserScratchpad(), eng);
    p->prim = dnnl::matmul(pd);
    p->scratchpad = pd.scratchpad_desc();
    // b [n, k] row-major is b^T [k, n] column-major ("ba").
    memory user_b({{k, n}, f32, tag::ba}, eng, const_cast<float*>(b));
    p->weights = memory(pd.weights_desc(), eng);
    dnnl::reorder(user_b, p->weights).execute(stream, user_b, p->weights);
    stream.wait();
  } catch (const dnnl::error&) {
    return nullptr;
  }
  absl::MutexLock lock(&impl_->mu);
  impl_->entries.push_front(p);
  if (impl_->entries.size() > Impl::kMaxEntries) impl_->entries.pop_back();
  return p;
}

}  // namespace sluice
