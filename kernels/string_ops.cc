// ONNX's string ops of opset 20: StringConcat (broadcasting), StringSplit (Python's str.split,
// padded into one more dim) and RegexFullMatch (RE2).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "framework/checked_size.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "re2/re2.h"

namespace sluice {
namespace {

class StringConcatOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(x.shape(), y.shape()), "StringConcat");
    Tensor* z;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, plan.out_shape, &z));
    const auto a = x.flat<tstring>();
    const auto b = y.flat<tstring>();
    auto out = z->flat<tstring>();
    ForEachBroadcastRun(plan, [&](int64_t o, int64_t ai, int64_t bi, int64_t count, int64_t a_step, int64_t b_step) {
      for (int64_t k = 0; k < count; ++k) out[o + k] = absl::StrCat(a[ai + k * a_step], b[bi + k * b_step]);
    });
    return absl::OkStatus();
  }
};

// The length in bytes of the whitespace character at s[i] as Python's str.split() counts
// whitespace (ASCII's, the separators \x1c-\x1f and Unicode's spaces, in UTF-8), or 0.
size_t SpaceLength(absl::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
  if (c == 0xC2) return b(1) == 0x85 || b(1) == 0xA0 ? 2 : 0;                     // U+0085, U+00A0
  if (c == 0xE1) return b(1) == 0x9A && b(2) == 0x80 ? 3 : 0;                      // U+1680
  if (c == 0xE3) return b(1) == 0x80 && b(2) == 0x80 ? 3 : 0;                      // U+3000
  if (c != 0xE2) return 0;
  if (b(1) == 0x80) {
    const unsigned t = b(2);
    return (t >= 0x80 && t <= 0x8A) || t == 0xA8 || t == 0xA9 || t == 0xAF ? 3 : 0;  // U+2000-200A, 2028, 2029, 202F
  }
  return b(1) == 0x81 && b(2) == 0x9F ? 3 : 0;                                     // U+205F
}

// Python's s.split(delimiter, maxsplit), delimiter empty meaning None.
std::vector<absl::string_view> SplitLikePython(absl::string_view s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<absl::string_view> pieces;
  if (!delimiter.empty()) {
    size_t start = 0;
    for (;;) {
      if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) break;
      const size_t at = s.find(delimiter, start);
      if (at == absl::string_view::npos) break;
      pieces.push_back(s.substr(start, at - start));
      start = at + delimiter.size();
    }
    pieces.push_back(s.substr(start));
    return pieces;
  }
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    for (size_t len; i < n && (len = SpaceLength(s, i)) > 0;) i += len;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      // The rest, leading whitespace dropped, trailing kept, as Python does.
      pieces.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && SpaceLength(s, j) == 0) ++j;
    pieces.push_back(s.substr(i, j - i));
    i = j;
  }
  return pieces;
}

class StringSplitOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("delimiter", &delimiter_));
    return ctx->GetAttr("maxsplit", &maxsplit_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const auto in = x.flat<tstring>();
    std::vector<std::vector<absl::string_view>> pieces(x.NumElements());
    int64_t widest = 0;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      pieces[i] = SplitLikePython(in[i], delimiter_, maxsplit_);
      widest = std::max<int64_t>(widest, static_cast<int64_t>(pieces[i].size()));
    }
    DimVector dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
    dims.push_back(widest);
    SL_ASSIGN_OR_RETURN(TensorShape y_shape, TensorShape::FromDims(dims), "StringSplit");
    Tensor *y, *z;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, y_shape, &y));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, x.shape(), &z));
    auto out = y->flat<tstring>();
    auto counts = z->flat<int64_t>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      counts[i] = static_cast<int64_t>(pieces[i].size());
      for (int64_t k = 0; k < widest; ++k) {
        out[i * widest + k] = k < counts[i] ? std::string(pieces[i][k]) : std::string();
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_ = -1;
};

class RegexFullMatchOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string pattern;
    SL_RETURN_IF_ERROR(ctx->GetAttr("pattern", &pattern));
    RE2::Options options;
    options.set_log_errors(false);  // The error comes back in the status instead.
    re_ = std::make_unique<RE2>(pattern, options);
    if (!re_->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegexFullMatch: pattern '", pattern, "' is not valid RE2: ", re_->error()));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const auto in = x.flat<tstring>();
    auto out = y->flat<bool>();
    // RE2 matching is thread-safe on a const RE2.
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = RE2::FullMatch(in[i], *re_);
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<RE2> re_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>StringConcat").Device(DEVICE_CPU), StringConcatOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>StringSplit").Device(DEVICE_CPU), StringSplitOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>RegexFullMatch").Device(DEVICE_CPU), RegexFullMatchOp);

}  // namespace
}  // namespace sluice
