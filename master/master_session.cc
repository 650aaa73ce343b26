#include "master/master_session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/device_name.h"
#include "framework/random_ids.h"
#include "framework/rendezvous.h"
#include "framework/status.h"
#include "master/collectives.h"
#include "master/optimize_graph.h"
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

// The node and output a feed or fetch names, checked against the graph.
absl::StatusOr<Node*> FindOutput(const Graph& graph, const std::string& name, const TensorId& id,
                                 absl::string_view what) {
  Node* src = graph.FindNode(id.node);
  if (src == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' names node '", id.node,
                                                   "', which is not in the graph"));
  }
  if (id.index >= src->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "': node '", id.node,
                                                   "' has ", src->num_outputs(), " outputs"));
  }
  return src;
}

// What the rewrite of feeds and fetches leaves for the later stages.
struct Rewritten {
  std::vector<Node*> roots;                             // Fetch _Sends and targets.
  std::vector<std::pair<std::string, int>> feed_nodes;  // Node ids: pruning may drop them.
  std::vector<std::pair<std::string, Node*>> fetch_nodes;
  absl::flat_hash_map<std::string, ClientGraph::Feed> feeds;
};

// Stage 1: each fed tensor becomes a client-terminated _Recv that its consumers read instead;
// each fetched tensor goes to the client through a client-terminated _Send beside it.
absl::StatusOr<Rewritten> RewriteFeedsAndFetches(const std::vector<std::string>& feeds,
                                                 const std::vector<std::string>& fetches,
                                                 const std::vector<std::string>& targets,
                                                 Graph* graph) {
  Rewritten out;
  for (const std::string& name : feeds) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "feed"));
    SL_ASSIGN_OR_RETURN(Node* src, FindOutput(*graph, name, id, "feed"));
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
    ClientGraph::Feed f;
    f.dtype = src->output_types()[id.index];
    f.node = src->name();
    if (src->type_string() == "Placeholder") {
      SL_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(src->def()), "shape", &f.shape));
    }
    out.feeds[Canonical(id)] = f;
    out.feed_nodes.emplace_back(Canonical(id), r->id());
  }

  for (const std::string& name : fetches) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "fetch"));
    SL_ASSIGN_OR_RETURN(Node* src, FindOutput(*graph, name, id, "fetch"));
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
    out.roots.push_back(s);
    out.fetch_nodes.emplace_back(Canonical(id), s);
  }
  for (const std::string& name : targets) {
    Node* n = graph->FindNode(name);
    if (n == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("target '", name, "' is not in the graph"));
    }
    out.roots.push_back(n);
  }
  return out;
}

// Stage 2: keep only what the roots depend on.
void Prune(const std::vector<Node*>& roots, Graph* graph) {
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
}

}  // namespace

namespace {

// With SLUICE_LOG_OPTIMIZER set (not "0"), one line on stderr per client graph the master
// optimizes, naming the passes that rewrote something: what TensorFlow's
// TF_CPP_VMODULE=meta_optimizer=1 shows, for clients that cannot ask for RunMetadata.
void LogOptimizerPasses(const std::string& session, const std::vector<OptimizerPassSummary>& passes) {
  static const bool enabled = [] {
    const char* v = std::getenv("SLUICE_LOG_OPTIMIZER");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  if (!enabled) return;
  std::string line = absl::StrCat("sluice: optimizer: session ", session, ":");
  for (const OptimizerPassSummary& p : passes) {
    if (p.rewrites() > 0) absl::StrAppend(&line, " ", p.pass(), " ", p.rewrites());
  }
  absl::StrAppend(&line, passes.empty() ? "" : absl::StrCat("; ", passes.back().nodes_after(), " nodes"), "\n");
  std::fputs(line.c_str(), stderr);
}

}  // namespace

MasterSession::MasterSession(std::string handle, const WorkerCache* workers,
                             std::vector<DeviceAttributes> devices, ConfigProto config)
    : handle_(std::move(handle)),
      workers_(workers),
      config_(std::move(config)),
      devices_(std::move(devices)) {}

MasterSession::~MasterSession() { Close().IgnoreError(); }

absl::Status MasterSession::Create(GraphDef graph) {
  SL_RETURN_IF_ERROR(CheckGraphSize(graph, config_.resource_limits().max_graph_nodes()));
  auto constants = std::make_shared<HoistedConstants>();
  HoistConstants(&graph, constants.get());
  SL_RETURN_IF_ERROR(Graph::FromGraphDef(graph, *OpRegistry::Global()).status());
  absl::MutexLock lock(&mu_);
  graph_def_ = std::move(graph);
  constants_ = std::move(constants);
  return absl::OkStatus();
}

absl::Status MasterSession::Extend(const GraphDef& graph) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  GraphDef merged = graph_def_;
  for (const NodeDef& n : graph.node()) *merged.add_node() = n;
  for (const auto& f : graph.library().function()) *merged.mutable_library()->add_function() = f;
  if (graph.has_versions()) *merged.mutable_versions() = graph.versions();
  SL_RETURN_IF_ERROR(CheckGraphSize(merged, config_.resource_limits().max_graph_nodes()));
  auto constants = constants_ == nullptr ? std::make_shared<HoistedConstants>()
                                         : std::make_shared<HoistedConstants>(*constants_);
  HoistConstants(&merged, constants.get());  // The new nodes' (the others are hoisted already).
  SL_RETURN_IF_ERROR(Graph::FromGraphDef(merged, *OpRegistry::Global()).status());
  graph_def_ = std::move(merged);
  constants_ = std::move(constants);
  return absl::OkStatus();
}

