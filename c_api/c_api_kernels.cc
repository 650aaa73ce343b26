// Kernels written in C (tensorflow/c/kernels.h): a TF_KernelBuilder becomes a registration in
// Sluice's KernelRegistry whose OpKernel calls the library's create, compute and delete
// functions. TF_OpKernelConstruction and TF_OpKernelContext are the C views of
// OpKernelConstruction and OpKernelContext while those functions run, with the failure the
// kernel reports.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "c_api/include/tensorflow/c/kernels.h"
#include "framework/device.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "framework/types.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

struct TF_KernelBuilder {
  sluice::KernelDefBuilder def;
  void* (*create)(TF_OpKernelConstruction*) = nullptr;
  void (*compute)(void*, TF_OpKernelContext*) = nullptr;
  void (*destroy)(void*) = nullptr;
  std::string device;
};

struct TF_OpKernelConstruction {
  sluice::OpKernelConstruction* ctx;
  absl::Status failure;
};

struct TF_OpKernelContext {
  sluice::OpKernelContext* ctx;
  absl::Status failure;
};

namespace sluice {
namespace {

absl::Status StatusOf(const TF_Status* status) {
  if (status == nullptr) return absl::UnknownError("the kernel reported a failure without a status");
  if (status->status.ok()) {
    return absl::UnknownError("the kernel reported a failure with an OK status");
  }
  return status->status;
}

// A node's kernel from a library: the library's create function makes its state when the
// graph is registered, compute runs each step, delete frees the state with the kernel.
class CApiKernel : public OpKernel {
 public:
  CApiKernel(void* (*create)(TF_OpKernelConstruction*),
             void (*compute)(void*, TF_OpKernelContext*), void (*destroy)(void*))
      : create_(create), compute_(compute), destroy_(destroy) {}
  ~CApiKernel() override {
    if (destroy_ != nullptr) destroy_(state_);
  }

  absl::Status Init(OpKernelConstruction* ctx) override {
    if (create_ == nullptr) return absl::OkStatus();
    TF_OpKernelConstruction c{ctx, absl::OkStatus()};
    state_ = create_(&c);
    return c.failure;
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    TF_OpKernelContext c{ctx, absl::OkStatus()};
    compute_(state_, &c);
    SL_RETURN_IF_ERROR(c.failure);
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if (!ctx->output(i).IsInitialized()) {
        return absl::InternalError(absl::StrCat("the library's kernel left output ", i,
                                                " unset (TF_SetOutput or TF_AllocateOutput)"));
      }
    }
    return absl::OkStatus();
  }

 private:
  void* (*create_)(TF_OpKernelConstruction*);
  void (*compute_)(void*, TF_OpKernelContext*);
  void (*destroy_)(void*);
  void* state_ = nullptr;
};

absl::Status RegisterKernel(const char* kernel_name, TF_KernelBuilder* builder) {
  constexpr char kFn[] = "TF_RegisterKernelBuilder";
  if (builder == nullptr) return NullArgument(kFn, "builder");
  const std::string& op = builder->def.Build().op();
  if (builder->compute == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": the kernel for op '", op, "' has no compute function"));
  }
  if (builder->device != DEVICE_CPU) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": the kernel for op '", op, "' is for device '", builder->device,
        "'; Sluice runs kernels on \"CPU\""));
  }
  SL_RETURN_IF_ERROR(OpRegistry::Global()->LookUpOpDef(op).status(), kFn);
  auto create = builder->create;
  auto compute = builder->compute;
  auto destroy = builder->destroy;
  KernelRegistry::Global()->Register(
      builder->def.Build(), kernel_name != nullptr ? kernel_name : op,
      [create, compute, destroy]() -> std::unique_ptr<OpKernel> {
        return std::make_unique<CApiKernel>(create, compute, destroy);
      });
  return absl::OkStatus();
}

