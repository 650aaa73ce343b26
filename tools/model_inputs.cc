#include "tools/model_inputs.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/status.h"
#include "framework/types.h"
#include "frontend/onnx/onnx_tensor.h"

namespace sluice {

absl::StatusOr<OnnxStepInputs> OnnxInputs(const OnnxGraph& g, const std::vector<std::string>& inputs) {
  OnnxStepInputs out;
  std::vector<const OnnxValue*> required;
  for (const auto& in : g.inputs) {
    if (!in.has_default) required.push_back(&in);
  }
  size_t next = 0;
  for (const std::string& spec : inputs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    const std::string& file = kv.size() == 2 ? kv[1] : kv[0];
    const OnnxValue* target = nullptr;
    if (kv.size() == 2) {
      for (const auto& in : g.inputs) {
        if (in.name == kv[0]) target = &in;
      }
      if (target == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("the model has no input named '", kv[0], "'"));
      }
    } else {
      if (next >= required.size()) {
        return absl::InvalidArgumentError(absl::StrCat("more --input files than the model's ",
                                                       required.size(), " inputs"));
      }
      target = required[next++];
    }
    // A TensorProto, or a SequenceProto or OptionalProto for inputs of those types.
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxValueFile(file, target->type));
    out.feeds.emplace_back(target->tensor, std::move(t));
  }
  if (inputs.empty()) {
    std::mt19937 rng(0);
    for (const OnnxValue* in : required) {
      SL_ASSIGN_OR_RETURN(Tensor t, RandomTensor(in->dtype, in->shape, &rng));
      out.random_inputs.push_back(in->name);
      out.feeds.emplace_back(in->tensor, std::move(t));
    }
  }
  return out;
}

absl::StatusOr<Tensor> RandomTensor(DataType dt, const PartialShape& shape, std::mt19937* rng) {
  DimVector dims;
  if (!shape.unknown_rank()) {
    for (int64_t d : shape.dims()) dims.push_back(d < 0 ? 1 : d);
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, TensorShape(dims)));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  bool ok = VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& v : t.flat<T>()) {
      if constexpr (std::is_same_v<T, tstring>) {
        v = "x";
      } else if constexpr (std::is_same_v<T, bool>) {
        v = uniform(*rng) > 0;
      } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        v = T(uniform(*rng), uniform(*rng));
      } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(static_cast<int>((uniform(*rng) + 1) * 4));
      } else {
        v = T(uniform(*rng));
      }
    }
  });
  if (!ok) return absl::UnimplementedError(absl::StrCat("no random values for ", DataTypeString(dt)));
  return t;
}

}  // namespace sluice