absl::Status MasterSession::RefreshDevicesIfStale() {
  {
    absl::MutexLock lock(&mu_);
    if (!devices_stale_) return absl::OkStatus();
  }
  // Listing calls every worker: not under mu_, so other signatures keep running meanwhile.
  std::vector<DeviceAttributes> devices;
  for (const std::string& task : workers_->ListWorkers()) {
    std::vector<DeviceAttributes> more;
    SL_RETURN_IF_ERROR(workers_->GetWorker(task)->GetStatus(&more), "listing devices of ", task);
    devices.insert(devices.end(), more.begin(), more.end());
  }
  absl::MutexLock lock(&mu_);
  devices_ = std::move(devices);
  devices_stale_ = false;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ClientGraph>> MasterSession::GetOrBuildClientGraph(
    const Signature& sig) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    auto it = cache_.find(sig.key);
    if (it != cache_.end()) return it->second;
  }
  SL_RETURN_IF_ERROR(RefreshDevicesIfStale());
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  auto it = cache_.find(sig.key);
  if (it != cache_.end()) return it->second;  // Built by another Run meanwhile.
  auto built = BuildClientGraph(sig);
  if (!built.ok()) {
    // A worker that cannot be reached may come back under a new incarnation.
    if (built.status().code() == absl::StatusCode::kUnavailable) devices_stale_ = true;
    return built.status();
  }
  cache_[sig.key] = *built;
  return *built;
}

