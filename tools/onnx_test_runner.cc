#include "tools/onnx_test_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/onnx_tensor.h"
#include "tools/chrome_trace.h"

namespace sluice {
namespace fs = std::filesystem;

std::string CompareTensors(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return absl::StrCat("dtype ", DataTypeString(got.dtype()), ", want ", DataTypeString(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return absl::StrCat("shape ", got.shape().DebugString(), ", want ", want.shape().DebugString());
  }
  std::string diff;
  VisitDataType(got.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto g = got.flat<T>();
    auto w = want.flat<T>();
    for (size_t i = 0; i < g.size(); ++i) {
      bool ok;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        double a = static_cast<double>(static_cast<float>(g[i]));
        double b = static_cast<double>(static_cast<float>(w[i]));
        if constexpr (std::is_same_v<T, double>) {
          a = g[i];
          b = w[i];
        }
        ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= 1e-5 + 1e-3 * std::fabs(b);
        if (!ok) diff = absl::StrCat("element ", i, " is ", a, ", want ", b);
      } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        ok = std::abs(g[i] - w[i]) <= 1e-5 + 1e-3 * std::abs(w[i]);
        if (!ok) diff = absl::StrCat("element ", i, " differs");
      } else if constexpr (std::is_same_v<T, tstring>) {
        ok = g[i] == w[i];
        if (!ok) diff = absl::StrCat("element ", i, " is \"", g[i], "\", want \"", w[i], "\"");
      } else {
        ok = g[i] == w[i];
        if (!ok) {
          diff = absl::StrCat("element ", i, " is ", static_cast<int64_t>(g[i]), ", want ",
                              static_cast<int64_t>(w[i]));
        }
      }
      if (!ok) return;
    }
  });
  return diff;
}

std::vector<std::string> FindOnnxTestCases(const std::string& path) {
  std::vector<std::string> cases;
  if (fs::exists(fs::path(path) / "model.onnx")) return {path};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

namespace {

// Test data holding sequences, maps or optionals rather than tensors.
bool IsTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto t;
  return t.ParseFromString(buf.str()) && t.data_type() != 0;
}

// Traces the run into `trace` unless it is null.
absl::Status RunDataSet(Session* session, const OnnxGraph& g, const fs::path& set,
                        RunMetadata* trace) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<const OnnxValue*> required;
  for (const auto& in : g.inputs) {
    if (!in.has_default) required.push_back(&in);
  }
  for (int i = 0;; ++i) {
    fs::path file = set / absl::StrCat("input_", i, ".pb");
    if (!fs::exists(file)) break;
    std::string name;
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxTensorFile(file.string(), &name));
    const OnnxValue* target = nullptr;
    for (const auto& in : g.inputs) {
      if (!name.empty() && in.name == name) target = &in;
    }
    if (target == nullptr) {
      if (i >= static_cast<int>(g.inputs.size())) {
        return absl::InvalidArgumentError(absl::StrCat(file.string(), " has no matching graph input"));
      }
      target = i < static_cast<int>(required.size()) ? required[i] : &g.inputs[i];
    }
    // ONNX 1.12 writes bfloat16 test data as uint16 tensors of the same bits.
    if (t.dtype() == DT_UINT16 && target->dtype == DT_BFLOAT16) {
      t = Tensor(DT_BFLOAT16, t.shape(), t.buffer());
    }
    feeds.emplace_back(target->tensor, std::move(t));
  }
  std::vector<std::string> fetches;
  for (const auto& out : g.outputs) fetches.push_back(out.tensor);
  std::vector<Tensor> got;
  RunOptions run_options;
  if (trace != nullptr) run_options.set_trace_level(RunOptions::FULL_TRACE);
  SL_RETURN_IF_ERROR(session->Run(run_options, feeds, fetches, {}, &got, trace));
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    fs::path file = set / absl::StrCat("output_", i, ".pb");
    if (!fs::exists(file)) continue;
    SL_ASSIGN_OR_RETURN(Tensor want, ReadOnnxTensorFile(file.string()));
    if (want.dtype() == DT_UINT16 && got[i].dtype() == DT_BFLOAT16) {
      want = Tensor(DT_BFLOAT16, want.shape(), want.buffer());  // See the inputs above.
    }
    std::string diff = CompareTensors(got[i], want);
    if (!diff.empty()) {
      return absl::InternalError(absl::StrCat(set.filename().string(), " output ", i, " ('",
                                              g.outputs[i].name, "'): ", diff));
    }
  }
  return absl::OkStatus();
}

}  // namespace

OnnxCaseResult RunOnnxTestCase(const std::string& dir, const SessionOptions& options,
                               const std::string& trace_file) {
  OnnxCaseResult r;
  r.name = fs::path(dir).filename().string();
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](OnnxCaseResult::Outcome o, std::string reason) {
    r.outcome = o;
    r.reason = std::move(reason);
    r.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && absl::StartsWith(e.path().filename().string(), "test_data_set_")) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  for (const auto& set : sets) {
    for (const auto& e : fs::directory_iterator(set, ec)) {
      if (e.path().extension() == ".pb" && !IsTensorFile(e.path().string())) {
        return finish(OnnxCaseResult::kSkip, absl::StrCat(
            "test data ", e.path().filename().string(), " is a sequence, map or optional, not a tensor"));
      }
    }
  }
  {
    // Sequence, map and optional values have no Sluice type yet: such cases are skipped, and
    // say so; everything else must pass.
    auto model = LoadOnnxModel((fs::path(dir) / "model.onnx").string());
    if (model.ok()) {
      for (const auto* list : {&model->graph().input(), &model->graph().output()}) {
        for (const auto& v : *list) {
          if (!v.type().has_tensor_type()) {
            return finish(OnnxCaseResult::kSkip, absl::StrCat("graph value '", v.name(),
                                                              "' is a sequence, map or optional, not a tensor"));
          }
        }
      }
    }
  }
  auto g = ImportOnnxFile((fs::path(dir) / "model.onnx").string());
  if (!g.ok()) return finish(OnnxCaseResult::kFail, StatusToString(g.status()));
  auto session = NewSession(options);
  if (!session.ok()) return finish(OnnxCaseResult::kFail, StatusToString(session.status()));
  absl::Status s = (*session)->Create(g->graph);
  if (!s.ok()) return finish(OnnxCaseResult::kFail, StatusToString(s));
  for (const auto& set : sets) {
    RunMetadata metadata;
    const bool traced = !trace_file.empty() && set == sets.front();
    s = RunDataSet(session->get(), *g, set, traced ? &metadata : nullptr);
    if (s.ok() && traced) s = WriteChromeTrace(trace_file, metadata.step_stats()).status();
    if (!s.ok()) {
      return finish(OnnxCaseResult::kFail, s.code() == absl::StatusCode::kInternal
                                               ? std::string(s.message())
                                               : StatusToString(s));
    }
  }
  return finish(OnnxCaseResult::kPass, "");
}

}  // namespace sluice
