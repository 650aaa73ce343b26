// TFE_Op and TFE_Execute: one operation described, then run at once on the context's CPU
// device through a kernel prepared once per signature (op and complete attrs).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/eager_internal.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "framework/types.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"

namespace sluice {
namespace {

// Records an attr on an op; problems are kept for TFE_Execute (the setters have no status).
template <typename Fill>
void SetAttr(TFE_Op* op, const char* attr_name, Fill fill) {
  if (op == nullptr) return;
  if (attr_name == nullptr) {
    if (op->deferred.ok()) op->deferred = absl::InvalidArgumentError(absl::StrCat("an attr name of ", op->name, " is null"));
    return;
  }
  AttrValue value;
  absl::Status s = fill(&value);
  if (!s.ok()) {
    if (op->deferred.ok()) op->deferred = AddContext(s, absl::StrCat("attr '", attr_name, "' of ", op->name));
    return;
  }
  (*op->node.mutable_attr())[attr_name] = std::move(value);
}

// The tensors one input arg takes, given the attrs set so far; -1 when the attrs do not say
// (a number or type-list attr not set yet), kBadLength for a number attr no list can have.
constexpr int kBadLength = -2;
int ArgLength(const NodeDef& node, const OpDef::ArgDef& arg) {
  if (!arg.number_attr().empty()) {
    auto it = node.attr().find(arg.number_attr());
    if (it == node.attr().end()) return -1;
    const int64_t n = it->second.i();
    return n < 0 || n > (int64_t{1} << 30) ? kBadLength : static_cast<int>(n);
  }
  if (!arg.type_list_attr().empty()) {
    auto it = node.attr().find(arg.type_list_attr());
    return it == node.attr().end() ? -1 : it->second.list().type_size();
  }
  return 1;
}

// Splits the op's flat inputs into its input args: the groups they were added in when any came
// from TFE_OpAddInputList (one group per arg), otherwise by the attrs set so far, with at most
// one list arg whose length the attrs leave open taking what remains (TensorFlow.js adds list
// inputs one by one and sets N itself).
absl::StatusOr<std::vector<int>> ArgLengths(const TFE_Op& op, const OpDef& op_def) {
  const int num_args = op_def.input_arg_size();
  const int total = static_cast<int>(op.inputs.size());
  auto mismatch = [&] {
    std::string args;
    for (const auto& arg : op_def.input_arg()) {
      const int n = ArgLength(op.node, arg);
      absl::StrAppend(&args, args.empty() ? "" : ", ", arg.name(), " (",
                      n >= 0 ? absl::StrCat(n) : absl::StrCat("a list"), ")");
    }
    return absl::InvalidArgumentError(absl::StrCat(op.name, " was given ", total, " input tensor(s) for its argument(s) ",
                                                   args.empty() ? "(none)" : args));
  };
  std::vector<int> lengths(num_args);
  if (op.any_list) {
    if (static_cast<int>(op.groups.size()) != num_args) return mismatch();
    for (int i = 0; i < num_args; ++i) lengths[i] = op.groups[i];
    return lengths;
  }
  int known = 0, open = -1, num_open = 0;
  for (int i = 0; i < num_args; ++i) {
    lengths[i] = ArgLength(op.node, op_def.input_arg(i));
    if (lengths[i] == kBadLength) {
      const std::string& attr = op_def.input_arg(i).number_attr();
      return absl::InvalidArgumentError(absl::StrCat(op.name, ": attr '", attr, "' = ", op.node.attr().at(attr).i(),
                                                     " is not a list length"));
    }
    if (lengths[i] < 0) {
      open = i;
      ++num_open;
    } else {
      known += lengths[i];
    }
  }
  if (num_open == 0) {
    if (known != total) return mismatch();
  } else if (num_open == 1) {
    if (total < known) return mismatch();
    lengths[open] = total - known;
  } else {
    // Several open lists: only one tensor each can be told apart.
    if (total != num_args) return mismatch();
    std::fill(lengths.begin(), lengths.end(), 1);
  }
  return lengths;
}

std::string TypeName(DataType dt) { return DataTypeString(dt); }

// Sets the type, number and type-list attrs the input args refer to from the inputs' dtypes,
// and checks those already set (and fixed-type args) against them, in TensorFlow's words.
absl::Status InferInputAttrs(TFE_Op& op, const OpDef& op_def, const std::vector<int>& lengths) {
  auto& attrs = *op.node.mutable_attr();
  absl::flat_hash_set<std::string> inferred_from_input;
  int flat = 0;
  for (int a = 0; a < op_def.input_arg_size(); ++a) {
    const OpDef::ArgDef& arg = op_def.input_arg(a);
    const int n = lengths[a];
    auto wrong = [&](int index, DataType want, DataType got) {
      return absl::InvalidArgumentError(absl::StrCat("cannot compute ", op.name, " as input #", index,
                                                     "(zero-based) was expected to be a ", TypeName(want),
                                                     " tensor but is a ", TypeName(got), " tensor"));
    };
    auto wrong_kind = [&](const std::string& attr, const char* kind) {
      return absl::InvalidArgumentError(absl::StrCat(op.name, ": attr '", attr, "' must be ", kind,
                                                     " (it sizes or types input '", arg.name(), "')"));
    };
    if (!arg.number_attr().empty()) {
      auto it = attrs.find(arg.number_attr());
      if (it != attrs.end() && it->second.value_case() != AttrValue::kI) return wrong_kind(arg.number_attr(), "an int");
      if (it == attrs.end()) {
        attrs[arg.number_attr()].set_i(n);
      } else if (it->second.i() != n) {
        return absl::InvalidArgumentError(absl::StrCat(op.name, ": attr '", arg.number_attr(), "' is ", it->second.i(),
                                                       " but input '", arg.name(), "' has ", n, " tensor(s)"));
      }
    }
    if (!arg.type_list_attr().empty()) {
      auto it = attrs.find(arg.type_list_attr());
      if (it != attrs.end() && it->second.value_case() != AttrValue::kList) {
        return wrong_kind(arg.type_list_attr(), "a list of types");
      }
      if (it == attrs.end()) {
        auto* list = attrs[arg.type_list_attr()].mutable_list();
        for (int k = 0; k < n; ++k) list->add_type(op.inputs[flat + k].dtype());
      } else {
        const auto& types = it->second.list().type();
        if (types.size() != n) {
          return absl::InvalidArgumentError(absl::StrCat(op.name, ": attr '", arg.type_list_attr(), "' lists ",
                                                         types.size(), " type(s) but input '", arg.name(), "' has ", n,
                                                         " tensor(s)"));
        }
        for (int k = 0; k < n; ++k) {
          DataType want = static_cast<DataType>(types[k]);
          if (op.inputs[flat + k].dtype() != want) return wrong(flat + k, want, op.inputs[flat + k].dtype());
        }
      }
    } else if (!arg.type_attr().empty()) {
      auto it = attrs.find(arg.type_attr());
      if (it != attrs.end() && it->second.value_case() != AttrValue::kType) return wrong_kind(arg.type_attr(), "a type");
      if (it == attrs.end() && n > 0) {
        attrs[arg.type_attr()].set_type(op.inputs[flat].dtype());
        it = attrs.find(arg.type_attr());
      }
      if (it != attrs.end()) {
        DataType want = static_cast<DataType>(it->second.type());
        // A type attr set before or after the inputs that disagrees with the first arg it
        // types takes the inputs' dtype: the attr describes the inputs, and TensorFlow.js
        // sets T from a tensor it then casts (Mean of bools runs on their float cast). Inputs
        // that disagree with each other stay an error.
        if (n > 0 && !inferred_from_input.contains(arg.type_attr()) && op.inputs[flat].dtype() != want) {
          want = op.inputs[flat].dtype();
          it->second.set_type(want);
        }
        inferred_from_input.insert(arg.type_attr());
        for (int k = 0; k < n; ++k) {
          if (op.inputs[flat + k].dtype() != want) return wrong(flat + k, want, op.inputs[flat + k].dtype());
        }
      }
    } else {
      DataType want = static_cast<DataType>(arg.type());
      for (int k = 0; k < n; ++k) {
        if (op.inputs[flat + k].dtype() != want) return wrong(flat + k, want, op.inputs[flat + k].dtype());
      }
    }
    flat += n;
  }
  return absl::OkStatus();
}

// The cache key of a signature: the op and every attr, by name (protobuf maps have no order).
std::string KernelKey(const NodeDef& node) {
  std::vector<std::pair<const std::string*, const AttrValue*>> attrs;
  attrs.reserve(node.attr().size());
  for (const auto& kv : node.attr()) attrs.emplace_back(&kv.first, &kv.second);
  std::sort(attrs.begin(), attrs.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  std::string key = node.op();
  for (const auto& [name, value] : attrs) {
    key.push_back('\0');
    key.append(*name);
    key.push_back('\0');
    key.append(value->SerializeAsString());
  }
  return key;
}

bool CallsFunctions(const OpDef& op_def) {
  for (const auto& attr : op_def.attr()) {
    if (attr.type() == "func" || attr.type() == "list(func)") return true;
  }
  return false;
}

// Makes what runs `node` (complete and valid): its kernel, or an executor over
// `_Arg -> node -> _Retval` when it calls functions.
absl::StatusOr<std::shared_ptr<const EagerKernel>> MakeKernel(TFE_Context* ctx, NodeDef node, const OpDef& op_def) {
  auto k = std::make_shared<EagerKernel>();
  SL_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &k->input_types, &k->output_types));
  node.set_name(node.op());
  node.set_device(kEagerDeviceName);
  node.clear_input();
  for (size_t i = 0; i < k->input_types.size(); ++i) node.add_input(absl::StrCat("_eager_arg", i));
  if (!CallsFunctions(op_def)) {
    SL_ASSIGN_OR_RETURN(k->kernel, KernelRegistry::Global()->CreateOpKernel(ctx->device.get(), node, op_def));
    if (k->kernel->IsAsync()) {
      return absl::UnimplementedError(absl::StrCat(node.op(), " waits for other devices or steps: it does not run eagerly"));
    }
    k->node = std::move(node);
    return std::shared_ptr<const EagerKernel>(std::move(k));
  }
  GraphDef graph;
  for (size_t i = 0; i < k->input_types.size(); ++i) {
    NodeDef* arg = graph.add_node();
    arg->set_name(absl::StrCat("_eager_arg", i));
    arg->set_op("_Arg");
    arg->set_device(kEagerDeviceName);
    (*arg->mutable_attr())["T"].set_type(k->input_types[i]);
    (*arg->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
  }
  *graph.add_node() = node;
  for (size_t j = 0; j < k->output_types.size(); ++j) {
    NodeDef* ret = graph.add_node();
    ret->set_name(absl::StrCat("_eager_retval", j));
    ret->set_op("_Retval");
    ret->set_device(kEagerDeviceName);
    ret->add_input(absl::StrCat(node.name(), ":", j));
    (*ret->mutable_attr())["T"].set_type(k->output_types[j]);
    (*ret->mutable_attr())["index"].set_i(static_cast<int64_t>(j));
  }
  {
    absl::MutexLock lock(&ctx->mu);
    *graph.mutable_library() = ctx->functions;
  }
  SL_ASSIGN_OR_RETURN(k->executor, Executor::Create(graph, ctx->device.get()));
  k->node = std::move(node);
  return std::shared_ptr<const EagerKernel>(std::move(k));
}

// A call of one of the context's functions becomes a PartitionedCall of it.
absl::Status LowerFunctionCall(TFE_Op& op) {
  FunctionDef fdef;
  {
    absl::MutexLock lock(&op.ctx->mu);
    const FunctionDef* found = nullptr;
    for (const auto& f : op.ctx->functions.function()) {
      if (f.signature().name() == op.name) found = &f;
    }
    if (found == nullptr) return absl::NotFoundError(absl::StrCat("function '", op.name, "' was removed from the context"));
    fdef = *found;
  }
  NodeDef call;
  call.set_op("PartitionedCall");
  auto& attrs = *call.mutable_attr();
  auto* tin = attrs["Tin"].mutable_list();
  for (const Tensor& t : op.inputs) tin->add_type(t.dtype());
  auto* tout = attrs["Tout"].mutable_list();
  for (const auto& out : fdef.signature().output_arg()) {
    if (out.type() == DT_INVALID) {
      return absl::UnimplementedError(absl::StrCat("function '", op.name, "': output '", out.name(),
                                                   "' has no fixed type (polymorphic functions are not called eagerly)"));
    }
    tout->add_type(out.type());
  }
  auto* f = attrs["f"].mutable_func();
  f->set_name(op.name);
  *f->mutable_attr() = op.node.attr();
  op.node = std::move(call);
  SL_ASSIGN_OR_RETURN(op.op_def, OpRegistry::Global()->LookUpOpDef("PartitionedCall"));
  op.groups.assign(1, static_cast<int>(op.inputs.size()));
  op.any_list = true;
  return absl::OkStatus();
}

absl::Status Execute(TFE_Op& op, TFE_TensorHandle** retvals, int* num_retvals) {
  SL_RETURN_IF_ERROR(op.deferred);
  if (op.op_def == nullptr) SL_RETURN_IF_ERROR(LowerFunctionCall(op));
  const OpDef& op_def = *op.op_def;
  SL_ASSIGN_OR_RETURN(std::vector<int> lengths, ArgLengths(op, op_def));
  SL_RETURN_IF_ERROR(InferInputAttrs(op, op_def, lengths));
  AddDefaultsToNodeDef(op_def, &op.node);
  const std::string key = KernelKey(op.node);
  std::shared_ptr<const EagerKernel> kernel;
  {
    absl::ReaderMutexLock lock(&op.ctx->mu);
    auto it = op.ctx->kernels.find(key);
    if (it != op.ctx->kernels.end()) kernel = it->second;
  }
  if (kernel == nullptr) {
    op.node.set_name(op.node.op());
    SL_RETURN_IF_ERROR(ValidateNodeDefAttrs(op.node, op_def));
    SL_ASSIGN_OR_RETURN(kernel, MakeKernel(op.ctx, op.node, op_def));
    absl::MutexLock lock(&op.ctx->mu);
    op.ctx->kernels.emplace(key, kernel);
  }
  if (kernel->input_types.size() != op.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(op.name, " takes ", kernel->input_types.size(), " input(s), got ",
                                                   op.inputs.size()));
  }
  const int num_outputs = static_cast<int>(kernel->output_types.size());
  if (*num_retvals < num_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(op.name, " has ", num_outputs, " output(s) but *num_retvals is ",
                                                   *num_retvals));
  }
  std::vector<Tensor> outputs;
  const int64_t step = op.ctx->next_step.fetch_add(1, std::memory_order_relaxed);
  if (kernel->kernel != nullptr) {
    OpKernelContext::Params params;
    params.step_id = step;
    params.device = op.ctx->device.get();
    params.kernel = kernel->kernel.get();
    params.inputs = op.inputs;
    OpKernelContext kctx(params);
    SL_RETURN_IF_ERROR(kernel->kernel->Compute(&kctx));
    outputs.assign(std::make_move_iterator(kctx.outputs().begin()), std::make_move_iterator(kctx.outputs().end()));
  } else {
    CallFrame frame(op.inputs, num_outputs);
    Executor::Args args;
    args.step_id = step;
    args.call_frame = &frame;
    args.runner = op.ctx->device->compute_pool();
    SL_RETURN_IF_ERROR(kernel->executor->Run(args));
    outputs = std::move(frame.rets());
  }
  for (int i = 0; i < num_outputs; ++i) {
    if (!outputs[i].IsInitialized()) {
      return absl::InternalError(absl::StrCat("the kernel of ", op.name, " left output ", i, " unset"));
    }
  }
  for (int i = 0; i < num_outputs; ++i) retvals[i] = new TFE_TensorHandle{std::move(outputs[i])};
  *num_retvals = num_outputs;
  return absl::OkStatus();
}

