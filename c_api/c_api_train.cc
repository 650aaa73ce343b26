// SL_Trainer: sluice train's trainer (training/trainer.h) behind the C API.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/sluice_c_api.h"
#include "framework/status.h"
#include "training/trainer.h"

struct SL_Trainer {
  std::unique_ptr<sluice::OnnxTrainer> trainer;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<TF_Tensor>> outputs;
};

namespace {

void Set(TF_Status* status, const absl::Status& s) {
  if (status != nullptr) status->Set(s);
}

}  // namespace

extern "C" {

SL_Trainer* SL_NewTrainer(const char* path, const TF_SessionOptions* opts, TF_Status* status) {
  if (path == nullptr) {
    Set(status, absl::InvalidArgumentError("SL_NewTrainer: path is NULL"));
    return nullptr;
  }
  auto t = sluice::OnnxTrainer::Load(path, opts != nullptr ? opts->options : sluice::SessionOptions());
  if (!t.ok()) {
    Set(status, t.status());
    return nullptr;
  }
  Set(status, absl::OkStatus());
  auto* trainer = new SL_Trainer;
  trainer->trainer = *std::move(t);
  return trainer;
}

void SL_DeleteTrainer(SL_Trainer* trainer) { delete trainer; }

void SL_TrainerInitialize(SL_Trainer* trainer, TF_Status* status) {
  if (trainer == nullptr) return Set(status, absl::InvalidArgumentError("SL_TrainerInitialize: trainer is NULL"));
  Set(status, trainer->trainer->Initialize());
}

void SL_TrainerStep(SL_Trainer* trainer, const char* const* names, TF_Tensor* const* values,
                    int num_values, TF_Status* status) {
  if (trainer == nullptr || (num_values > 0 && (names == nullptr || values == nullptr)) || num_values < 0) {
    return Set(status, absl::InvalidArgumentError("SL_TrainerStep: NULL trainer or feeds"));
  }
  std::vector<std::pair<std::string, sluice::Tensor>> feeds;
  for (int i = 0; i < num_values; ++i) {
    if (names[i] == nullptr || values[i] == nullptr) {
      return Set(status, absl::InvalidArgumentError(absl::StrCat("SL_TrainerStep: feed ", i, " is NULL")));
    }
    auto value = sluice::ToRuntimeTensor(*values[i]);
    if (!value.ok()) {
      return Set(status, sluice::AddContext(value.status(), absl::StrCat("SL_TrainerStep: feed ", i,
                                                                        " ('", names[i], "')")));
    }
    feeds.emplace_back(names[i], *std::move(value));
  }
  auto out = trainer->trainer->Step(feeds);
  if (!out.ok()) return Set(status, out.status());
  // Numbers share the trainer's buffers; strings are copied into TF_TStrings.
  std::vector<std::string> output_names;
  std::vector<std::unique_ptr<TF_Tensor>> outputs;
  for (auto& [name, value] : *out) {
    auto t = sluice::NewCApiTensor(value);
    if (!t.ok()) {
      return Set(status, sluice::AddContext(t.status(),
                                            absl::StrCat("SL_TrainerStep: output '", name, "'")));
    }
    output_names.push_back(name);
    outputs.emplace_back(*t);
  }
  trainer->names = std::move(output_names);
  trainer->outputs = std::move(outputs);
  Set(status, absl::OkStatus());
}

int SL_TrainerNumOutputs(const SL_Trainer* trainer) {
  return trainer != nullptr ? static_cast<int>(trainer->outputs.size()) : 0;
}

const char* SL_TrainerOutputName(const SL_Trainer* trainer, int index) {
  if (trainer == nullptr || index < 0 || index >= static_cast<int>(trainer->names.size())) return nullptr;
  return trainer->names[index].c_str();
}

TF_Tensor* SL_TrainerOutput(const SL_Trainer* trainer, int index) {
  if (trainer == nullptr || index < 0 || index >= static_cast<int>(trainer->outputs.size())) return nullptr;
  return trainer->outputs[index].get();
}

void SL_TrainerSave(const SL_Trainer* trainer, const char* path, TF_Status* status) {
  if (trainer == nullptr || path == nullptr) return Set(status, absl::InvalidArgumentError("SL_TrainerSave: NULL argument"));
  Set(status, trainer->trainer->Save(path));
}

}  // extern "C"
