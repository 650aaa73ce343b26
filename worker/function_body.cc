#include "worker/function_body.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

bool IsSluiceForm(const FunctionDef& fdef) {
  if (fdef.ret_size() > 0) return false;
  for (const NodeDef& n : fdef.node_def()) {
    if (n.op() == "_Arg" || n.op() == "_Retval") return true;
  }
  // No args, no results: nothing to rewrite but "node:arg:index" names, which only
  // TensorFlow's form uses.
  for (const NodeDef& n : fdef.node_def()) {
    for (const std::string& in : n.input()) {
      if (std::count(in.begin(), in.end(), ':') == 2) return false;
    }
  }
  return true;
}

class Rewriter {
 public:
  Rewriter(const FunctionDef& fdef, const FunctionDefLibrary& library) : fdef_(fdef), library_(library) {}

  absl::StatusOr<GraphDef> Run() {
    const OpDef& sig = fdef_.signature();
    for (const NodeDef& n : fdef_.node_def()) nodes_[n.name()] = &n;
    GraphDef body;
    for (int i = 0; i < sig.input_arg_size(); ++i) {
      const OpDef::ArgDef& arg = sig.input_arg(i);
      SL_ASSIGN_OR_RETURN(DataType type, ArgType(arg, "input"));
      if (nodes_.contains(arg.name())) return Error(absl::StrCat("input arg '", arg.name(), "' is also a node's name"));
      NodeDef* a = body.add_node();
      a->set_name(arg.name());
      a->set_op("_Arg");
      AddNodeAttr("T", type, a);
      AddNodeAttr("index", int64_t{i}, a);
      args_.insert(arg.name());
    }
    for (const NodeDef& n : fdef_.node_def()) {
      NodeDef* copy = body.add_node();
      *copy = n;
      for (std::string& in : *copy->mutable_input()) {
        SL_ASSIGN_OR_RETURN(in, Tensor(in), "node '", n.name(), "'");
      }
    }
    for (int i = 0; i < sig.output_arg_size(); ++i) {
      const OpDef::ArgDef& arg = sig.output_arg(i);
      SL_ASSIGN_OR_RETURN(DataType type, ArgType(arg, "output"));
      auto it = fdef_.ret().find(arg.name());
      if (it == fdef_.ret().end()) return Error(absl::StrCat("output arg '", arg.name(), "' has no entry in ret"));
      NodeDef* r = body.add_node();
      r->set_name(absl::StrCat("_retval_", arg.name(), "_", i));
      r->set_op("_Retval");
      SL_ASSIGN_OR_RETURN(std::string in, Tensor(it->second), "ret '", arg.name(), "'");
      r->add_input(in);
      AddNodeAttr("T", type, r);
      AddNodeAttr("index", int64_t{i}, r);
    }
    *body.mutable_library() = library_;
    return body;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("function '", fdef_.signature().name(), "': ", what));
  }

  absl::StatusOr<DataType> ArgType(const OpDef::ArgDef& arg, absl::string_view kind) const {
    if (arg.type() != DT_INVALID && arg.number_attr().empty() && arg.type_list_attr().empty()) return arg.type();
    return absl::UnimplementedError(absl::StrCat("function '", fdef_.signature().name(), "': ", kind, " arg '",
                                                 arg.name(), "' is typed by an attr or is a list; only concrete "
                                                 "functions (one typed tensor per arg) run"));
  }

  // "x" (an arg or a node's output 0), "^x", "x:k" or "x:arg:index" -> the GraphDef form.
  absl::StatusOr<std::string> Tensor(const std::string& name) const {
    if (absl::StartsWith(name, "^")) {
      if (!nodes_.contains(name.substr(1))) return Error(absl::StrCat("control input '", name, "' names no node"));
      return name;
    }
    std::vector<std::string> parts = absl::StrSplit(name, ':');
    if (parts.size() == 1) {
      if (!args_.contains(name) && !nodes_.contains(name)) {
        return Error(absl::StrCat("input '", name, "' names neither an input arg nor a node"));
      }
      return name;
    }
    auto node = nodes_.find(parts[0]);
    if (node == nodes_.end()) return Error(absl::StrCat("input '", name, "' names no node"));
    if (parts.size() == 2) return name;
    int64_t index;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[2], &index) || index < 0) {
      return Error(absl::StrCat("input '", name, "' is not of the form node:output_arg:index"));
    }
    SL_ASSIGN_OR_RETURN(int64_t base, OutputBase(*node->second, parts[1]));
    return absl::StrCat(parts[0], ":", base + index);
  }

  // The flat index of output arg `arg`'s first tensor on `node`.
  absl::StatusOr<int64_t> OutputBase(const NodeDef& node, absl::string_view arg) const {
    for (const FunctionDef& f : library_.function()) {
      if (f.signature().name() != node.op()) continue;
      for (int i = 0; i < f.signature().output_arg_size(); ++i) {
        if (f.signature().output_arg(i).name() == arg) return i;
      }
      return Error(absl::StrCat("node '", node.name(), "' (a call of ", node.op(), ") has no output '", arg, "'"));
    }
    SL_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUpOpDef(node.op()), "node '", node.name(), "'");
    NodeDef full = node;
    AddDefaultsToNodeDef(*op_def, &full);
    int64_t base = 0;
    for (const OpDef::ArgDef& out : op_def->output_arg()) {
      if (out.name() == arg) return base;
      int64_t size = 1;
      if (!out.number_attr().empty()) {
        SL_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(full), out.number_attr(), &size), "node '", node.name(), "'");
      } else if (!out.type_list_attr().empty()) {
        DataTypeVector types;
        SL_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(full), out.type_list_attr(), &types), "node '", node.name(), "'");
        size = static_cast<int64_t>(types.size());
      }
      base += size;
    }
    return Error(absl::StrCat("node '", node.name(), "' (op ", node.op(), ") has no output '", arg, "'"));
  }

  const FunctionDef& fdef_;
  const FunctionDefLibrary& library_;
  absl::flat_hash_map<std::string, const NodeDef*> nodes_;
  absl::flat_hash_set<std::string> args_;
};

}  // namespace

absl::StatusOr<GraphDef> FunctionBodyGraph(const FunctionDef& fdef, const FunctionDefLibrary& library) {
  if (IsSluiceForm(fdef)) {
    GraphDef body;
    for (const NodeDef& n : fdef.node_def()) *body.add_node() = n;
    *body.mutable_library() = library;
    return body;
  }
  return Rewriter(fdef, library).Run();
}

}  // namespace sluice
