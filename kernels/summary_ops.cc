// Kernels of ops/summary_ops.cc: summary writers in the device's resources, writing TensorBoard
// event files through EventFileWriter.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/resource_mgr.h"
#include "kernels/event_file_writer.h"
#include "kernels/kernel_registry.h"
#include "kernels/scalar_input.h"
#include "kernels/typed_registration.h"
#include "proto/summary.pb.h"

namespace sluice {
namespace {

class SummaryWriterResource : public ResourceBase {
 public:
  static constexpr char kTypeName[] = "SummaryWriter";
  explicit SummaryWriterResource(std::unique_ptr<EventFileWriter> file) : file_(std::move(file)) {}
  EventFileWriter& file() { return *file_; }

 private:
  std::unique_ptr<EventFileWriter> file_;
};

absl::Status NeedsDevice(const OpKernelContext* ctx, absl::string_view op) {
  if (ctx->device() == nullptr) return absl::FailedPreconditionError(absl::StrCat(op, " needs a device"));
  return absl::OkStatus();
}

// The writer input 0 names, or NOT_FOUND when it was never created (or was closed).
absl::StatusOr<std::shared_ptr<SummaryWriterResource>> WriterOf(OpKernelContext* ctx, absl::string_view op) {
  SL_RETURN_IF_ERROR(NeedsDevice(ctx, op));
  absl::StatusOr<ResourceHandle> handle = ResourceHandleFromTensor(ctx->input(0));
  if (!handle.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": input 0: ", handle.status().message()));
  absl::StatusOr<std::shared_ptr<SummaryWriterResource>> w =
      ResourceMgrOf(ctx->device()).Lookup<SummaryWriterResource>(*handle);
  if (absl::IsNotFound(w.status())) {
    return absl::NotFoundError(
        absl::StrCat(op, ": ", w.status().message(), " (run CreateSummaryFileWriter on the handle first)"));
  }
  return w;
}

class SummaryWriterOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    ResourceHandle h;
    SL_RETURN_IF_ERROR(ctx->GetAttr("shared_name", &h.name));
    SL_RETURN_IF_ERROR(ctx->GetAttr("container", &h.container));
    if (h.name.empty()) h.name = ctx->def().name();
    if (ctx->device() == nullptr) return absl::InvalidArgumentError("SummaryWriter needs a device");
    h.device = ctx->device()->name();
    h.type_name = SummaryWriterResource::kTypeName;
    handle_ = MakeResourceHandleTensor(h);
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override { return ctx->set_output(0, handle_); }
  bool IsExpensive() const override { return false; }

 private:
  Tensor handle_;
};

class CreateSummaryFileWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "CreateSummaryFileWriter";
    SL_RETURN_IF_ERROR(NeedsDevice(ctx, kOp));
    absl::StatusOr<ResourceHandle> handle = ResourceHandleFromTensor(ctx->input(0));
    if (!handle.ok()) return absl::InvalidArgumentError(absl::StrCat(kOp, ": input 0: ", handle.status().message()));
    SL_ASSIGN_OR_RETURN(tstring logdir, ScalarInput<tstring>(ctx, 1, "logdir"), kOp);
    SL_ASSIGN_OR_RETURN(int32_t max_queue, ScalarInput<int32_t>(ctx, 2, "max_queue"), kOp);
    SL_ASSIGN_OR_RETURN(int32_t flush_millis, ScalarInput<int32_t>(ctx, 3, "flush_millis"), kOp);
    SL_ASSIGN_OR_RETURN(tstring suffix, ScalarInput<tstring>(ctx, 4, "filename_suffix"), kOp);
    auto make = [&]() -> absl::StatusOr<std::unique_ptr<SummaryWriterResource>> {
      SL_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> file,
                          EventFileWriter::Open(std::string(logdir), std::string(suffix), max_queue, flush_millis));
      return std::make_unique<SummaryWriterResource>(std::move(file));
    };
    SL_RETURN_IF_ERROR(ResourceMgrOf(ctx->device()).LookupOrCreate<SummaryWriterResource>(*handle, make).status(),
                       kOp);
    return absl::OkStatus();
  }
};

// An event at `step` with one summary value under `tag`.
absl::StatusOr<Event> StepEvent(OpKernelContext* ctx, absl::string_view op, int tag_input, Summary::Value** value) {
  SL_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"), op);
  SL_ASSIGN_OR_RETURN(tstring tag, ScalarInput<tstring>(ctx, tag_input, "tag"), op);
  Event e;
  e.set_step(step);
  *value = e.mutable_summary()->add_value();
  (*value)->set_tag(std::string(tag));
  return e;
}

