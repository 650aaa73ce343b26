// Kernels of ops/tf_io_ops.cc: TensorFlow's V2 checkpoint ops over kernels/tensor_bundle.h.
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/kernel_registry.h"
#include "kernels/scalar_input.h"
#include "kernels/tensor_bundle.h"

namespace sluice {
namespace {

absl::StatusOr<std::string> ScalarString(OpKernelContext* ctx, int i, absl::string_view what) {
  SL_ASSIGN_OR_RETURN(tstring s, ScalarInput<tstring>(ctx, i, what));
  return std::string(s);
}

// tensor_names and shape_and_slices: vectors of `n` names, slices all empty (whole tensors).
absl::StatusOr<std::vector<std::string>> Names(OpKernelContext* ctx, absl::string_view op, int64_t n) {
  const Tensor& names = ctx->input(1);
  const Tensor& slices = ctx->input(2);
  if (names.dims() != 1 || names.NumElements() != n || slices.dims() != 1 || slices.NumElements() != n) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": tensor_names ", names.shape().DebugString(),
                                                   " and shape_and_slices ", slices.shape().DebugString(),
                                                   " must both be vectors of ", n, " (one per tensor)"));
  }
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) {
    if (!slices.flat<tstring>()[i].empty()) {
      return absl::UnimplementedError(absl::StrCat(op, ": tensor '", std::string(names.flat<tstring>()[i]),
                                                   "' has slice spec '", std::string(slices.flat<tstring>()[i]),
                                                   "'; only whole tensors are saved and restored"));
    }
    out.emplace_back(names.flat<tstring>()[i]);
  }
  return out;
}

class RestoreV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "RestoreV2";
    SL_ASSIGN_OR_RETURN(std::string prefix, ScalarString(ctx, 0, "prefix"), kOp);
    SL_ASSIGN_OR_RETURN(std::vector<std::string> names, Names(ctx, kOp, ctx->num_outputs()));
    absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
    if (absl::IsNotFound(reader.status())) {
      return absl::NotFoundError(absl::StrCat(kOp, ": no checkpoint at '", prefix, "': ", reader.status().message()));
    }
    SL_RETURN_IF_ERROR(reader.status(), kOp);
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      SL_ASSIGN_OR_RETURN(Tensor t, (*reader)->Lookup(names[i]), kOp);
      if (t.dtype() != output_types()[i]) {
        return absl::InvalidArgumentError(absl::StrCat(kOp, ": tensor '", names[i], "' is ", DataTypeString(t.dtype()),
                                                       " in the checkpoint, but dtypes[", i, "] is ",
                                                       DataTypeString(output_types()[i])));
      }
      SL_RETURN_IF_ERROR(ctx->set_output(i, t));
    }
    return absl::OkStatus();
  }
};

class SaveV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "SaveV2";
    SL_ASSIGN_OR_RETURN(std::string prefix, ScalarString(ctx, 0, "prefix"), kOp);
    const int n = ctx->num_inputs() - 3;
    SL_ASSIGN_OR_RETURN(std::vector<std::string> names, Names(ctx, kOp, n));
    BundleWriter writer(prefix);
    for (int i = 0; i < n; ++i) SL_RETURN_IF_ERROR(writer.Add(names[i], ctx->input(3 + i)), kOp);
    return writer.Finish();
  }
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("delete_old_dirs", &delete_old_dirs_));
    return ctx->GetAttr("allow_missing_files", &allow_missing_files_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "MergeV2Checkpoints";
    const Tensor& sources_t = ctx->input(0);
    if (sources_t.dims() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(kOp, ": checkpoint_prefixes must be a scalar or a vector"));
    }
    SL_ASSIGN_OR_RETURN(std::string destination, ScalarString(ctx, 1, "destination_prefix"), kOp);
    std::vector<std::string> sources;
    for (const auto& s : sources_t.flat<tstring>()) {
      const std::string src(s);
      struct stat st;
      if (allow_missing_files_ && ::stat((src + ".index").c_str(), &st) != 0) continue;
      sources.push_back(src);
    }
    if (sources.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(kOp, ": none of the checkpoints to merge into '", destination,
                                                     "' exists"));
    }
    SL_RETURN_IF_ERROR(MergeBundles(sources, destination));
    if (delete_old_dirs_) {
      for (const std::string& src : sources) {
        const size_t slash = src.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : src.substr(0, slash);
        const size_t dslash = destination.rfind('/');
        if (dir != (dslash == std::string::npos ? "." : destination.substr(0, dslash))) ::rmdir(dir.c_str());
      }
    }
    return absl::OkStatus();
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

class ShardedFilenameOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const bool spec = type_string() == "ShardedFilespec";
    SL_ASSIGN_OR_RETURN(std::string base, ScalarString(ctx, 0, "basename"), type_string());
    SL_ASSIGN_OR_RETURN(int32_t num_shards, ScalarInput<int32_t>(ctx, spec ? 1 : 2, "num_shards"), type_string());
    int32_t shard = 0;
    if (!spec) {
      SL_ASSIGN_OR_RETURN(shard, ScalarInput<int32_t>(ctx, 1, "shard"), type_string());
    }
    if (num_shards < 1 || shard < 0 || shard >= num_shards) {
      return absl::InvalidArgumentError(
          absl::StrCat(type_string(), ": shard ", shard, " of ", num_shards, " is out of range"));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({}), &out));
    out->flat<tstring>()[0] = spec ? absl::StrFormat("%s-\?\?\?\?\?-of-%05d", base, num_shards)
                                   : absl::StrFormat("%s-%05d-of-%05d", base, shard, num_shards);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

REGISTER_KERNEL_BUILDER(Name("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);
REGISTER_KERNEL_BUILDER(Name("SaveV2").Device(DEVICE_CPU), SaveV2Op);
REGISTER_KERNEL_BUILDER(Name("MergeV2Checkpoints").Device(DEVICE_CPU), MergeV2CheckpointsOp);
REGISTER_KERNEL_BUILDER(Name("ShardedFilename").Device(DEVICE_CPU), ShardedFilenameOp);
REGISTER_KERNEL_BUILDER(Name("ShardedFilespec").Device(DEVICE_CPU), ShardedFilenameOp);

}  // namespace
}  // namespace sluice
