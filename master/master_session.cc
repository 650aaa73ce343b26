#include "master/master_session.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "framework/device_name.h"
#include "framework/graph.h"
#include "framework/rendezvous.h"
#include "framework/status.h"
#include "master/partition.h"
#include "master/placement_policy.h"
#include "master/placer.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// "x" and "x:0" name the same tensor; keys and caches use "x:0".
absl::StatusOr<TensorId> CanonicalTensor(const std::string& name, absl::string_view what) {
  auto id = ParseTensorName(name);
  if (!id.ok() || id->index == kControlSlot) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' is not a tensor name"));
  }
  return *id;
}

std::string Canonical(const TensorId& id) { return absl::StrCat(id.node, ":", id.index); }

std::string UniqueName(const Graph& g, std::string base) {
  std::string name = base;
  for (int i = 1; g.FindNode(name) != nullptr; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

}  // namespace

MasterSession::MasterSession(std::string handle, const WorkerCache* workers,
                             std::vector<DeviceAttributes> devices, ConfigProto config)
    : handle_(std::move(handle)),
      workers_(workers),
      devices_(std::move(devices)),
      config_(std::move(config)) {
  // Random start: step ids from different masters sharing workers do not collide.
  absl::BitGen gen;
  next_step_id_.store(absl::Uniform<int64_t>(gen, 1, int64_t{1} << 48));
}

MasterSession::~MasterSession() { Close().IgnoreError(); }

absl::Status MasterSession::Create(const GraphDef& graph) {
  SL_RETURN_IF_ERROR(Graph::FromGraphDef(graph, *OpRegistry::Global()).status());
  absl::MutexLock lock(&mu_);
  graph_def_ = graph;
  return absl::OkStatus();
}

absl::Status MasterSession::Extend(const GraphDef& graph) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  GraphDef merged = graph_def_;
  for (const NodeDef& n : graph.node()) *merged.add_node() = n;
  for (const auto& f : graph.library().function()) *merged.mutable_library()->add_function() = f;
  if (graph.has_versions()) *merged.mutable_versions() = graph.versions();
  SL_RETURN_IF_ERROR(Graph::FromGraphDef(merged, *OpRegistry::Global()).status());
  graph_def_ = std::move(merged);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<MasterSession::PreparedStep>> MasterSession::Prepare(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                      Graph::FromGraphDef(graph_def_, *OpRegistry::Global()));
  auto step = std::make_shared<PreparedStep>();
  std::vector<Node*> roots;
  std::vector<std::pair<std::string, int>> feed_nodes;  // Node ids: pruning may drop them.
  std::vector<std::pair<std::string, Node*>> fetch_nodes;

  // Each fed tensor becomes a client-terminated _Recv that its consumers read instead.
  for (const std::string& name : feeds) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "feed"));
    Node* src = graph->FindNode(id.node);
    if (src == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' names node '", id.node,
                                                     "', which is not in the graph"));
    }
    if (id.index >= src->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "': node '", id.node,
                                                     "' has ", src->num_outputs(), " outputs"));
    }
    NodeDef recv;
    recv.set_name(UniqueName(*graph, absl::StrCat("_feed/", id.node, "_", id.index)));
    recv.set_op("_Recv");
    recv.set_device(src->def().device());
    AddNodeAttr("tensor_type", src->output_types()[id.index], &recv);
    AddNodeAttr("tensor_name", Canonical(id), &recv);
    AddNodeAttr("send_device", kClientDevice, &recv);
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(kClientIncarnation), &recv);
    AddNodeAttr("recv_device", "", &recv);
    AddNodeAttr("client_terminated", true, &recv);
    SL_ASSIGN_OR_RETURN(Node* r, graph->AddNode(recv));
    std::vector<const Edge*> outs = src->out_edges();
    for (const Edge* e : outs) {
      Node* dst = e->dst;
      if (e->IsControl()) {
        // Waiting on a fed node means waiting on its feed; otherwise the unfed node would
        // have to run (and a Placeholder fails when it runs).
        graph->RemoveEdge(e);
        graph->AddControlEdge(r, dst);
        continue;
      }
      if (e->src_output != id.index) continue;
      int slot = e->dst_input;
      graph->RemoveEdge(e);
      SL_RETURN_IF_ERROR(graph->AddEdge(r, 0, dst, slot));
    }
    PreparedStep::Feed f;
    f.dtype = src->output_types()[id.index];
    f.node = src->name();
    if (src->type_string() == "Placeholder") {
      SL_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(src->def()), "shape", &f.shape));
    }
    step->feeds[Canonical(id)] = f;
    feed_nodes.emplace_back(Canonical(id), r->id());
  }

  // Each fetched tensor goes to the client through a client-terminated _Send beside it.
  for (const std::string& name : fetches) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "fetch"));
    Node* src = graph->FindNode(id.node);
    if (src == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("fetch '", name, "' names node '", id.node,
                                                     "', which is not in the graph"));
    }
    if (id.index >= src->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("fetch '", name, "': node '", id.node,
                                                     "' has ", src->num_outputs(), " outputs"));
    }
    NodeDef send;
    send.set_name(UniqueName(*graph, absl::StrCat("_fetch/", id.node, "_", id.index)));
    send.set_op("_Send");
    AddNodeAttr("T", src->output_types()[id.index], &send);
    AddNodeAttr("tensor_name", Canonical(id), &send);
    AddNodeAttr("send_device", "", &send);
    AddNodeAttr("send_device_incarnation", int64_t{0}, &send);
    AddNodeAttr("recv_device", kClientDevice, &send);
    AddNodeAttr("client_terminated", true, &send);
    AddNodeAttr(kColocateWithInputAttr, true, &send);
    SL_ASSIGN_OR_RETURN(Node* s, graph->AddNode(send));
    SL_RETURN_IF_ERROR(graph->AddEdge(src, id.index, s, 0));
    roots.push_back(s);
    fetch_nodes.emplace_back(Canonical(id), s);
  }
  for (const std::string& name : targets) {
    Node* n = graph->FindNode(name);
    if (n == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("target '", name, "' is not in the graph"));
    }
    roots.push_back(n);
  }

  // Prune: keep only what the fetches and targets depend on.
  std::vector<bool> keep(graph->num_node_ids(), false);
  std::vector<Node*> stack = roots;
  for (Node* n : roots) keep[n->id()] = true;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      if (!keep[e->src->id()]) {
        keep[e->src->id()] = true;
        stack.push_back(e->src);
      }
    }
  }
  for (Node* n : graph->nodes()) {
    if (!keep[n->id()]) graph->RemoveNode(n);
  }

  std::string default_device = devices_.front().name();
  absl::flat_hash_map<std::string, PartialShape> feed_shapes;
  for (const auto& [name, f] : step->feeds) feed_shapes[name] = f.shape;
  // A stateful node keeps the device it got first, whatever later signatures' placement
  // would choose: its state (a variable's value, a random stream) lives there.
  absl::flat_hash_set<std::string> device_names;
  for (const auto& d : devices_) device_names.insert(d.name());
  for (Node* n : graph->nodes()) {
    auto it = stateful_devices_.find(n->name());
    if (it != stateful_devices_.end() && device_names.contains(it->second)) {
      n->mutable_def()->set_device(it->second);
    }
  }
  SL_RETURN_IF_ERROR(ApplyPlacementOptions(config_.placement(), devices_, feed_shapes, graph.get()));
  SL_RETURN_IF_ERROR(PlaceGraph(graph.get(), devices_, default_device));
  for (Node* n : graph->nodes()) {
    // _Send and _Recv are remade for each signature; only the graph's own nodes count.
    if (n->op_def().is_stateful() && !absl::StartsWith(n->type_string(), "_")) {
      stateful_devices_.emplace(n->name(), n->assigned_device());
    }
  }

  absl::flat_hash_map<std::string, uint64_t> incarnations;
  for (const auto& d : devices_) incarnations[d.name()] = d.incarnation();
  auto incarnation_of = [&](const std::string& device) { return incarnations[device]; };

  // Now that devices are known, complete the client-side attrs and the keys.
  std::map<std::string, std::string> feed_device, fetch_device;
  for (auto& [name, id] : feed_nodes) {
    Node* r = graph->node(id);
    if (r == nullptr) continue;  // Fed but unused: nothing to send.
    AddNodeAttr("recv_device", r->assigned_device(), r->mutable_def());
    feed_device[name] = r->assigned_device();
  }
  for (auto& [name, s] : fetch_nodes) {
    AddNodeAttr("send_device", s->assigned_device(), s->mutable_def());
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(incarnation_of(s->assigned_device())),
                s->mutable_def());
    s->mutable_def()->mutable_attr()->erase(kColocateWithInputAttr);
    fetch_device[name] = s->assigned_device();
  }

  SL_ASSIGN_OR_RETURN(auto partitions, PartitionByDevice(*graph, incarnation_of));

  // One registered graph per task, holding that task's device partitions.
  std::map<std::string, GraphDef> by_task;
  for (auto& [device, def] : partitions) {
    SL_ASSIGN_OR_RETURN(DeviceName dn, DeviceName::Parse(device));
    GraphDef& task_graph = by_task[dn.TaskName()];
    for (auto& n : *def.mutable_node()) *task_graph.add_node() = std::move(n);
    *task_graph.mutable_library() = def.library();
    *task_graph.mutable_versions() = def.versions();
  }
  std::map<std::string, int> task_part;
  for (auto& [task, def] : by_task) {
    WorkerInterface* worker = workers_->GetWorker(task);
    if (worker == nullptr) {
      Deregister(*step);
      return absl::UnavailableError(absl::StrCat("no worker for task ", task));
    }
    RegisterGraphRequest req;
    req.session_handle = handle_;
    req.graph_def = def;
    RegisterGraphResponse resp;
    absl::Status s = worker->RegisterGraph(req, &resp);
    if (!s.ok()) {
      Deregister(*step);
      return s;
    }
    task_part[task] = static_cast<int>(step->parts.size());
    step->parts.push_back({task, worker, resp.graph_handle});
    step->partition_graphs.push_back(std::move(def));
  }
  auto part_of = [&](const std::string& device) {
    return task_part.at(DeviceName::Parse(device)->TaskName());
  };
  for (auto it = step->feeds.begin(); it != step->feeds.end();) {
    auto d = feed_device.find(it->first);
    if (d == feed_device.end()) {
      step->feeds.erase(it++);  // Pruned away: the value is accepted and ignored.
      continue;
    }
    it->second.key = Rendezvous::CreateKey(kClientDevice, kClientIncarnation, d->second,
                                           it->first, FrameAndIter{});
    it->second.part = part_of(d->second);
    ++it;
  }
  for (auto& [name, device] : fetch_device) {
    step->fetches[name] = PreparedStep::Fetch{
        Rendezvous::CreateKey(device, incarnation_of(device), kClientDevice, name, FrameAndIter{}),
        part_of(device)};
  }
  return step;
}

