#include "master/master.h"

#include "absl/strings/str_cat.h"
#include "framework/random_ids.h"
#include "framework/status.h"
#include "master/master_session.h"

namespace sluice {

Master::Master(const WorkerCache* workers, MasterOptions options)
    : workers_(workers), options_(std::move(options)) {}

Master::~Master() {
  absl::MutexLock lock(&mu_);
  for (auto& [handle, entry] : sessions_) entry.session->Close().IgnoreError();
}

std::vector<std::shared_ptr<MasterSession>> Master::TakeIdleSessions() {
  std::vector<std::shared_ptr<MasterSession>> idle;
  if (options_.session_idle_timeout == absl::InfiniteDuration()) return idle;
  const absl::Time now = options_.now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const SessionEntry& e = it->second;
    const absl::Time last_used = absl::FromUnixNanos(e.usage->last_used_ns.load());
    if (e.usage->calls_under_way.load(std::memory_order_acquire) == 0 &&
        now - last_used > options_.session_idle_timeout) {
      idle.push_back(e.session);
      sessions_.erase(it++);
    } else {
      ++it;
    }
  }
  return idle;
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

absl::StatusOr<std::string> Master::CreateSession(GraphDef graph, const ConfigProto& config,
                                                  const std::string& owner) {
  std::vector<DeviceAttributes> devices;
  SL_RETURN_IF_ERROR(ListDevices(&devices));
  const std::string handle = NewRandomHandle("session");
  // The session keeps the smaller node limit, and sends it to the workers with its graphs.
  ConfigProto limited = config;
  ResourceLimits* limits = limited.mutable_resource_limits();
  if (limits->max_graph_nodes() <= 0 || limits->max_graph_nodes() > options_.max_graph_nodes) {
    limits->set_max_graph_nodes(options_.max_graph_nodes);
  }
  auto session = std::make_shared<MasterSession>(handle, workers_, std::move(devices), limited);
  SL_RETURN_IF_ERROR(session->Create(std::move(graph)));
  std::vector<std::shared_ptr<MasterSession>> idle;
  absl::Status full;
  {
    absl::MutexLock lock(&mu_);
    idle = TakeIdleSessions();
    if (static_cast<int64_t>(sessions_.size()) >= options_.max_sessions) {
      full = absl::ResourceExhaustedError(absl::StrCat(
          "the master holds ", sessions_.size(), " sessions, its limit; close sessions no longer "
          "in use (TF_CloseSession, Session.close)"));
    } else {
      auto usage = std::make_shared<Usage>();
      usage->last_used_ns.store(absl::ToUnixNanos(options_.now()));
      sessions_[handle] = SessionEntry{std::move(session), owner, std::move(usage)};
    }
  }
  for (auto& s : idle) s->Close().IgnoreError();  // Outside mu_: closing calls the workers.
  if (!full.ok()) return full;
  return handle;
}

class Master::InUse {
 public:
  InUse() = default;
  ~InUse() {
    if (usage_ == nullptr) return;
    // Idle time counts from a call's end; without a timeout no one reads it.
    if (master_->options_.session_idle_timeout != absl::InfiniteDuration()) {
      usage_->last_used_ns.store(absl::ToUnixNanos(master_->options_.now()));
    }
    usage_->calls_under_way.fetch_sub(1, std::memory_order_release);
  }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  friend class Master;
  const Master* master_ = nullptr;
  std::shared_ptr<Usage> usage_;
};

absl::Status Master::UseSession(const std::string& handle, const std::string& owner,
                                std::shared_ptr<MasterSession>* session, InUse* in_use) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end() || it->second.owner != owner) {  // The same answer either way.
    return absl::AbortedError(absl::StrCat(
        "session '", handle, "' is not found (closed, idle too long, or the master restarted)"));
  }
  // While it is counted, TakeIdleSessions (under mu_ too) leaves the session alone.
  it->second.usage->calls_under_way.fetch_add(1, std::memory_order_relaxed);
  in_use->master_ = this;
  in_use->usage_ = it->second.usage;
  *session = it->second.session;
  return absl::OkStatus();
}

absl::Status Master::ExtendSession(const std::string& handle, const GraphDef& graph, const std::string& owner) {
  std::shared_ptr<MasterSession> session;
  InUse in_use;
  SL_RETURN_IF_ERROR(UseSession(handle, owner, &session, &in_use));
  return session->Extend(graph);
}

absl::Status Master::RunStep(const RunStepRequest& request, RunStepResponse* response) {
  return RunStep(RunStepArgs::Of(request), response);
}

absl::Status Master::RunStep(const RunStepArgs& request, RunStepResponse* response) {
  SL_RETURN_IF_ERROR(request_ids_.TrackUnique(request.request_id, "RunStep", "the master"));
  std::shared_ptr<MasterSession> session;
  InUse in_use;
  SL_RETURN_IF_ERROR(UseSession(request.session_handle, request.owner, &session, &in_use));
  return session->Run(request, response);
}

absl::Status Master::CloseSession(const std::string& handle, const std::string& owner) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(handle);
    if (it == sessions_.end() || it->second.owner != owner) {
      return absl::NotFoundError(absl::StrCat("session '", handle, "' is not found"));
    }
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  return session->Close();
}

absl::Status Master::Reset(const std::string& owner) {
  std::vector<std::shared_ptr<MasterSession>> closing;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second.owner == owner) {
        closing.push_back(std::move(it->second.session));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  absl::Status status;
  for (auto& session : closing) status.Update(session->Close());  // Outside mu_: calls workers.
  return status;
}

}  // namespace sluice