absl::Status CheckIndex(const char* fn, int i, int n, const char* what) {
  if (i < 0 || i >= n) {
    return absl::OutOfRangeError(
        absl::StrCat(fn, ": ", what, " index ", i, " is out of range (", n, " ", what, "s)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> ShapeOf(const char* fn, const int64_t* dims, int num_dims) {
  if (num_dims < 0) {
    return absl::InvalidArgumentError(absl::StrCat(fn, ": num_dims ", num_dims, " is negative"));
  }
  if (num_dims > 0 && dims == nullptr) return NullArgument(fn, "dims");
  return TensorShape::FromDims(absl::MakeConstSpan(dims, num_dims));
}

absl::StatusOr<TF_Tensor*> AllocateOutput(TF_OpKernelContext* context, int index,
                                          TF_DataType dtype, const int64_t* dims, int num_dims,
                                          size_t len) {
  constexpr char kFn[] = "TF_AllocateOutput";
  if (context == nullptr) return NullArgument(kFn, "context");
  OpKernelContext* ctx = context->ctx;
  SL_RETURN_IF_ERROR(CheckIndex(kFn, index, ctx->num_outputs(), "output"));
  const DataType want = ctx->expected_output_dtype(index);
  if (static_cast<DataType>(dtype) != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": output ", index, " is ", DataTypeString(want), ", not ",
        DataTypeString(static_cast<DataType>(dtype))));
  }
  if (want == DT_STRING || DataTypeSize(want) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": output ", index, " is ", DataTypeString(want),
        "; build the tensor and hand it over with TF_SetOutput"));
  }
  SL_ASSIGN_OR_RETURN(TensorShape shape, ShapeOf(kFn, dims, num_dims));
  Tensor* out = nullptr;
  SL_RETURN_IF_ERROR(ctx->allocate_output(index, shape, &out), kFn, ": output ", index);
  if (out->TotalBytes() != len) {
    const size_t bytes = out->TotalBytes();
    ctx->output(index) = Tensor();
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": len is ", len, " bytes but ",
                                                   shape.DebugString(), " of ",
                                                   DataTypeString(want), " takes ", bytes));
  }
  return NewCApiTensor(*out);
}

template <typename T>
void GetAttr(TF_OpKernelConstruction* ctx, const char* attr_name, T* value, TF_Status* status) {
  if (ctx == nullptr || attr_name == nullptr || value == nullptr) {
    SetStatus(status, NullArgument("TF_OpKernelConstruction_GetAttr",
                                   ctx == nullptr ? "ctx" : attr_name == nullptr ? "attr_name" : "val"));
    return;
  }
  SetStatus(status, GetNodeAttr(ctx->ctx->attrs(), attr_name, value));
}

template <typename C, typename T>
void GetAttrList(TF_OpKernelConstruction* ctx, const char* attr_name, C* vals, int max_vals,
                 TF_Status* status) {
  std::vector<T> list;
  GetAttr(ctx, attr_name, &list, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (max_vals > 0 && vals == nullptr) {
    SetStatus(status, NullArgument("TF_OpKernelConstruction_GetAttr...List", "vals"));
    return;
  }
  for (int i = 0; i < max_vals && i < static_cast<int>(list.size()); ++i) {
    vals[i] = static_cast<C>(list[i]);
  }
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TF_KernelBuilder* TF_NewKernelBuilder(const char* op_name, const char* device_name,
                                      void* (*create_func)(TF_OpKernelConstruction*),
                                      void (*compute_func)(void*, TF_OpKernelContext*),
                                      void (*delete_func)(void*)) {
  if (op_name == nullptr) return nullptr;
  auto* b = new TF_KernelBuilder{sluice::KernelDefBuilder(op_name)};
  b->device = device_name != nullptr ? device_name : "";
  b->def.Device(b->device.c_str());
  b->create = create_func;
  b->compute = compute_func;
  b->destroy = delete_func;
  return b;
}

void TF_KernelBuilder_TypeConstraint(TF_KernelBuilder* kernel_builder, const char* attr_name,
                                     const TF_DataType type, TF_Status* status) {
  if (kernel_builder == nullptr || attr_name == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_KernelBuilder_TypeConstraint",
                                           kernel_builder == nullptr ? "kernel_builder"
                                                                     : "attr_name"));
    return;
  }
  kernel_builder->def.TypeConstraint(attr_name, static_cast<sluice::DataType>(type));
  SetStatus(status, absl::OkStatus());
}