// TF_AttrType of an OpDef attr type string ("int", "list(shape)", ...).
TF_AttrType AttrTypeOf(absl::string_view type, unsigned char* is_list) {
  if (is_list != nullptr) *is_list = absl::StartsWith(type, "list(") ? 1 : 0;
  TF_AttrType kind;
  return KindOfTypeString(type, &kind) ? kind : TF_ATTR_PLACEHOLDER;
}

absl::StatusOr<TF_AttrType> GetAttrType(const OpDef* op_def, absl::string_view name, const char* attr_name,
                                        unsigned char* is_list) {
  if (attr_name == nullptr) return absl::InvalidArgumentError("the attr name is null");
  if (op_def == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is a function: its attrs have no declared types"));
  }
  for (const auto& attr : op_def->attr()) {
    if (attr.name() == attr_name) return AttrTypeOf(attr.type(), is_list);
  }
  return absl::InvalidArgumentError(absl::StrCat("Attribute '", attr_name, "' does not exist for op '", name, "'"));
}

// Input or output arg `arg_name`'s number of tensors given the attrs set so far.
absl::StatusOr<int> ArgLengthByName(const TFE_Op& op, const char* arg_name, bool input) {
  if (arg_name == nullptr) return absl::InvalidArgumentError("the argument name is null");
  if (op.op_def == nullptr) return absl::InvalidArgumentError(absl::StrCat("'", op.name, "' is a function"));
  const auto& args = input ? op.op_def->input_arg() : op.op_def->output_arg();
  for (const auto& arg : args) {
    if (arg.name() != arg_name) continue;
    int n = ArgLength(op.node, arg);
    if (n == kBadLength) return absl::InvalidArgumentError(absl::StrCat("the length attr of '", arg_name, "' is out of range"));
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("the length of '", arg_name, "' of ", op.name,
                                                     " is not known until its attrs or inputs are set"));
    }
    return n;
  }
  return absl::InvalidArgumentError(absl::StrCat(op.name, " has no ", input ? "input" : "output", " named '",
                                                 arg_name, "'"));
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TFE_Op* TFE_NewOp(TFE_Context* ctx, const char* op_or_function_name, TF_Status* status) {
  if (ctx == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_NewOp", "ctx"));
    return nullptr;
  }
  if (op_or_function_name == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_NewOp", "op_or_function_name"));
    return nullptr;
  }
  auto op = std::make_unique<TFE_Op>();
  op->ctx = ctx;
  op->name = op_or_function_name;
  absl::StatusOr<const sluice::OpDef*> op_def = sluice::OpRegistry::Global()->LookUpOpDef(op->name);
  if (op_def.ok()) {
    op->op_def = *op_def;
  } else if (!TFE_ContextHasFunction(ctx, op_or_function_name)) {
    SetStatus(status, absl::NotFoundError(absl::StrCat("Op type not registered '", op->name,
                                                       "' in binary running on Sluice, and no function of the "
                                                       "context has that name")));
    return nullptr;
  }
  op->node.set_op(op->name);
  SetStatus(status, absl::OkStatus());
  return op.release();
}

