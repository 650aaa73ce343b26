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
#include "framework/tensor_sequence.h"
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
                    std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || kIsFloat8<T>) {
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

std::string CompareValues(const Tensor& got, const Tensor& want) {
  if (want.dtype() != DT_VARIANT || got.dtype() != DT_VARIANT) return CompareTensors(got, want);
  if (auto w = GetSequence(want, "expected"); w.ok()) {
    auto g = GetSequence(got, "the output");
    if (!g.ok()) return std::string(g.status().message());
    if ((*g)->size() != (*w)->size()) {
      return absl::StrCat("a sequence of ", (*g)->size(), " tensors, want ", (*w)->size());
    }
    for (int64_t k = 0; k < (*w)->size(); ++k) {
      std::string diff = CompareValues((*g)->elements()[k], (*w)->elements()[k]);
      if (!diff.empty()) return absl::StrCat("sequence element ", k, ": ", diff);
    }
    return "";
  }
  auto w = GetOptional(want, "expected");
  if (!w.ok()) return std::string(w.status().message());
  auto g = GetOptional(got, "the output");
  if (!g.ok()) return std::string(g.status().message());
  if ((*g)->has_value() != (*w)->has_value()) {
    return (*w)->has_value() ? "an empty optional, want a value" : "an optional with a value, want none";
  }
  if (!(*w)->has_value()) return "";
  std::string diff = CompareValues((*g)->value(), (*w)->value());
  return diff.empty() ? "" : absl::StrCat("optional value: ", diff);
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

// Maps and sparse tensors, alone or inside sequences and optionals: Sluice has no such values.
bool HasUnsupportedType(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return HasUnsupportedType(type.sequence_type().elem_type());
  if (type.has_optional_type()) return HasUnsupportedType(type.optional_type().elem_type());
  return !type.has_tensor_type();
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
    if (i >= static_cast<int>(g.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(file.string(), " has no matching graph input"));
    }
    // The file holds the value of the input it names, else of the i-th one to feed; its ONNX
    // type says how to read it.
    const OnnxValue* target = i < static_cast<int>(required.size()) ? required[i] : &g.inputs[i];
    std::string name;
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxValueFile(file.string(), target->type, &name));
    for (const auto& in : g.inputs) {
      if (name.empty() || in.name != name || &in == target) continue;
      target = &in;
      SL_ASSIGN_OR_RETURN(t, ReadOnnxValueFile(file.string(), target->type));
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
    SL_ASSIGN_OR_RETURN(Tensor want, ReadOnnxValueFile(file.string(), g.outputs[i].type));
    if (want.dtype() == DT_UINT16 && got[i].dtype() == DT_BFLOAT16) {
      want = Tensor(DT_BFLOAT16, want.shape(), want.buffer());  // See the inputs above.
    }
    std::string diff = CompareValues(got[i], want);
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
  {
    // Map and sparse tensor values have no Sluice type: such cases are skipped, and say so;
    // everything else must pass.
    auto model = LoadOnnxModel((fs::path(dir) / "model.onnx").string());
    if (model.ok()) {
      for (const auto* list : {&model->graph().input(), &model->graph().output()}) {
        for (const auto& v : *list) {
          if (HasUnsupportedType(v.type())) {
            return finish(OnnxCaseResult::kSkip, absl::StrCat("graph value '", v.name(),
                                                              "' is or holds a map or sparse tensor"));
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