void TF_KernelBuilder_HostMemory(TF_KernelBuilder* kernel_builder, const char* arg_name) {
  if (kernel_builder != nullptr && arg_name != nullptr) kernel_builder->def.HostMemory(arg_name);
}

void TF_KernelBuilder_Priority(TF_KernelBuilder* kernel_builder, int32_t priority_number) {
  if (kernel_builder != nullptr) kernel_builder->def.Priority(priority_number);
}

void TF_RegisterKernelBuilder(const char* kernel_name, TF_KernelBuilder* builder,
                              TF_Status* status) {
  absl::Status s = sluice::RegisterKernel(kernel_name, builder);
  sluice::NoteRegistrationFailure(s);
  SetStatus(status, s);
  delete builder;
}

void TF_DeleteKernelBuilder(TF_KernelBuilder* builder) { delete builder; }

int TF_NumInputs(TF_OpKernelContext* ctx) { return ctx == nullptr ? 0 : ctx->ctx->num_inputs(); }

int TF_NumOutputs(TF_OpKernelContext* ctx) {
  return ctx == nullptr ? 0 : ctx->ctx->num_outputs();
}

void TF_GetInput(TF_OpKernelContext* ctx, int i, TF_Tensor** tensor, TF_Status* status) {
  if (ctx == nullptr || tensor == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_GetInput", ctx == nullptr ? "ctx" : "tensor"));
    return;
  }
  absl::Status s = sluice::CheckIndex("TF_GetInput", i, ctx->ctx->num_inputs(), "input");
  if (s.ok()) {
    auto t = sluice::NewCApiTensor(ctx->ctx->input(i));
    s = t.status();
    if (t.ok()) *tensor = *t;
  }
  SetStatus(status, s);
}

void TF_SetOutput(TF_OpKernelContext* ctx, int i, const TF_Tensor* tensor, TF_Status* status) {
  constexpr char kFn[] = "TF_SetOutput";
  if (ctx == nullptr || tensor == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, ctx == nullptr ? "ctx" : "tensor"));
    return;
  }
  absl::Status s = sluice::CheckIndex(kFn, i, ctx->ctx->num_outputs(), "output");
  if (s.ok()) {
    const sluice::DataType want = ctx->ctx->expected_output_dtype(i);
    if (tensor->tensor.dtype() != want) {
      s = absl::InvalidArgumentError(absl::StrCat(
          kFn, ": output ", i, " is ", sluice::DataTypeString(want), ", the tensor is ",
          sluice::DataTypeString(tensor->tensor.dtype())));
    }
  }
  if (s.ok()) {
    auto value = sluice::ToRuntimeTensor(*tensor);
    s = value.status();
    if (value.ok()) s = ctx->ctx->set_output(i, *value);
  }
  SetStatus(status, s);
}

TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context, int index, TF_DataType dtype,
                             const int64_t* dims, int num_dims, size_t len, TF_Status* status) {
  auto t = sluice::AllocateOutput(context, index, dtype, dims, num_dims, len);
  SetStatus(status, t.status());
  return t.ok() ? *t : nullptr;
}