void TFE_DeleteOp(TFE_Op* op) { delete op; }

const char* TFE_OpGetName(const TFE_Op* op, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetName", "op"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return op->name.c_str();
}

TFE_Context* TFE_OpGetContext(const TFE_Op* op, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetContext", "op"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return op->ctx;
}

void TFE_OpSetDevice(TFE_Op* op, const char* device_name, TF_Status* status) {
  if (op == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpSetDevice", "op"));
  const char* name = device_name == nullptr ? "" : device_name;
  if (!sluice::IsEagerCpuDevice(name)) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                 "TFE_OpSetDevice: no device '", name, "' for ", op->name,
                                 ": this context has only ", sluice::kEagerDeviceName)));
  }
  op->device = name;
  SetStatus(status, absl::OkStatus());
}

const char* TFE_OpGetDevice(const TFE_Op* op, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetDevice", "op"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return op->device.c_str();
}

void TFE_OpAddInput(TFE_Op* op, TFE_TensorHandle* input, TF_Status* status) {
  if (op == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpAddInput", "op"));
  if (input == nullptr) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                 "TFE_OpAddInput: input ", op->inputs.size(), " of ", op->name, " is a null handle")));
  }
  op->inputs.push_back(input->tensor);
  op->groups.push_back(1);
  SetStatus(status, absl::OkStatus());
}