void MasterSession::ForgetPreparedSteps() {
  absl::flat_hash_map<std::string, std::shared_ptr<PreparedStep>> cache;
  {
    absl::MutexLock lock(&mu_);
    cache.swap(cache_);
    devices_stale_ = true;
  }
  for (auto& [sig, step] : cache) Deregister(*step);  // Best effort: they may be gone already.
}

void MasterSession::Deregister(const PreparedStep& step) {
  for (const auto& p : step.parts) p.worker->DeregisterGraph(p.graph_handle).IgnoreError();
}

absl::Status MasterSession::Run(const RunStepRequest& req, RunStepResponse* resp) {
  // Canonical names, with duplicates rejected and fetches of fed tensors answered directly.
  absl::flat_hash_map<std::string, const Tensor*> fed;
  std::vector<std::string> feed_names, fetch_names;
  for (const auto& [name, value] : req.feeds) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "feed"));
    std::string c = Canonical(id);
    if (!fed.emplace(c, &value).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is fed more than once"));
    }
    if (!value.IsInitialized()) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has no value"));
    }
    feed_names.push_back(c);
  }
  std::vector<std::string> fetch_canonical;
  for (const std::string& name : req.fetches) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "fetch"));
    std::string c = Canonical(id);
    fetch_canonical.push_back(c);
    if (!fed.contains(c)) fetch_names.push_back(c);
  }
  std::vector<std::string> targets = req.targets;
  std::sort(feed_names.begin(), feed_names.end());
  std::sort(fetch_names.begin(), fetch_names.end());
  fetch_names.erase(std::unique(fetch_names.begin(), fetch_names.end()), fetch_names.end());
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  const std::string signature = absl::StrCat(absl::StrJoin(feed_names, ","), "|",
                                             absl::StrJoin(fetch_names, ","), "|",
                                             absl::StrJoin(targets, ","));
  std::shared_ptr<PreparedStep> step;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    auto it = cache_.find(signature);
    if (it != cache_.end()) {
      step = it->second;
    } else {
      if (devices_stale_) {
        std::vector<DeviceAttributes> devices;
        for (const std::string& task : workers_->ListWorkers()) {
          std::vector<DeviceAttributes> more;
          SL_RETURN_IF_ERROR(workers_->GetWorker(task)->GetStatus(&more), "listing devices of ", task);
          devices.insert(devices.end(), more.begin(), more.end());
        }
        devices_ = std::move(devices);
        devices_stale_ = false;
      }
      auto prepared = Prepare(feed_names, fetch_names, targets);
      if (!prepared.ok()) {
        // A worker that cannot be reached may come back under a new incarnation.
        if (prepared.status().code() == absl::StatusCode::kUnavailable) devices_stale_ = true;
        return prepared.status();
      }
      step = *std::move(prepared);
      cache_[signature] = step;
    }
  }

  // Check feeds against what the graph expects, then route them to their tasks.
  struct Call {
    RunGraphRequest request;
    RunGraphResponse response;
    absl::Status status;
  };
  auto calls = std::make_shared<std::vector<Call>>(step->parts.size());
  const int64_t step_id = next_step_id_.fetch_add(1);
  const bool collect_stats = req.options.trace_level() != RunOptions::NO_TRACE;
  for (size_t i = 0; i < step->parts.size(); ++i) {
    Call& c = (*calls)[i];
    c.request.graph_handle = step->parts[i].graph_handle;
    c.request.step_id = step_id;
    c.request.collect_stats = collect_stats;
  }
  for (const auto& [name, value] : fed) {
    auto it = step->feeds.find(name);
    if (it == step->feeds.end()) continue;
    const PreparedStep::Feed& f = it->second;
    if (value->dtype() != f.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("feed for tensor '", name, "' has dtype ",
                                                     DataTypeString(value->dtype()),
                                                     " but the graph expects ",
                                                     DataTypeString(f.dtype)));
    }
    if (!f.shape.IsCompatibleWith(value->shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed for tensor '", name, "' has shape ", value->shape().DebugString(),
          ", which does not match the shape ", f.shape.DebugString(), " of placeholder '", f.node,
          "'"));
    }
    (*calls)[f.part].request.send.emplace_back(f.key, *value);
  }
  for (const auto& [name, fetch] : step->fetches) {
    (*calls)[fetch.part].request.recv_key.push_back(fetch.key);
  }

  // Run every part at once; the first failure aborts the step on the others.
  struct Sync {
    absl::Mutex mu;
    int remaining;
    absl::Status first_error;
    absl::Notification done;
  };
  auto sync = std::make_shared<Sync>();
  sync->remaining = static_cast<int>(calls->size());
  if (calls->empty()) sync->done.Notify();
  std::vector<PreparedStep::Part> parts = step->parts;
  for (size_t i = 0; i < calls->size(); ++i) {
    Call* c = &(*calls)[i];
    parts[i].worker->RunGraphAsync(&c->request, &c->response,
                                   [calls, sync, c, parts, i, step_id](const absl::Status& s) {
      bool abort_others = false;
      {
        absl::MutexLock lock(&sync->mu);
        c->status = s;
        if (!s.ok() && sync->first_error.ok()) {
          sync->first_error = s;
          abort_others = true;
        }
      }
      if (abort_others) {
        for (size_t j = 0; j < parts.size(); ++j) {
          if (j != i) parts[j].worker->AbortStep(step_id, s);
        }
      }
      bool last;
      {
        absl::MutexLock lock(&sync->mu);
        last = --sync->remaining == 0;
      }
      if (last) sync->done.Notify();
    });
  }
  const int64_t timeout_ms = req.options.timeout_in_ms() > 0 ? req.options.timeout_in_ms()
                                                             : config_.operation_timeout_in_ms();
  if (timeout_ms > 0) {
    if (!sync->done.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) {
      absl::Status s = absl::DeadlineExceededError(
          absl::StrCat("step did not finish within ", timeout_ms, " ms"));
      for (const auto& p : parts) p.worker->AbortStep(step_id, s);
      sync->done.WaitForNotification();
      for (const auto& p : parts) p.worker->CleanupGraph(step_id);
      return s;
    }
  } else {
    sync->done.WaitForNotification();
  }
  // Every part is done; what they left in their rendezvous can go.
  for (const auto& p : parts) p.worker->CleanupGraph(step_id);
  absl::Status step_error;
  {
    absl::MutexLock lock(&sync->mu);
    step_error = sync->first_error;
  }
  if (!step_error.ok()) {
    // Unreachable (UNAVAILABLE), restarted (ABORTED: a stale incarnation; NOT_FOUND: graphs it
    // never had) or lost mid-step: prepare anew next time.
    const absl::StatusCode code = step_error.code();
    if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kAborted ||
        code == absl::StatusCode::kNotFound) {
      ForgetPreparedSteps();
    }
    return step_error;
  }

  absl::flat_hash_map<std::string, Tensor> by_key;
  for (Call& c : *calls) {
    for (auto& [key, value] : c.response.recv) by_key[key] = std::move(value);
  }
  resp->outputs.clear();
  for (const std::string& name : fetch_canonical) {
    auto f = fed.find(name);
    if (f != fed.end()) {
      resp->outputs.push_back(*f->second);
      continue;
    }
    auto it = by_key.find(step->fetches.at(name).key);
    if (it == by_key.end()) return absl::InternalError(absl::StrCat("fetch '", name, "' lost"));
    resp->outputs.push_back(it->second);
  }
  if (collect_stats) {
    for (Call& c : *calls) {
      for (auto& d : *c.response.step_stats.mutable_dev_stats()) {
        *resp->metadata.mutable_step_stats()->add_dev_stats() = std::move(d);
      }
    }
  }
  if (req.options.output_partition_graphs()) {
    for (const GraphDef& g : step->partition_graphs) *resp->metadata.add_partition_graphs() = g;
  }
  return absl::OkStatus();
}

absl::Status MasterSession::Close() {
  absl::flat_hash_map<std::string, std::shared_ptr<PreparedStep>> cache;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    cache.swap(cache_);
  }
  for (auto& [sig, step] : cache) Deregister(*step);
  return absl::OkStatus();
}

}  // namespace sluice