TF_Tensor* TF_AllocateTemp(TF_OpKernelContext* context, TF_DataType dtype, const int64_t* dims,
                           int num_dims, TF_AllocatorAttributes* alloc_attrs, TF_Status* status) {
  constexpr char kFn[] = "TF_AllocateTemp";
  if (context == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "context"));
    return nullptr;
  }
  // TF_AllocateTensor checks the type and the size.
  auto shape = sluice::ShapeOf(kFn, dims, num_dims);
  if (!shape.ok()) {
    SetStatus(status, shape.status());
    return nullptr;
  }
  const size_t size = sluice::DataTypeSize(static_cast<sluice::DataType>(dtype));
  if (size == 0) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": ", sluice::DataTypeString(static_cast<sluice::DataType>(dtype)),
                          " has no fixed element size")));
    return nullptr;
  }
  auto bytes = sluice::Tensor::Allocate(static_cast<sluice::DataType>(dtype), *shape);
  if (!bytes.ok()) {
    SetStatus(status, bytes.status());
    return nullptr;
  }
  auto t = sluice::NewCApiTensor(*std::move(bytes));
  SetStatus(status, t.status());
  return t.ok() ? *t : nullptr;
}

void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction* ctx, TF_Status* status) {
  if (ctx != nullptr) ctx->failure = sluice::StatusOf(status);
}

void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx, TF_Status* status) {
  if (ctx != nullptr) ctx->failure = sluice::StatusOf(status);
}

TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext* ctx, int i) {
  if (ctx == nullptr || i < 0 || i >= ctx->ctx->num_outputs()) return static_cast<TF_DataType>(0);
  return static_cast<TF_DataType>(ctx->ctx->expected_output_dtype(i));
}

TF_DataType TF_InputDatatype(TF_OpKernelContext* ctx, int index) {
  if (ctx == nullptr || index < 0 || index >= ctx->ctx->num_inputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(ctx->ctx->input(index).dtype());
}

int64_t TF_StepId(TF_OpKernelContext* ctx) { return ctx == nullptr ? 0 : ctx->ctx->step_id(); }

TF_StringView TF_GetOpKernelName(TF_OpKernelContext* ctx) {
  if (ctx == nullptr) return TF_StringView{"", 0};
  const std::string& name = ctx->ctx->kernel().name();
  return TF_StringView{name.data(), name.size()};
}

TF_StringView TF_OpKernelConstruction_GetName(TF_OpKernelConstruction* ctx) {
  if (ctx == nullptr) return TF_StringView{"", 0};
  const std::string& name = ctx->ctx->def().name();
  return TF_StringView{name.data(), name.size()};
}

bool TF_OpKernelConstruction_HasAttr(TF_OpKernelConstruction* ctx, const char* attr_name,
                                     TF_Status* status) {
  if (ctx == nullptr || attr_name == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_OpKernelConstruction_HasAttr",
                                           ctx == nullptr ? "ctx" : "attr_name"));
    return false;
  }
  SetStatus(status, absl::OkStatus());
  return ctx->ctx->def().attr().contains(attr_name);
}

void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         int32_t* list_size, int32_t* total_size,
                                         TF_Status* status) {
  constexpr char kFn[] = "TF_OpKernelConstruction_GetAttrSize";
  if (ctx == nullptr || attr_name == nullptr || list_size == nullptr || total_size == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "ctx, attr_name, list_size or total_size"));
    return;
  }
  auto it = ctx->ctx->def().attr().find(attr_name);
  if (it == ctx->ctx->def().attr().end()) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": node '", ctx->ctx->def().name(), "' has no attr '", attr_name,
                          "'")));
    return;
  }
  const sluice::AttrValue& v = it->second;
  *list_size = -1;
  *total_size = -1;
  if (v.has_list()) {
    const auto& l = v.list();
    *list_size = l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() +
                 l.shape_size() + l.tensor_size() + l.func_size();
    if (l.s_size() > 0) {
      int64_t bytes = 0;
      for (const std::string& s : l.s()) bytes += static_cast<int64_t>(s.size());
      *total_size = static_cast<int32_t>(std::min<int64_t>(bytes, INT32_MAX));
    } else if (l.shape_size() > 0) {
      int64_t dims = 0;
      for (const auto& shape : l.shape()) dims += shape.unknown_rank() ? 0 : shape.dim_size();
      *total_size = static_cast<int32_t>(dims);
    }
  } else if (v.value_case() == sluice::AttrValue::kS) {
    *total_size = static_cast<int32_t>(std::min<size_t>(v.s().size(), INT32_MAX));
  } else if (v.has_shape()) {
    *total_size = v.shape().unknown_rank() ? -1 : v.shape().dim_size();
  }
  SetStatus(status, absl::OkStatus());
}