void TFE_OpAddInputList(TFE_Op* op, TFE_TensorHandle** inputs, int num_inputs, TF_Status* status) {
  if (op == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpAddInputList", "op"));
  absl::Status s = sluice::CheckList(inputs, num_inputs);
  if (!s.ok()) return SetStatus(status, sluice::AddContext(s, "TFE_OpAddInputList"));
  for (int i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr) {
      return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                   "TFE_OpAddInputList: handle ", i, " of the list for ", op->name, " is null")));
    }
  }
  for (int i = 0; i < num_inputs; ++i) op->inputs.push_back(inputs[i]->tensor);
  op->groups.push_back(num_inputs);
  op->any_list = true;
  SetStatus(status, absl::OkStatus());
}

int TFE_OpGetFlatInputCount(const TFE_Op* op, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetFlatInputCount", "op"));
    return -1;
  }
  SetStatus(status, absl::OkStatus());
  return static_cast<int>(op->inputs.size());
}

TFE_TensorHandle* TFE_OpGetFlatInput(const TFE_Op* op, int index, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetFlatInput", "op"));
    return nullptr;
  }
  if (index < 0 || index >= static_cast<int>(op->inputs.size())) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat("TFE_OpGetFlatInput: ", op->name, " has ",
                                                              op->inputs.size(), " input(s), not ", index + 1)));
    return nullptr;
  }
  auto* self = const_cast<TFE_Op*>(op);
  self->flat_input_handles.push_back(std::make_unique<TFE_TensorHandle>(TFE_TensorHandle{op->inputs[index]}));
  SetStatus(status, absl::OkStatus());
  return self->flat_input_handles.back().get();
}

