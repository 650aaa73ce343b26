// TFE_ContextOptions and TFE_Context: the CPU device eager ops run on, its threads, and the
// functions ops may call.
#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "c_api/c_api_internal.h"
#include "c_api/eager_internal.h"
#include "framework/resource_mgr.h"
#include "kernels/threading.h"
#include "proto/config.pb.h"
#include "proto/device_attributes.pb.h"
#include "proto/step_stats.pb.h"

namespace sluice {
namespace {

// Replaces (or adds) `fdef` in the context's library; the prepared kernels go, since executors
// carry the library they were made with.
void AddFunctionLocked(TFE_Context* ctx, const FunctionDef& fdef) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ctx->mu) {
  auto* fns = ctx->functions.mutable_function();
  for (auto& f : *fns) {
    if (f.signature().name() == fdef.signature().name()) {
      f = fdef;
      ctx->kernels.clear();
      return;
    }
  }
  *fns->Add() = fdef;
  ctx->kernels.clear();
}

}  // namespace

bool IsEagerCpuDevice(absl::string_view name) {
  if (name.empty()) return true;
  // Optional job/replica/task of the local process, then the device.
  absl::ConsumePrefix(&name, "/job:localhost");
  absl::ConsumePrefix(&name, "/replica:0");
  absl::ConsumePrefix(&name, "/task:0");
  absl::ConsumePrefix(&name, "/");
  absl::ConsumePrefix(&name, "device:");
  return absl::EqualsIgnoreCase(name, "CPU:0") || absl::EqualsIgnoreCase(name, "CPU") || name.empty();
}

}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TFE_ContextOptions* TFE_NewContextOptions(void) { return new TFE_ContextOptions; }

void TFE_ContextOptionsSetConfig(TFE_ContextOptions* options, const void* proto, size_t proto_len,
                                 TF_Status* status) {
  if (options == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextOptionsSetConfig", "options"));
  sluice::ConfigProto config;
  if (!sluice::ParseFromBytes(proto, proto_len, &config)) {
    return SetStatus(status, absl::InvalidArgumentError("TFE_ContextOptionsSetConfig: the bytes are not a ConfigProto"));
  }
  if (config.intra_op_parallelism_threads() < 0) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                 "TFE_ContextOptionsSetConfig: intra_op_parallelism_threads is negative (",
                                 config.intra_op_parallelism_threads(), ")")));
  }
  options->intra_op_threads = config.intra_op_parallelism_threads();
  SetStatus(status, absl::OkStatus());
}

void TFE_ContextOptionsSetAsync(TFE_ContextOptions* options, unsigned char enable) {
  if (options != nullptr) options->async = enable != 0;
}

void TFE_ContextOptionsSetDevicePlacementPolicy(TFE_ContextOptions* options,
                                                TFE_ContextDevicePlacementPolicy policy) {
  if (options != nullptr) options->policy = policy;
}

void TFE_DeleteContextOptions(TFE_ContextOptions* options) { delete options; }

TFE_Context* TFE_NewContext(const TFE_ContextOptions* opts, TF_Status* status) {
  auto ctx = std::make_unique<TFE_Context>();
  int threads = opts != nullptr && opts->intra_op_threads > 0 ? opts->intra_op_threads
                                                              : sluice::ThreadPool::DefaultThreads();
  // Capped like a worker's pool: more threads than this are a typo, not a machine.
  threads = std::min(threads, 4096);
  // The calling thread takes part in every parallel kernel, so the pool has one fewer.
  if (threads > 1) ctx->intra_op_pool = std::make_unique<sluice::ThreadPool>("eager_intra_op", threads - 1);
  if (opts != nullptr && opts->intra_op_threads > 0) sluice::SetBlasThreads(opts->intra_op_threads);
  sluice::DeviceAttributes attrs;
  attrs.set_name(sluice::kEagerDeviceName);
  attrs.set_device_type("CPU");
  attrs.set_incarnation(1);
  ctx->device = std::make_unique<sluice::Device>(attrs, ctx->intra_op_pool.get());
  if (opts != nullptr) ctx->policy = opts->policy;
  SetStatus(status, absl::OkStatus());
  return ctx.release();
}

void TFE_DeleteContext(TFE_Context* ctx) {
  if (ctx == nullptr) return;
  sluice::ReleaseResourceMgr(ctx->device.get());  // Summary writers flush their files here.
  delete ctx;
}