absl::Status MasterSession::Place(const absl::flat_hash_map<std::string, PartialShape>& feed_shapes,
                                  Graph* graph) {
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
  SL_RETURN_IF_ERROR(ApplyPlacementOptions(config_.placement(), devices_, feed_shapes, graph));
  SL_RETURN_IF_ERROR(PlaceGraph(graph, devices_, devices_.front().name()));
  for (Node* n : graph->nodes()) {
    // _Send and _Recv are remade for each signature; only the graph's own nodes count.
    if (n->op_def().is_stateful() && !absl::StartsWith(n->type_string(), "_")) {
      stateful_devices_.emplace(n->name(), n->assigned_device());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ClientGraph>> MasterSession::BuildClientGraph(
    const Signature& sig) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                      Graph::FromGraphDef(graph_def_, *OpRegistry::Global()));
  SL_ASSIGN_OR_RETURN(Rewritten rw,
                      RewriteFeedsAndFetches(sig.feeds, sig.fetches, sig.targets, graph.get()));
  Prune(rw.roots, graph.get());

  absl::flat_hash_map<std::string, PartialShape> feed_shapes;
  for (const auto& [name, f] : rw.feeds) feed_shapes[name] = f.shape;
  SL_RETURN_IF_ERROR(Place(feed_shapes, graph.get()));

  // Optimize the placed graph (optimizer/), then find the feeds and fetches in the result.
  std::shared_ptr<const HoistedConstants> constants = constants_;
  std::vector<OptimizerPassSummary> passes;
  const RewriterConfig& rewrite = config_.graph_options().rewrite_options();
  if (!rewrite.disable_meta_optimizer()) {
    GraphEnds ends;
    ends.feed_shapes = feed_shapes;
    for (const Node* n : rw.roots) ends.keep_nodes.push_back(n->name());
    for (const std::string& name : sig.fetches) {
      if (auto id = CanonicalTensor(name, "fetch"); id.ok()) ends.fetches.push_back(Canonical(*id));
    }
    std::vector<std::string> feed_names(rw.feed_nodes.size()), fetch_names(rw.fetch_nodes.size());
    for (size_t i = 0; i < rw.feed_nodes.size(); ++i) {
      const Node* r = graph->node(rw.feed_nodes[i].second);
      feed_names[i] = r == nullptr ? "" : r->name();
    }
    for (size_t i = 0; i < rw.fetch_nodes.size(); ++i) fetch_names[i] = rw.fetch_nodes[i].second->name();
    SL_ASSIGN_OR_RETURN(OptimizedGraph optimized,
                        OptimizePlacedGraph(*graph, rewrite, ends, constants_, devices_.front().name()));
    graph = std::move(optimized.graph);
    constants = std::move(optimized.constants);
    for (const OptimizerPassReport& r : optimized.report) {
      OptimizerPassSummary& p = passes.emplace_back();
      p.set_pass(r.pass);
      p.set_rewrites(r.rewrites);
      p.set_nodes_after(r.nodes_after);
    }
    LogOptimizerPasses(handle_, passes);
    for (size_t i = 0; i < rw.feed_nodes.size(); ++i) {
      const Node* r = feed_names[i].empty() ? nullptr : graph->FindNode(feed_names[i]);
      rw.feed_nodes[i].second = r == nullptr ? -1 : r->id();
    }
    for (size_t i = 0; i < rw.fetch_nodes.size(); ++i) {
      Node* s = graph->FindNode(fetch_names[i]);
      if (s == nullptr) return absl::InternalError(absl::StrCat("the optimizer dropped fetch node ", fetch_names[i]));
      rw.fetch_nodes[i].second = s;
    }
  }

  // Now that devices are known, complete the client-side attrs and the keys.
  absl::flat_hash_map<std::string, uint64_t> incarnations;
  for (const auto& d : devices_) incarnations[d.name()] = d.incarnation();
  auto incarnation_of = [&](const std::string& device) { return incarnations[device]; };
  std::map<std::string, std::string> feed_device, fetch_device;
  for (auto& [name, id] : rw.feed_nodes) {
    Node* r = id < 0 ? nullptr : graph->node(id);
    if (r == nullptr) continue;  // Fed but unused: nothing to send.
    AddNodeAttr("recv_device", r->assigned_device(), r->mutable_def());
    feed_device[name] = r->assigned_device();
  }
  for (auto& [name, s] : rw.fetch_nodes) {
    AddNodeAttr("send_device", s->assigned_device(), s->mutable_def());
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(incarnation_of(s->assigned_device())),
                s->mutable_def());
    s->mutable_def()->mutable_attr()->erase(kColocateWithInputAttr);
    fetch_device[name] = s->assigned_device();
  }

  // Collective ops learn their groups' devices and ranks (master/collectives.h).
  SL_RETURN_IF_ERROR(ResolveCollectives(graph.get(), incarnation_of));
  // Partition: one graph per task, holding that task's device partitions.
  SL_ASSIGN_OR_RETURN(auto partitions, PartitionByDevice(*graph, incarnation_of));
  std::map<std::string, GraphDef> by_task;
  for (auto& [device, def] : partitions) {
    SL_ASSIGN_OR_RETURN(DeviceName dn, DeviceName::Parse(device));
    GraphDef& task_graph = by_task[dn.TaskName()];
    for (auto& n : *def.mutable_node()) *task_graph.add_node() = std::move(n);
    *task_graph.mutable_library() = def.library();
    *task_graph.mutable_versions() = def.versions();
  }
  std::vector<ClientGraph::Part> parts;
  std::map<std::string, int> task_part;
  for (auto& [task, def] : by_task) {
    WorkerInterface* worker = workers_->GetWorker(task);
    if (worker == nullptr) return absl::UnavailableError(absl::StrCat("no worker for task ", task));
    task_part[task] = static_cast<int>(parts.size());
    parts.push_back({task, worker, std::move(def), constants});
  }
  auto part_of = [&](const std::string& device) {
    return task_part.at(DeviceName::Parse(device)->TaskName());
  };
  // In the signature's (sorted) order; a fed tensor pruned away needs no value.
  std::vector<ClientGraph::Feed> feeds;
  for (const std::string& name : sig.feeds) {
    auto f = rw.feeds.find(name);
    auto d = feed_device.find(name);
    if (f == rw.feeds.end() || d == feed_device.end()) continue;
    ClientGraph::Feed feed = std::move(f->second);
    feed.name = name;
    feed.key = Rendezvous::CreateKey(kClientDevice, kClientIncarnation, d->second, name,
                                     FrameAndIter{});
    feed.part = part_of(d->second);
    feeds.push_back(std::move(feed));
  }
  std::vector<ClientGraph::Fetch> fetches;
  for (auto& [name, device] : fetch_device) {
    fetches.push_back(ClientGraph::Fetch{
        name,
        Rendezvous::CreateKey(device, incarnation_of(device), kClientDevice, name, FrameAndIter{}),
        part_of(device)});
  }
  auto client_graph = std::make_shared<ClientGraph>(handle_, config_, std::move(parts),
                                                    std::move(feeds), std::move(fetches));
  client_graph->set_optimizer_passes(std::move(passes));
  return client_graph;
}