template <typename T>
class WriteScalarSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "WriteScalarSummary";
    SL_ASSIGN_OR_RETURN(std::shared_ptr<SummaryWriterResource> w, WriterOf(ctx, kOp));
    Summary::Value* v;
    SL_ASSIGN_OR_RETURN(Event e, StepEvent(ctx, kOp, 2, &v));
    SL_ASSIGN_OR_RETURN(T value, ScalarInput<T>(ctx, 3, "value"), kOp);
    v->set_simple_value(static_cast<float>(value));
    return w->file().Write(std::move(e));
  }
};

class WriteSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "WriteSummary";
    SL_ASSIGN_OR_RETURN(std::shared_ptr<SummaryWriterResource> w, WriterOf(ctx, kOp));
    Summary::Value* v;
    SL_ASSIGN_OR_RETURN(Event e, StepEvent(ctx, kOp, 3, &v));
    SL_ASSIGN_OR_RETURN(tstring metadata, ScalarInput<tstring>(ctx, 4, "summary_metadata"), kOp);
    if (!metadata.empty() && !v->mutable_metadata()->ParseFromString(std::string(metadata))) {
      return absl::InvalidArgumentError(
          absl::StrCat(kOp, ": summary_metadata of tag '", v->tag(), "' is not a serialized SummaryMetadata"));
    }
    const Tensor& t = ctx->input(2);
    if (t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) {
      return absl::InvalidArgumentError(absl::StrCat(kOp, ": cannot write a ", DataTypeString(t.dtype()), " tensor"));
    }
    t.AsProtoTensorContent(v->mutable_tensor());
    return w->file().Write(std::move(e));
  }
};

class WriteRawProtoSummaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "WriteRawProtoSummary";
    SL_ASSIGN_OR_RETURN(std::shared_ptr<SummaryWriterResource> w, WriterOf(ctx, kOp));
    SL_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"), kOp);
    Event e;
    e.set_step(step);
    const auto protos = ctx->input(2).flat<tstring>();
    for (size_t i = 0; i < protos.size(); ++i) {
      Summary s;
      if (!s.ParseFromString(std::string(protos[i]))) {
        return absl::InvalidArgumentError(absl::StrCat(kOp, ": element ", i, " is not a serialized Summary"));
      }
      e.mutable_summary()->MergeFrom(s);
    }
    return w->file().Write(std::move(e));
  }
};

class FlushSummaryWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(std::shared_ptr<SummaryWriterResource> w, WriterOf(ctx, "FlushSummaryWriter"));
    return w->file().Flush();
  }
};

class CloseSummaryWriterOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    constexpr absl::string_view kOp = "CloseSummaryWriter";
    SL_ASSIGN_OR_RETURN(std::shared_ptr<SummaryWriterResource> w, WriterOf(ctx, kOp));
    SL_RETURN_IF_ERROR(w->file().Flush(), kOp);
    SL_ASSIGN_OR_RETURN(ResourceHandle handle, ResourceHandleFromTensor(ctx->input(0)));
    // The file closes when the last step using it lets go of `w`.
    return ResourceMgrOf(ctx->device()).Delete(handle);
  }
};

REGISTER_KERNEL_BUILDER(Name("SummaryWriter").Device(DEVICE_CPU), SummaryWriterOp);
REGISTER_KERNEL_BUILDER(Name("CreateSummaryFileWriter").Device(DEVICE_CPU), CreateSummaryFileWriterOp);
REGISTER_KERNEL_BUILDER(Name("WriteSummary").Device(DEVICE_CPU), WriteSummaryOp);
REGISTER_KERNEL_BUILDER(Name("WriteRawProtoSummary").Device(DEVICE_CPU), WriteRawProtoSummaryOp);
REGISTER_KERNEL_BUILDER(Name("FlushSummaryWriter").Device(DEVICE_CPU), FlushSummaryWriterOp);
REGISTER_KERNEL_BUILDER(Name("CloseSummaryWriter").Device(DEVICE_CPU), CloseSummaryWriterOp);

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernelTemplate<WriteScalarSummaryOp>("WriteScalarSummary", NumericTypes{});
  return true;
}();

}  // namespace
}  // namespace sluice
