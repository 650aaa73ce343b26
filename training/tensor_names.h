// Names in GraphDefs, as the training rewrites use them.
//
//   Prefixed("replica_0/", "^x") == "^replica_0/x";   NodeOf("^x:1") == "x";
//   ShortTensorName("x:0") == "x";                    PrefixNodes("algorithm_0/", &def);
#ifndef SLUICE_TRAINING_TENSOR_NAMES_H_
#define SLUICE_TRAINING_TENSOR_NAMES_H_

#include <string>

#include "proto/graph.pb.h"

namespace sluice {

// "node:k" -> "prefix" + "node:k"; "^node" -> "^prefix" + "node".
std::string Prefixed(const std::string& prefix, const std::string& input);

// The node an input names: "node", "node:k" and "^node" all name "node".
std::string NodeOf(const std::string& input);

// "node" and "node:0" are one tensor; both are "node".
std::string ShortTensorName(const std::string& tensor);

// Prefixes every node's name and every input of `def`.
void PrefixNodes(const std::string& prefix, GraphDef* def);

}  // namespace sluice

#endif  // SLUICE_TRAINING_TENSOR_NAMES_H_