void TF_OpKernelConstruction_GetAttrType(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         TF_DataType* val, TF_Status* status) {
  sluice::DataType dt;
  sluice::GetAttr(ctx, attr_name, &dt, status);
  if (TF_GetCode(status) == TF_OK && val != nullptr) *val = static_cast<TF_DataType>(dt);
}

void TF_OpKernelConstruction_GetAttrInt32(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          int32_t* val, TF_Status* status) {
  sluice::GetAttr(ctx, attr_name, val, status);
}

void TF_OpKernelConstruction_GetAttrInt64(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          int64_t* val, TF_Status* status) {
  sluice::GetAttr(ctx, attr_name, val, status);
}

void TF_OpKernelConstruction_GetAttrFloat(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          float* val, TF_Status* status) {
  sluice::GetAttr(ctx, attr_name, val, status);
}

void TF_OpKernelConstruction_GetAttrBool(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         TF_Bool* val, TF_Status* status) {
  bool b = false;
  sluice::GetAttr(ctx, attr_name, &b, status);
  if (TF_GetCode(status) == TF_OK && val != nullptr) *val = b ? 1 : 0;
}

void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction* ctx, const char* attr_name,
                                           char* val, size_t max_length, TF_Status* status) {
  std::string s;
  sluice::GetAttr(ctx, attr_name, &s, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (max_length > 0 && val == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_OpKernelConstruction_GetAttrString", "val"));
    return;
  }
  std::memcpy(val, s.data(), std::min(max_length, s.size()));
}

void TF_OpKernelConstruction_GetAttrTensor(TF_OpKernelConstruction* ctx, const char* attr_name,
                                           TF_Tensor** val, TF_Status* status) {
  sluice::Tensor t;
  sluice::GetAttr(ctx, attr_name, &t, status);
  if (TF_GetCode(status) != TF_OK) return;
  auto c = sluice::NewCApiTensor(std::move(t));
  SetStatus(status, c.status());
  if (c.ok()) *val = *c;
}

void TF_OpKernelConstruction_GetAttrTypeList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                             TF_DataType* vals, int max_vals, TF_Status* status) {
  sluice::DataTypeVector types;
  sluice::GetAttr(ctx, attr_name, &types, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (max_vals > 0 && vals == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_OpKernelConstruction_GetAttrTypeList", "vals"));
    return;
  }
  for (int i = 0; i < max_vals && i < static_cast<int>(types.size()); ++i) {
    vals[i] = static_cast<TF_DataType>(types[i]);
  }
}

void TF_OpKernelConstruction_GetAttrInt32List(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              int32_t* vals, int max_vals, TF_Status* status) {
  sluice::GetAttrList<int32_t, int32_t>(ctx, attr_name, vals, max_vals, status);
}

void TF_OpKernelConstruction_GetAttrInt64List(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              int64_t* vals, int max_vals, TF_Status* status) {
  sluice::GetAttrList<int64_t, int64_t>(ctx, attr_name, vals, max_vals, status);
}

void TF_OpKernelConstruction_GetAttrFloatList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              float* vals, int max_vals, TF_Status* status) {
  sluice::GetAttrList<float, float>(ctx, attr_name, vals, max_vals, status);
}

}  // extern "C"