TF_AttrType TFE_OpGetAttrType(TFE_Op* op, const char* attr_name, unsigned char* is_list, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetAttrType", "op"));
    return TF_ATTR_INT;
  }
  absl::StatusOr<TF_AttrType> t = sluice::GetAttrType(op->op_def, op->name, attr_name, is_list);
  SetStatus(status, t.status());
  return t.ok() ? *t : TF_ATTR_INT;
}

TF_AttrType TFE_OpNameGetAttrType(TFE_Context* ctx, const char* op_or_function_name, const char* attr_name,
                                  unsigned char* is_list, TF_Status* status) {
  TFE_Op* op = TFE_NewOp(ctx, op_or_function_name, status);
  if (op == nullptr) return TF_ATTR_INT;
  TF_AttrType t = TFE_OpGetAttrType(op, attr_name, is_list, status);
  TFE_DeleteOp(op);
  return t;
}

void TFE_OpSetAttrString(TFE_Op* op, const char* attr_name, const void* value, size_t length) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    if (length > 0 && value == nullptr) return absl::InvalidArgumentError("the string is null");
    v->set_s(length == 0 ? std::string() : std::string(static_cast<const char*>(value), length));
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrInt(TFE_Op* op, const char* attr_name, int64_t value) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    v->set_i(value);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrFloat(TFE_Op* op, const char* attr_name, float value) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    v->set_f(value);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrBool(TFE_Op* op, const char* attr_name, unsigned char value) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    v->set_b(value != 0);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrType(TFE_Op* op, const char* attr_name, TF_DataType value) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    v->set_type(static_cast<sluice::DataType>(value));
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrShape(TFE_Op* op, const char* attr_name, const int64_t* dims, const int num_dims,
                        TF_Status* out_status) {
  if (op == nullptr) return SetStatus(out_status, sluice::NullArgument("TFE_OpSetAttrShape", "op"));
  if (attr_name == nullptr) return SetStatus(out_status, sluice::NullArgument("TFE_OpSetAttrShape", "attr_name"));
  sluice::AttrValue v;
  absl::Status s = sluice::ShapeToProto(dims, num_dims, v.mutable_shape());
  if (!s.ok()) return SetStatus(out_status, sluice::AddContext(s, absl::StrCat("attr '", attr_name, "'")));
  (*op->node.mutable_attr())[attr_name] = std::move(v);
  SetStatus(out_status, absl::OkStatus());
}

