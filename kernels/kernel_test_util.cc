#include "kernels/kernel_test_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "kernels/node_evaluator.h"
#include "ops/op_registry.h"

namespace sluice {

KernelTester::KernelTester(std::string op) {
  node_.set_name("test_node");
  node_.set_op(std::move(op));
  pool_ = std::make_unique<ThreadPool>("kernel_test", 2);
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  device_ = std::make_unique<Device>(attrs, pool_.get());
}

absl::Status KernelTester::Run() {
  SL_ASSIGN_OR_RETURN(const OpRegistrationData* op, OpRegistry::Global()->LookUp(node_.op()));
  const OpDef& op_def = op->op_def;
  // Group inputs per arg: list args (N * T, list(type)) take what ArgSizes says, or by default
  // what is left once each later arg has one; with fewer left than later args, inputs go in
  // order (as ONNX omits trailing optional inputs), one to the list.
  const int num_args = op_def.input_arg_size();
  auto is_list = [&](int a) {
    return !op_def.input_arg(a).number_attr().empty() || !op_def.input_arg(a).type_list_attr().empty();
  };
  if (!arg_sizes_.empty()) {
    if (static_cast<int>(arg_sizes_.size()) != num_args) {
      return absl::InvalidArgumentError(absl::StrCat("ArgSizes has ", arg_sizes_.size(), " entries but ",
                                                     node_.op(), " has ", num_args, " input args"));
    }
    size_t total = 0;
    for (int a = 0; a < num_args; ++a) {
      if (arg_sizes_[a] < 0 || (!is_list(a) && arg_sizes_[a] != 1)) {
        return absl::InvalidArgumentError(absl::StrCat("ArgSizes gives ", arg_sizes_[a], " inputs to arg '",
                                                       op_def.input_arg(a).name(), "' of ", node_.op(),
                                                       is_list(a) ? "" : ", which takes exactly one"));
      }
      total += arg_sizes_[a];
    }
    if (total != inputs_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("ArgSizes adds up to ", total, " inputs but ",
                                                     inputs_.size(), " were given"));
    }
  }
  std::vector<DataTypeVector> arg_types(num_args);
  size_t next = 0;
  for (int a = 0; a < num_args; ++a) {
    size_t take = 1;
    if (!arg_sizes_.empty()) {
      take = arg_sizes_[a];
    } else if (is_list(a)) {
      const size_t left = inputs_.size() - next, later = num_args - 1 - a;
      take = left >= later ? left - later : std::min<size_t>(left, 1);
    }
    for (size_t j = 0; j < take && next < inputs_.size(); ++j) arg_types[a].push_back(inputs_[next++].dtype());
  }
  node_.clear_input();
  for (size_t i = 0; i < inputs_.size(); ++i) node_.add_input("in" + std::to_string(i));
  SL_RETURN_IF_ERROR(InferAttrsFromInputTypes(op_def, arg_types, &node_));
  AddDefaultsToNodeDef(op_def, &node_);
  SL_RETURN_IF_ERROR(ValidateNodeDef(node_, op_def));
  SL_ASSIGN_OR_RETURN(outputs_, RunKernelOnce(device_.get(), node_, op_def, inputs_));
  return absl::OkStatus();
}

void ExpectInvalid(KernelTester& t, const std::string& fragment) {
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos)
      << "message '" << s.message() << "' lacks '" << fragment << "'";
}

}  // namespace sluice
