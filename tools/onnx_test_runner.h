// Runs ONNX backend test cases (model.onnx with test_data_set_N/input_i.pb and output_i.pb)
// and compares outputs with one tolerance: |got - want| <= 1e-5 + 1e-3 * |want| for floating
// point, exact for integers, bools and strings (NaN matches NaN).
//
//   OnnxCaseResult r = RunOnnxTestCase("testdata/onnx/node/test_relu", {});
//   if (r.outcome == OnnxCaseResult::kFail) std::cout << r.reason;
#ifndef SLUICE_TOOLS_ONNX_TEST_RUNNER_H_
#define SLUICE_TOOLS_ONNX_TEST_RUNNER_H_

#include <string>
#include <vector>

#include "framework/tensor.h"
#include "master/session.h"

namespace sluice {

struct OnnxCaseResult {
  enum Outcome { kPass, kFail, kSkip };
  std::string name;
  Outcome outcome = kFail;
  std::string reason;
  double millis = 0;
};

// Empty when `got` matches `want`; otherwise what differs.
std::string CompareTensors(const Tensor& got, const Tensor& want);
// CompareTensors, and for sequences and optionals (DT_VARIANT) their lengths and presence and
// then each element the same way.
std::string CompareValues(const Tensor& got, const Tensor& want);

// `dir` holds model.onnx. Never throws; import or run errors are failures with the message.
// A non-empty `trace_file` gets a Chrome trace of the first data set's run.
OnnxCaseResult RunOnnxTestCase(const std::string& dir, const SessionOptions& options,
                               const std::string& trace_file = "");

// The case folders under `path` (itself when it holds model.onnx), sorted.
std::vector<std::string> FindOnnxTestCases(const std::string& path);

}  // namespace sluice

#endif  // SLUICE_TOOLS_ONNX_TEST_RUNNER_H_
