#include "kernels/dnnl_util.h"

#include <cstdlib>
#include <utility>

namespace sluice {

dnnl::engine& DnnlEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::primitive_attr DnnlUserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory DnnlThreadScratchpad(const dnnl::memory::desc& md, const dnnl::engine& eng) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  const size_t need = md.get_size();
  if (need > buffer.bytes) {
    std::free(buffer.data);
    buffer.bytes = (need + 4095) / 4096 * 4096;
    buffer.data = std::aligned_alloc(64, buffer.bytes);
    if (buffer.data == nullptr) {
      buffer.bytes = 0;
      throw dnnl::error(dnnl_out_of_memory, "no memory for a oneDNN scratchpad");
    }
  }
  return dnnl::memory(md, eng, buffer.data);
}

void DnnlExecute(const dnnl::primitive& prim, const dnnl::memory::desc& scratchpad, dnnl::stream& stream,
                 std::unordered_map<int, dnnl::memory> args) {
  if (scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = DnnlThreadScratchpad(scratchpad, stream.get_engine());
  prim.execute(stream, args);
}

}  // namespace sluice
