// Graphs for tests of deadlines and cancellation, shared by the embedded and gRPC sessions'
// tests.
//
//   GraphDef g = CountingLoopGraph("", "");  // Feed "m:0" (int64), fetch "out:0" (float).
#ifndef SLUICE_MASTER_TEST_GRAPHS_H_
#define SLUICE_MASTER_TEST_GRAPHS_H_

#include <string>

#include "proto/graph.pb.h"

namespace sluice {

// x = 0; Loop M = m times: x = x + 1; out = Neg(x). The Loop on `loop_device`, Neg on
// `out_device` (either may be empty). M = 2^40 runs for hours; a negative M runs no iteration.
GraphDef CountingLoopGraph(const std::string& loop_device, const std::string& out_device);

}  // namespace sluice

#endif  // SLUICE_MASTER_TEST_GRAPHS_H_
