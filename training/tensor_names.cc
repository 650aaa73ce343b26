#include "training/tensor_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice {

std::string Prefixed(const std::string& prefix, const std::string& input) {
  if (absl::StartsWith(input, "^")) return absl::StrCat("^", prefix, input.substr(1));
  return prefix + input;
}

std::string NodeOf(const std::string& input) {
  std::string s = absl::StartsWith(input, "^") ? input.substr(1) : input;
  return s.substr(0, s.find(':'));
}

std::string ShortTensorName(const std::string& tensor) {
  return absl::EndsWith(tensor, ":0") ? tensor.substr(0, tensor.size() - 2) : tensor;
}

void PrefixNodes(const std::string& prefix, GraphDef* def) {
  for (NodeDef& n : *def->mutable_node()) {
    n.set_name(prefix + n.name());
    for (std::string& in : *n.mutable_input()) in = Prefixed(prefix, in);
  }
}

}  // namespace sluice
