#include "master/collectives.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "framework/tensor.h"

namespace sluice {
namespace {

struct Member {
  Node* node;
  std::string op;
  int32_t group_size;
  int32_t group_key;
  int32_t instance_key;
};

// The int32 constant feeding input `i` of `n` (named `what`).
absl::StatusOr<int32_t> ConstantInput(const Node* n, int i, const char* what) {
  const Edge* e = n->input_edge(i);
  const Node* src = e == nullptr ? nullptr : e->src;
  // An Identity of a constant (a placement's copy) is followed to the constant.
  while (src != nullptr && src->type_string() == "Identity" && src->input_edge(0) != nullptr) {
    src = src->input_edge(0)->src;
  }
  auto value = src == nullptr || src->type_string() != "Const" ? nullptr : &src->def().attr();
  if (value == nullptr || !value->contains("value")) {
    return absl::InvalidArgumentError(absl::StrCat(n->type_string(), " '", n->name(), "': its ", what,
                                                   " must be a constant; Sluice resolves groups when it builds the step"));
  }
  auto t = Tensor::FromProto(value->at("value").tensor());
  if (!t.ok() || t->dtype() != DT_INT32 || t->NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(n->type_string(), " '", n->name(), "': its ", what,
                                                   " must be one int32"));
  }
  return t->flat<int32_t>()[0];
}

std::string Names(const std::vector<const Member*>& members) {
  std::vector<std::string> out;
  for (const Member* m : members) out.push_back(absl::StrCat("'", m->node->name(), "' on ", m->node->assigned_device()));
  return absl::StrJoin(out, ", ");
}

}  // namespace

bool IsCollectiveOp(const std::string& op) {
  return op == "CollectiveReduceV2" || op == "CollectiveGatherV2" || op == "CollectiveBcastSendV2" ||
         op == "CollectiveBcastRecvV2";
}

absl::Status ResolveCollectives(Graph* graph, const std::function<uint64_t(const std::string&)>& incarnation_of) {
  std::vector<Member> members;
  for (Node* n : graph->nodes()) {
    if (!IsCollectiveOp(n->type_string())) continue;
    // CollectiveBcastRecvV2 has no data input: its keys are inputs 0-2.
    const int first = n->type_string() == "CollectiveBcastRecvV2" ? 0 : 1;
    Member m{n, n->type_string(), 0, 0, 0};
    SL_ASSIGN_OR_RETURN(m.group_size, ConstantInput(n, first, "group_size"));
    SL_ASSIGN_OR_RETURN(m.group_key, ConstantInput(n, first + 1, "group_key"));
    SL_ASSIGN_OR_RETURN(m.instance_key, ConstantInput(n, first + 2, "instance_key"));
    if (m.group_size < 1) {
      return absl::InvalidArgumentError(absl::StrCat(m.op, " '", n->name(), "': group_size ", m.group_size,
                                                     " (group ", m.group_key, "); a group has at least one member"));
    }
    members.push_back(m);
  }
  if (members.empty()) return absl::OkStatus();
  std::map<int32_t, std::vector<const Member*>> groups;
  for (const Member& m : members) groups[m.group_key].push_back(&m);
  for (auto& [key, group] : groups) {
    const Member* first = group.front();
    for (const Member* m : group) {
      if (m->group_size != first->group_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "collective group ", key, ": group sizes disagree: '", first->node->name(), "' says ", first->group_size,
            ", '", m->node->name(), "' says ", m->group_size));
      }
    }
    std::map<int32_t, std::vector<const Member*>> instances;
    for (const Member* m : group) instances[m->instance_key].push_back(m);
    std::vector<std::string> devices;
    std::map<int32_t, std::string> senders_of;  // Broadcast instance -> its sender's device.
    for (auto& [instance, in] : instances) {
      const std::string where = absl::StrCat("collective group ", key, ", instance ", instance);
      std::vector<std::string> these;
      for (const Member* m : in) {
        if (m->op != in.front()->op && !(absl::StartsWith(m->op, "CollectiveBcast") &&
                                         absl::StartsWith(in.front()->op, "CollectiveBcast"))) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": members of different ops meet: ", Names(in)));
        }
        these.push_back(m->node->assigned_device());
      }
      std::sort(these.begin(), these.end());
      for (size_t i = 1; i < these.size(); ++i) {
        if (these[i] == these[i - 1]) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate instance key: two members on ", these[i],
                                                         " (", Names(in), ")"));
        }
      }
      if (static_cast<int32_t>(in.size()) > first->group_size) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", in.size(), " members for a group of ",
                                                       first->group_size, ": ", Names(in)));
      }
      if (static_cast<int32_t>(in.size()) < first->group_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": only ", in.size(), " of its ", first->group_size, " members are in the step (", Names(in),
            "); the others never join"));
      }
      if (absl::StartsWith(in.front()->op, "CollectiveBcast")) {
        int senders = 0;
        auto& this_sender = senders_of;
        for (const Member* m : in) {
          if (m->op != "CollectiveBcastSendV2") continue;
          ++senders;
          this_sender[instance] = m->node->assigned_device();
        }
        if (senders != 1) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": a broadcast needs one sender, has ", senders, " (",
                                                         Names(in), ")"));
        }
      }
      if (devices.empty()) {
        devices = these;
      } else if (devices != these) {
        return absl::InvalidArgumentError(absl::StrCat(
            "collective group ", key, ": its instances run on different devices: [", absl::StrJoin(devices, ", "),
            "] and, for instance ", instance, ", [", absl::StrJoin(these, ", "), "]"));
      }
    }
    std::vector<int64_t> incarnations;
    for (const std::string& d : devices) incarnations.push_back(static_cast<int64_t>(incarnation_of(d)));
    for (const Member* m : group) {
      const int64_t rank = std::find(devices.begin(), devices.end(), m->node->assigned_device()) - devices.begin();
      NodeDef* def = m->node->mutable_def();
      AddNodeAttr("_collective_devices", devices, def);
      AddNodeAttr("_collective_incarnations", incarnations, def);
      AddNodeAttr("_collective_rank", rank, def);
      if (auto sender = senders_of.find(m->instance_key); sender != senders_of.end()) {
        AddNodeAttr("_collective_source",
                    static_cast<int64_t>(std::find(devices.begin(), devices.end(), sender->second) - devices.begin()), def);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