void MasterSession::Forget(const std::string& key, const std::shared_ptr<ClientGraph>& graph,
                           const absl::Status& why) {
  absl::MutexLock lock(&mu_);
  auto it = cache_.find(key);
  if (it != cache_.end() && it->second == graph) cache_.erase(it);
  {
    absl::MutexLock plans_lock(&plans_mu_);
    absl::erase_if(plans_, [&](const auto& kv) { return kv.second->graph == graph; });
  }
  // A worker that cannot be reached may come back under a new incarnation.
  if (why.code() == absl::StatusCode::kUnavailable) devices_stale_ = true;
}

void MasterSession::ForgetAllClientGraphs() {
  absl::flat_hash_map<std::string, std::shared_ptr<ClientGraph>> cache;
  {
    absl::MutexLock lock(&mu_);
    cache.swap(cache_);
    {
      absl::MutexLock plans_lock(&plans_mu_);
      plans_.clear();
    }
    devices_stale_ = true;
  }
  for (auto& [sig, graph] : cache) graph->Deregister();  // Best effort: they may be gone.
}

namespace {

// The request's names, in order: what a plan is keyed by.
size_t RequestShapeHash(const RunStepArgs& req) {
  size_t h = absl::HashOf(req.feeds.size(), req.fetches.size(), req.targets.size());
  for (const auto& feed : req.feeds) h = absl::HashOf(h, feed.first);
  for (const std::string& name : req.fetches) h = absl::HashOf(h, name);
  for (const std::string& name : req.targets) h = absl::HashOf(h, name);
  return h;
}

bool SameShape(const RunStepArgs& req, const std::vector<std::string>& feeds,
               const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  if (req.feeds.size() != feeds.size() || req.fetches != fetches || req.targets != targets) {
    return false;
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (req.feeds[i].first != feeds[i]) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const MasterSession::RunPlan>> MasterSession::GetOrBuildPlan(
    const RunStepArgs& req) {
  const size_t hash = RequestShapeHash(req);
  {
    absl::ReaderMutexLock lock(&plans_mu_);
    auto it = plans_.find(hash);
    if (it != plans_.end() &&
        SameShape(req, it->second->feeds, it->second->fetches, it->second->targets)) {
      return it->second;
    }
  }
  return BuildPlan(req, hash);
}

absl::StatusOr<std::shared_ptr<const MasterSession::RunPlan>> MasterSession::BuildPlan(
    const RunStepArgs& req, size_t shape_hash) {
  // Canonical names, with duplicates rejected and fetches of fed tensors answered directly.
  absl::flat_hash_map<std::string, int> fed;  // Canonical name to requested feed.
  std::vector<std::string> feed_canonical;
  Signature sig;
  for (const auto& [name, value] : req.feeds) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "feed"));
    std::string c = Canonical(id);
    if (!fed.emplace(c, static_cast<int>(feed_canonical.size())).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is fed more than once"));
    }
    if (!value.IsInitialized()) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has no value"));
    }
    sig.feeds.push_back(c);
    feed_canonical.push_back(std::move(c));
  }
  std::vector<std::string> fetch_canonical;
  for (const std::string& name : req.fetches) {
    SL_ASSIGN_OR_RETURN(TensorId id, CanonicalTensor(name, "fetch"));
    std::string c = Canonical(id);
    if (!fed.contains(c)) sig.fetches.push_back(c);
    fetch_canonical.push_back(std::move(c));
  }
  sig.targets = req.targets;
  std::sort(sig.feeds.begin(), sig.feeds.end());
  std::sort(sig.fetches.begin(), sig.fetches.end());
  sig.fetches.erase(std::unique(sig.fetches.begin(), sig.fetches.end()), sig.fetches.end());
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()), sig.targets.end());
  sig.key = absl::StrCat(absl::StrJoin(sig.feeds, ","), "|", absl::StrJoin(sig.fetches, ","), "|",
                         absl::StrJoin(sig.targets, ","));

  SL_ASSIGN_OR_RETURN(std::shared_ptr<ClientGraph> graph, GetOrBuildClientGraph(sig));
  if (absl::Status s = graph->EnsureRegistered(); !s.ok()) {
    Forget(sig.key, graph, s);
    return s;
  }

  auto plan = std::make_shared<RunPlan>();
  plan->graph = graph;
  for (const auto& [name, value] : req.feeds) plan->feeds.push_back(name);
  plan->fetches = req.fetches;
  plan->targets = req.targets;
  absl::flat_hash_map<absl::string_view, int> graph_feed, graph_fetch;
  for (size_t i = 0; i < graph->feeds().size(); ++i) graph_feed[graph->feeds()[i].name] = static_cast<int>(i);
  for (size_t i = 0; i < graph->fetches().size(); ++i) graph_fetch[graph->fetches()[i].name] = static_cast<int>(i);
  for (const std::string& c : feed_canonical) {
    auto it = graph_feed.find(c);
    plan->feed_slot.push_back(it == graph_feed.end() ? -1 : it->second);
  }
  for (const std::string& c : fetch_canonical) {
    auto f = fed.find(c);
    if (f != fed.end()) {
      plan->fetch_source.push_back(-1 - f->second);
      continue;
    }
    auto it = graph_fetch.find(c);
    if (it == graph_fetch.end()) return absl::InternalError(absl::StrCat("fetch '", c, "' lost"));
    plan->fetch_source.push_back(it->second);
  }

  // Kept only while its graph is the signature's: one dropped meanwhile (a failed step) must
  // not come back through a plan.
  absl::MutexLock lock(&mu_);
  auto it = cache_.find(sig.key);
  if (!closed_ && it != cache_.end() && it->second == graph) {
    absl::MutexLock plans_lock(&plans_mu_);
    if (plans_.size() >= kMaxPlans) plans_.clear();
    plans_[shape_hash] = plan;
  }
  return plan;
}

