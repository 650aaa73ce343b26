// The ONNX import-and-run target with a structure-aware mutator (fuzz/onnx_mutator.h): inputs
// stay valid-looking models, so the fuzzer spends its time on extreme attributes, shapes and
// types rather than on protobuf parse errors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "fuzz/onnx_fuzz.h"
#include "fuzz/onnx_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::FuzzOnnxModelBytes(data, size, /*run=*/true);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned seed) {
  std::mt19937 rng(seed);
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) {
    // Unparseable: sometimes let the byte mutator try, else restart from a seed model.
    if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
    model = sluice::fuzz::SeedOnnxModel(rng());
  }
  const int steps = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < steps; ++i) sluice::fuzz::MutateOnnxModel(&model, &rng);
  std::string out;
  if (!model.SerializeToString(&out) || out.size() > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2,
                                            size_t size2, uint8_t* out, size_t max_out_size,
                                            unsigned seed) {
  std::mt19937 rng(seed);
  onnx::ModelProto a, b;
  if (!a.ParseFromArray(data1, static_cast<int>(size1)) ||
      !b.ParseFromArray(data2, static_cast<int>(size2))) {
    return 0;
  }
  sluice::fuzz::CrossOverOnnxModels(b, &a, &rng);
  std::string s;
  if (!a.SerializeToString(&s) || s.size() > max_out_size) return 0;
  std::memcpy(out, s.data(), s.size());
  return s.size();
}
