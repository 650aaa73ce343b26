// TF_LoadSessionFromSavedModel: a SavedModel's graph for the asked tags imported into a graph,
// a session over it, its variables restored by the saver's own restore op and its init op run,
// as TensorFlow's loader does.
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "proto/saved_model.pb.h"

namespace sluice {
namespace {

// The MetaGraphDef whose tag set is exactly `want`; NOT_FOUND lists the tag sets there are.
absl::StatusOr<const MetaGraphDef*> FindMetaGraph(const SavedModel& model, const std::set<std::string>& want,
                                                  const std::string& path) {
  std::vector<std::string> available;
  for (const MetaGraphDef& mg : model.meta_graphs()) {
    std::set<std::string> tags(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
    if (tags == want) return &mg;
    available.push_back(absl::StrCat("{ ", absl::StrJoin(tags, ", "), " }"));
  }
  return absl::NotFoundError(absl::StrCat("Could not find meta graph def matching supplied tags: { ",
                                          absl::StrJoin(want, ", "), " } in ", path, "; its tag sets: ",
                                          available.empty() ? "none" : absl::StrJoin(available, " ")));
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// "op:0" -> "op".
std::string OpNameOf(absl::string_view tensor) {
  absl::ConsumePrefix(&tensor, "^");
  size_t colon = tensor.rfind(':');
  return std::string(colon == absl::string_view::npos ? tensor : tensor.substr(0, colon));
}

absl::Status StatusOf(TF_Status* s) { return s->status; }

// Runs the saver's restore op with the variables' prefix fed as its filename tensor.
absl::Status RestoreVariables(TF_Session* session, TF_Graph* graph, const SaverDef& saver, const std::string& prefix) {
  const std::string restore = OpNameOf(saver.restore_op_name());
  TF_Operation* restore_op = TF_GraphOperationByName(graph, restore.c_str());
  if (restore_op == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("the saver's restore op '", restore, "' is not in the graph"));
  }
  const std::string filename = OpNameOf(saver.filename_tensor_name());
  TF_Operation* filename_op = TF_GraphOperationByName(graph, filename.c_str());
  if (filename_op == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("the saver's filename tensor '", saver.filename_tensor_name(),
                                                   "' is not in the graph"));
  }
  TF_Tensor* name = TF_AllocateTensor(TF_STRING, nullptr, 0, sizeof(TF_TString));
  if (name == nullptr) return absl::ResourceExhaustedError("no memory for the variables' file name");
  TF_TString* ts = static_cast<TF_TString*>(TF_TensorData(name));
  TF_TString_Init(ts);
  TF_TString_Copy(ts, prefix.data(), prefix.size());
  TF_Output feed{filename_op, 0};
  std::unique_ptr<TF_Status, decltype(&TF_DeleteStatus)> s(TF_NewStatus(), TF_DeleteStatus);
  TF_SessionRun(session, nullptr, &feed, &name, 1, nullptr, nullptr, 0, &restore_op, 1, nullptr, s.get());
  TF_DeleteTensor(name);
  return AddContext(StatusOf(s.get()), absl::StrCat("restoring the variables from ", prefix));
}

absl::Status RunOp(TF_Session* session, TF_Graph* graph, const std::string& op_name, absl::string_view what) {
  TF_Operation* op = TF_GraphOperationByName(graph, op_name.c_str());
  if (op == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " '", op_name, "' is not in the graph"));
  std::unique_ptr<TF_Status, decltype(&TF_DeleteStatus)> s(TF_NewStatus(), TF_DeleteStatus);
  TF_SessionRun(session, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, &op, 1, nullptr, s.get());
  return AddContext(StatusOf(s.get()), absl::StrCat("running ", what, " '", op_name, "'"));
}

absl::StatusOr<TF_Session*> Load(const TF_SessionOptions* options, const std::string& dir,
                                 const std::set<std::string>& tags, TF_Graph* graph, TF_Buffer* meta_graph_out) {
  const std::string pb = dir + "/saved_model.pb";
  if (!FileExists(pb)) {
    if (FileExists(dir + "/saved_model.pbtxt")) {
      return absl::UnimplementedError(absl::StrCat(dir, " holds saved_model.pbtxt: only the binary saved_model.pb is read"));
    }
    return absl::NotFoundError(absl::StrCat("SavedModel file does not exist at: ", pb));
  }
  SL_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(pb, "SavedModel"));
  SavedModel model;
  if (!ParseFromBytes(bytes.data(), bytes.size(), &model)) {
    return absl::DataLossError(absl::StrCat(pb, " is not a SavedModel"));
  }
  bytes.clear();
  SL_ASSIGN_OR_RETURN(const MetaGraphDef* mg, FindMetaGraph(model, tags, pb));
  {
    absl::MutexLock lock(&graph->mu);
    SL_RETURN_IF_ERROR(ImportGraphDefLocked(graph, mg->graph_def(), ""), "importing the graph of ", pb);
  }
  std::unique_ptr<TF_Status, decltype(&TF_DeleteStatus)> s(TF_NewStatus(), TF_DeleteStatus);
  TF_Session* session = TF_NewSession(graph, options, s.get());
  if (session == nullptr) return StatusOf(s.get());
  auto fail = [&](absl::Status st) {
    TF_CloseSession(session, s.get());
    TF_DeleteSession(session, s.get());
    return st;
  };
  const std::string prefix = dir + "/variables/variables";
  if (!mg->saver_def().restore_op_name().empty() && FileExists(prefix + ".index")) {
    absl::Status st = RestoreVariables(session, graph, mg->saver_def(), prefix);
    if (!st.ok()) return fail(st);
  }
  // TensorFlow 2 records its initializer as this signature's one output.
  auto init = mg->signature_def().find("__saved_model_init_op");
  if (init != mg->signature_def().end()) {
    for (const auto& [key, info] : init->second.outputs()) {
      absl::Status st = RunOp(session, graph, OpNameOf(info.name()), "the init op");
      if (!st.ok()) return fail(st);
    }
  }
  if (meta_graph_out != nullptr) {
    absl::Status st = MessageToBuffer(*mg, meta_graph_out);
    if (!st.ok()) return fail(st);
  }
  return session;
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options, const TF_Buffer* run_options,
                                         const char* export_dir, const char* const* tags, int tags_len,
                                         TF_Graph* graph, TF_Buffer* meta_graph_def, TF_Status* status) {
  constexpr char kFn[] = "TF_LoadSessionFromSavedModel";
  if (export_dir == nullptr) return SetStatus(status, sluice::NullArgument(kFn, "export_dir")), nullptr;
  if (graph == nullptr) return SetStatus(status, sluice::NullArgument(kFn, "graph")), nullptr;
  if (tags_len < 0 || (tags_len > 0 && tags == nullptr)) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(kFn, ": bad tags (", tags_len, ")"))), nullptr;
  }
  if (meta_graph_def != nullptr && meta_graph_def->data != nullptr) {
    return SetStatus(status, absl::InvalidArgumentError(
                                 absl::StrCat(kFn, ": 'meta_graph_def' must be an empty TF_Buffer"))),
           nullptr;
  }
  std::set<std::string> tag_set;
  for (int i = 0; i < tags_len; ++i) {
    if (tags[i] == nullptr) return SetStatus(status, sluice::NullArgument(kFn, "a tag")), nullptr;
    tag_set.insert(tags[i]);
  }
  absl::StatusOr<TF_Session*> session = sluice::Load(session_options, export_dir, tag_set, graph, meta_graph_def);
  if (!session.ok()) {
    SetStatus(status, sluice::AddContext(session.status(), absl::StrCat("loading the SavedModel in ", export_dir)));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return *session;
}

}  // extern "C"