TF_DeviceList* TFE_ContextListDevices(TFE_Context* ctx, TF_Status* status) {
  if (ctx == nullptr) {
    SetStatus(status, sluice::NullArgument("TFE_ContextListDevices", "ctx"));
    return nullptr;
  }
  auto* list = new TF_DeviceList;
  list->devices.push_back(ctx->device->attributes());
  SetStatus(status, absl::OkStatus());
  return list;
}

void TFE_ContextClearCaches(TFE_Context* ctx) {
  if (ctx == nullptr) return;
  absl::MutexLock lock(&ctx->mu);
  ctx->kernels.clear();
}

void TFE_ContextSetThreadLocalDevicePlacementPolicy(TFE_Context* ctx, TFE_ContextDevicePlacementPolicy policy) {
  if (ctx != nullptr) ctx->policy = policy;
}

TFE_ContextDevicePlacementPolicy TFE_ContextGetDevicePlacementPolicy(TFE_Context* ctx) {
  return ctx != nullptr ? ctx->policy : TFE_DEVICE_PLACEMENT_SILENT;
}

void TFE_ContextSetServerDef(TFE_Context* ctx, int keep_alive_secs, const void* proto, size_t proto_len,
                             TF_Status* status) {
  SetStatus(status, absl::UnimplementedError(
                        "TFE_ContextSetServerDef: eager execution on Sluice is local; run graphs on a "
                        "cluster through TF_NewSession with a grpc:// target"));
}

void TFE_ContextAddFunctionDef(TFE_Context* ctx, const char* serialized_function_def, size_t size,
                               TF_Status* status) {
  if (ctx == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextAddFunctionDef", "ctx"));
  sluice::FunctionDef fdef;
  if (!sluice::ParseFromBytes(serialized_function_def, size, &fdef)) {
    return SetStatus(status, absl::InvalidArgumentError("TFE_ContextAddFunctionDef: the bytes are not a FunctionDef"));
  }
  if (fdef.signature().name().empty()) {
    return SetStatus(status, absl::InvalidArgumentError("TFE_ContextAddFunctionDef: the function has no name"));
  }
  absl::MutexLock lock(&ctx->mu);
  sluice::AddFunctionLocked(ctx, fdef);
  SetStatus(status, absl::OkStatus());
}

void TFE_ContextAddFunction(TFE_Context* ctx, TF_Function* function, TF_Status* status) {
  if (ctx == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextAddFunction", "ctx"));
  if (function == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextAddFunction", "function"));
  TF_Buffer* buf = TF_NewBuffer();
  TF_FunctionToFunctionDef(function, buf, status);
  if (TF_GetCode(status) == TF_OK) TFE_ContextAddFunctionDef(ctx, static_cast<const char*>(buf->data), buf->length, status);
  TF_DeleteBuffer(buf);
}

void TFE_ContextRemoveFunction(TFE_Context* ctx, const char* name, TF_Status* status) {
  if (ctx == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextRemoveFunction", "ctx"));
  if (name == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextRemoveFunction", "name"));
  absl::MutexLock lock(&ctx->mu);
  auto* fns = ctx->functions.mutable_function();
  for (int i = 0; i < fns->size(); ++i) {
    if (fns->Get(i).signature().name() == name) {
      fns->DeleteSubrange(i, 1);
      ctx->kernels.clear();
      return SetStatus(status, absl::OkStatus());
    }
  }
  SetStatus(status, absl::InvalidArgumentError(absl::StrCat("Tried to remove non-existent function '", name, "'.")));
}

unsigned char TFE_ContextHasFunction(TFE_Context* ctx, const char* name) {
  if (ctx == nullptr || name == nullptr) return 0;
  absl::MutexLock lock(&ctx->mu);
  for (const auto& f : ctx->functions.function()) {
    if (f.signature().name() == name) return 1;
  }
  return 0;
}

void TFE_ContextEnableRunMetadata(TFE_Context*) {}
void TFE_ContextDisableRunMetadata(TFE_Context*) {}

void TFE_ContextExportRunMetadata(TFE_Context* ctx, TF_Buffer* buf, TF_Status* status) {
  if (ctx == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextExportRunMetadata", "ctx"));
  if (buf == nullptr) return SetStatus(status, sluice::NullArgument("TFE_ContextExportRunMetadata", "buf"));
  SetStatus(status, sluice::MessageToBuffer(sluice::RunMetadata(), buf));
}

void TFE_ContextStartStep(TFE_Context*) {}
void TFE_ContextEndStep(TFE_Context*) {}

}  // extern "C"