absl::Status MasterSession::Run(const RunStepArgs& req, RunStepResponse* resp) {
  SL_ASSIGN_OR_RETURN(std::shared_ptr<const RunPlan> plan, GetOrBuildPlan(req));
  const ClientGraph& graph = *plan->graph;
  absl::InlinedVector<const Tensor*, 4> feeds(graph.feeds().size(), nullptr);
  for (size_t i = 0; i < req.feeds.size(); ++i) {
    const auto& [name, value] = req.feeds[i];
    if (!value.IsInitialized()) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has no value"));
    }
    if (plan->feed_slot[i] >= 0) feeds[plan->feed_slot[i]] = &value;
  }

  ClientGraph::Step step;
  // Random: a step's id is what RecvTensor asks a worker for, so it must not be guessable
  // from another step, session or master sharing the workers.
  step.step_id = NewRandomStepId();
  step.feeds = feeds;
  step.options = &req.options;
  step.timeout_ms = req.options.timeout_in_ms() > 0 ? req.options.timeout_in_ms()
                                                    : config_.operation_timeout_in_ms();
  step.cancellation = req.cancellation;
  absl::InlinedVector<Tensor, 4> fetched(graph.fetches().size());
  absl::Status s = graph.RunStep(step, absl::MakeSpan(fetched), &resp->metadata);
  if (!s.ok()) {
    // Unreachable (UNAVAILABLE), restarted (ABORTED: a stale incarnation; NOT_FOUND: graphs it
    // never had) or lost mid-step: prepare anew next time. A deadline is not the workers' fault.
    const absl::StatusCode code = s.code();
    if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kAborted ||
        code == absl::StatusCode::kNotFound) {
      ForgetAllClientGraphs();
    }
    return s;
  }

  resp->outputs.resize(plan->fetch_source.size());
  for (size_t i = 0; i < plan->fetch_source.size(); ++i) {
    const int source = plan->fetch_source[i];
    resp->outputs[i] = source < 0 ? req.feeds[-1 - source].second : fetched[source];
  }
  return absl::OkStatus();
}

absl::Status MasterSession::Close() {
  absl::flat_hash_map<std::string, std::shared_ptr<ClientGraph>> cache;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    cache.swap(cache_);
    absl::MutexLock plans_lock(&plans_mu_);
    plans_.clear();
  }
  for (auto& [sig, graph] : cache) graph->Deregister();
  return absl::OkStatus();
}

}  // namespace sluice
