#include "master/master.h"

#include "absl/strings/str_cat.h"
#include "framework/random_ids.h"
#include "framework/status.h"
#include "master/master_session.h"

namespace sluice {

Master::Master(const WorkerCache* workers) : workers_(workers) {}

Master::~Master() {
  absl::MutexLock lock(&mu_);
  for (auto& [handle, session] : sessions_) session->Close().IgnoreError();
}

absl::Status Master::ListDevices(std::vector<DeviceAttributes>* devices) {
  devices->clear();
  for (const std::string& task : workers_->ListWorkers()) {
    WorkerInterface* w = workers_->GetWorker(task);
    std::vector<DeviceAttributes> more;
    SL_RETURN_IF_ERROR(w->GetStatus(&more), "listing devices of ", task);
    devices->insert(devices->end(), more.begin(), more.end());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Master::CreateSession(const GraphDef& graph, const ConfigProto& config) {
  std::vector<DeviceAttributes> devices;
  SL_RETURN_IF_ERROR(ListDevices(&devices));
  const std::string handle = NewRandomHandle("session");
  auto session = std::make_shared<MasterSession>(handle, workers_, std::move(devices), config);
  SL_RETURN_IF_ERROR(session->Create(graph));
  absl::MutexLock lock(&mu_);
  sessions_[handle] = std::move(session);
  return handle;
}

absl::StatusOr<std::shared_ptr<MasterSession>> Master::FindSession(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return absl::AbortedError(absl::StrCat("session '", handle, "' is not found (closed, or the master restarted)"));
  }
  return it->second;
}

absl::Status Master::ExtendSession(const std::string& handle, const GraphDef& graph) {
  SL_ASSIGN_OR_RETURN(auto session, FindSession(handle));
  return session->Extend(graph);
}

absl::Status Master::RunStep(const RunStepRequest& request, RunStepResponse* response) {
  SL_RETURN_IF_ERROR(request_ids_.TrackUnique(request.request_id, "RunStep", "the master"));
  SL_ASSIGN_OR_RETURN(auto session, FindSession(request.session_handle));
  return session->Run(request, response);
}

absl::Status Master::CloseSession(const std::string& handle) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(handle);
    if (it == sessions_.end()) {
      return absl::NotFoundError(absl::StrCat("session '", handle, "' is not found"));
    }
    session = std::move(it->second);
    sessions_.erase(it);
  }
  return session->Close();
}

absl::Status Master::Reset() {
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  absl::Status status;
  for (auto& [handle, session] : sessions) status.Update(session->Close());
  return status;
}

}  // namespace sluice
