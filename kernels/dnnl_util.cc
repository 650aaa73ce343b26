#include "kernels/dnnl_util.h"

#include <cstdlib>
#include <utility>

#include "kernels/cpu_isa.h"

namespace sluice {

dnnl::engine& DnnlEngine() {
  // SLUICE_MAX_ISA's cap reaches oneDNN before its first kernel is made.
  static dnnl::engine* engine = (MaxCpuIsa(), new dnnl::engine(dnnl::engine::kind::cpu, 0));
  return *engine;
}

dnnl::primitive_attr DnnlUserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* DnnlThreadBuffer(int slot, size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffers[kDnnlThreadBuffers];
  if (slot < 0 || slot >= kDnnlThreadBuffers) throw dnnl::error(dnnl_invalid_arguments, "no such thread buffer");
  Buffer& buffer = buffers[slot];
  if (bytes > buffer.bytes) {
    std::free(buffer.data);
    buffer.bytes = (bytes + 4095) / 4096 * 4096;
    buffer.data = std::aligned_alloc(64, buffer.bytes);
    if (buffer.data == nullptr) {
      buffer.bytes = 0;
      throw dnnl::error(dnnl_out_of_memory, "no memory for a oneDNN buffer");
    }
  }
  return buffer.data;
}

void* DnnlThreadScratchpadData(size_t bytes) { return DnnlThreadBuffer(0, bytes); }

dnnl::memory DnnlThreadScratchpad(const dnnl::memory::desc& md, const dnnl::engine& eng) {
  return dnnl::memory(md, eng, DnnlThreadScratchpadData(md.get_size()));
}

void DnnlExecute(const dnnl::primitive& prim, const dnnl::memory::desc& scratchpad, dnnl::stream& stream,
                 std::unordered_map<int, dnnl::memory> args) {
  if (scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = DnnlThreadScratchpad(scratchpad, stream.get_engine());
  prim.execute(stream, args);
}

}  // namespace sluice