void TFE_OpSetAttrFunction(TFE_Op* op, const char* attr_name, const TFE_Op* value) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    if (value == nullptr) return absl::InvalidArgumentError("the function op is null");
    v->mutable_func()->set_name(value->name);
    *v->mutable_func()->mutable_attr() = value->node.attr();
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrFunctionName(TFE_Op* op, const char* attr_name, const char* data, size_t length) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    if (length > 0 && data == nullptr) return absl::InvalidArgumentError("the function name is null");
    v->mutable_func()->set_name(length == 0 ? std::string() : std::string(data, length));
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrTensor(TFE_Op* op, const char* attr_name, TF_Tensor* tensor, TF_Status* status) {
  if (op == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpSetAttrTensor", "op"));
  if (attr_name == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpSetAttrTensor", "attr_name"));
  if (tensor == nullptr) return SetStatus(status, sluice::NullArgument("TFE_OpSetAttrTensor", "tensor"));
  absl::StatusOr<sluice::Tensor> value = sluice::ToRuntimeTensor(*tensor);
  if (!value.ok()) return SetStatus(status, sluice::AddContext(value.status(), absl::StrCat("attr '", attr_name, "'")));
  sluice::AttrValue v;
  value->AsProtoTensorContent(v.mutable_tensor());
  (*op->node.mutable_attr())[attr_name] = std::move(v);
  SetStatus(status, absl::OkStatus());
}

void TFE_OpSetAttrStringList(TFE_Op* op, const char* attr_name, const void* const* values, const size_t* lengths,
                             int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    if (num_values > 0 && lengths == nullptr) return absl::InvalidArgumentError("the string lengths are null");
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      if (lengths[i] > 0 && values[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat("string ", i, " is null"));
      list->add_s(lengths[i] == 0 ? std::string() : std::string(static_cast<const char*>(values[i]), lengths[i]));
    }
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrIntList(TFE_Op* op, const char* attr_name, const int64_t* values, int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_i(values[i]);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrFloatList(TFE_Op* op, const char* attr_name, const float* values, int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_f(values[i]);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrBoolList(TFE_Op* op, const char* attr_name, const unsigned char* values, int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_b(values[i] != 0);
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrTypeList(TFE_Op* op, const char* attr_name, const TF_DataType* values, int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_type(static_cast<sluice::DataType>(values[i]));
    return absl::OkStatus();
  });
}

void TFE_OpSetAttrShapeList(TFE_Op* op, const char* attr_name, const int64_t** dims, const int* num_dims,
                            int num_values, TF_Status* out_status) {
  if (op == nullptr) return SetStatus(out_status, sluice::NullArgument("TFE_OpSetAttrShapeList", "op"));
  if (attr_name == nullptr) return SetStatus(out_status, sluice::NullArgument("TFE_OpSetAttrShapeList", "attr_name"));
  absl::Status s = sluice::CheckList(dims, num_values);
  if (s.ok() && num_values > 0 && num_dims == nullptr) s = absl::InvalidArgumentError("the ranks are null");
  sluice::AttrValue v;
  for (int i = 0; s.ok() && i < num_values; ++i) {
    s = sluice::ShapeToProto(dims[i], num_dims[i], v.mutable_list()->add_shape());
  }
  if (!s.ok()) return SetStatus(out_status, sluice::AddContext(s, absl::StrCat("attr '", attr_name, "'")));
  (*op->node.mutable_attr())[attr_name] = std::move(v);
  SetStatus(out_status, absl::OkStatus());
}

void TFE_OpSetAttrFunctionList(TFE_Op* op, const char* attr_name, const TFE_Op** value, int num_values) {
  sluice::SetAttr(op, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(value, num_values));
    for (int i = 0; i < num_values; ++i) {
      if (value[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat("function ", i, " is null"));
      auto* f = v->mutable_list()->add_func();
      f->set_name(value[i]->name);
      *f->mutable_attr() = value[i]->node.attr();
    }
    return absl::OkStatus();
  });
}

int TFE_OpGetInputLength(TFE_Op* op, const char* input_name, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetInputLength", "op"));
    return -1;
  }
  absl::StatusOr<int> n = sluice::ArgLengthByName(*op, input_name, /*input=*/true);
  SetStatus(status, n.status());
  return n.ok() ? *n : -1;
}

int TFE_OpGetOutputLength(TFE_Op* op, const char* output_name, TF_Status* status) {
  if (op == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_OpGetOutputLength", "op"));
    return -1;
  }
  absl::StatusOr<int> n = sluice::ArgLengthByName(*op, output_name, /*input=*/false);
  SetStatus(status, n.status());
  return n.ok() ? *n : -1;
}

void TFE_Execute(TFE_Op* op, TFE_TensorHandle** retvals, int* num_retvals, TF_Status* status) {
  if (op == nullptr) return SetStatus(status, sluice::NullArgument("TFE_Execute", "op"));
  if (num_retvals == nullptr) return SetStatus(status, sluice::NullArgument("TFE_Execute", "num_retvals"));
  if (*num_retvals > 0 && retvals == nullptr) return SetStatus(status, sluice::NullArgument("TFE_Execute", "retvals"));
  absl::Status s = sluice::Execute(*op, retvals, num_retvals);
  if (!s.ok()) {
    // TensorFlow's eager errors end by naming the op.
    return SetStatus(status, absl::Status(s.code(), absl::StrCat(s.message(), " [Op:", op->name, "]")));
  }
  SetStatus(status, absl::OkStatus());
}

}  // extern "C"
