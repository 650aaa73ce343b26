// TensorFlow's StaticRegexReplace (pattern and rewrite as attrs, compiled once) and
// RegexReplace (as scalar inputs, compiled per run), over RE2: the syntax TensorFlow documents
// for both. An invalid pattern, or a rewrite that names a group the pattern lacks, is
// INVALID_ARGUMENT.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "re2/re2.h"

namespace sluice {
namespace {

// The compiled pattern, checked against the rewrite.
absl::StatusOr<std::unique_ptr<RE2>> Compile(const char* op, const std::string& pattern, const std::string& rewrite) {
  RE2::Options options;
  options.set_log_errors(false);  // The error comes back in the status instead.
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": invalid pattern '", pattern, "': ", re->error()));
  }
  std::string error;
  if (!re->CheckRewriteString(rewrite, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": invalid rewrite '", rewrite, "': ", error));
  }
  return re;
}

absl::Status Replace(OpKernelContext* ctx, const RE2& re, const std::string& rewrite, bool global) {
  const Tensor& in = ctx->input(0);
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
  const tstring* src = in.data<tstring>();
  tstring* dst = out->data<tstring>();
  // RE2's matching is thread-safe on a const RE2.
  for (int64_t i = 0, n = in.NumElements(); i < n; ++i) {
    dst[i] = src[i];
    if (global) {
      RE2::GlobalReplace(&dst[i], re, rewrite);
    } else {
      RE2::Replace(&dst[i], re, rewrite);
    }
  }
  return absl::OkStatus();
}

class StaticRegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string pattern;
    SL_RETURN_IF_ERROR(ctx->GetAttr("pattern", &pattern));
    SL_RETURN_IF_ERROR(ctx->GetAttr("rewrite", &rewrite_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("replace_global", &global_));
    SL_ASSIGN_OR_RETURN(re_, Compile("StaticRegexReplace", pattern, rewrite_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override { return Replace(ctx, *re_, rewrite_, global_); }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

class RegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("replace_global", &global_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& pattern = ctx->input(1);
    const Tensor& rewrite = ctx->input(2);
    if (pattern.dims() != 0 || rewrite.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("RegexReplace: pattern and rewrite must be scalars, got shapes ",
                                                     pattern.shape().DebugString(), " and ",
                                                     rewrite.shape().DebugString()));
    }
    const std::string& r = rewrite.data<tstring>()[0];
    SL_ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, Compile("RegexReplace", pattern.data<tstring>()[0], r));
    return Replace(ctx, *re, r, global_);
  }

 private:
  bool global_ = true;
};

absl::StatusOr<std::unique_ptr<RE2>> CompileMatch(const char* op, const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": invalid pattern '", pattern, "': ", re->error()));
  return re;
}

absl::Status FullMatch(OpKernelContext* ctx, const RE2& re) {
  const Tensor& in = ctx->input(0);
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
  const tstring* src = in.data<tstring>();
  bool* dst = out->data<bool>();
  for (int64_t i = 0, n = in.NumElements(); i < n; ++i) dst[i] = RE2::FullMatch(src[i], re);
  return absl::OkStatus();
}

class StaticRegexFullMatchOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string pattern;
    SL_RETURN_IF_ERROR(ctx->GetAttr("pattern", &pattern));
    SL_ASSIGN_OR_RETURN(re_, CompileMatch("StaticRegexFullMatch", pattern));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override { return FullMatch(ctx, *re_); }

 private:
  std::unique_ptr<RE2> re_;
};

class RegexFullMatchOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& pattern = ctx->input(1);
    if (pattern.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegexFullMatch: pattern must be a scalar, got shape ", pattern.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, CompileMatch("RegexFullMatch", pattern.data<tstring>()[0]));
    return FullMatch(ctx, *re);
  }
};

REGISTER_KERNEL_BUILDER(Name("StaticRegexFullMatch").Device(DEVICE_CPU), StaticRegexFullMatchOp);
REGISTER_KERNEL_BUILDER(Name("RegexFullMatch").Device(DEVICE_CPU), RegexFullMatchOp);
REGISTER_KERNEL_BUILDER(Name("StaticRegexReplace").Device(DEVICE_CPU), StaticRegexReplaceOp);
REGISTER_KERNEL_BUILDER(Name("RegexReplace").Device(DEVICE_CPU), RegexReplaceOp);

}  // namespace
}  // namespace sluice
