// Text kernels with ONNX semantics: StringNormalizer and TfIdfVectorizer.
#include <clocale>
#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// ---- StringNormalizer ----------------------------------------------------------------------

// Decodes one UTF-8 code point at s[*i], advancing *i; an invalid byte decodes as itself
// (flagged through *valid so that it is copied through unchanged).
char32_t DecodeUtf8(const std::string& s, size_t* i, bool* valid) {
  const unsigned char c = s[*i];
  int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || *i + len > s.size()) {
    *valid = false;
    ++*i;
    return c;
  }
  char32_t cp = len == 1 ? c : c & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = s[*i + k];
    if ((cc >> 6) != 0x2) {
      *valid = false;
      ++*i;
      return c;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  *valid = true;
  *i += len;
  return cp;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizerOp : public OpKernel {
 public:
  StringNormalizerOp() = default;
  StringNormalizerOp(const StringNormalizerOp&) = delete;
  StringNormalizerOp& operator=(const StringNormalizerOp&) = delete;
  ~StringNormalizerOp() override {
    if (locale_ != (locale_t)0) freelocale(locale_);
  }

  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string action, locale;
    int64_t case_sensitive;
    std::vector<std::string> stopwords;
    SL_RETURN_IF_ERROR(ctx->GetAttr("case_change_action", &action));
    SL_RETURN_IF_ERROR(ctx->GetAttr("is_case_sensitive", &case_sensitive));
    SL_RETURN_IF_ERROR(ctx->GetAttr("locale", &locale));
    SL_RETURN_IF_ERROR(ctx->GetAttr("stopwords", &stopwords));
    change_ = action == "LOWER" ? CaseChange::kLower : action == "UPPER" ? CaseChange::kUpper : CaseChange::kNone;
    case_sensitive_ = case_sensitive != 0;
    // The locale's UTF-8 variant when the system has it ("en_US" -> "en_US.UTF-8"), else
    // C.UTF-8's Unicode case mapping; an empty name means en_US. Without either, case changes
    // only ASCII letters.
    if (locale.empty()) locale = "en_US";
    for (const std::string& name : {locale + ".UTF-8", locale + ".utf8", locale, std::string("C.UTF-8"),
                                    std::string("C.utf8")}) {
      locale_ = newlocale(LC_CTYPE_MASK, name.c_str(), (locale_t)0);
      if (locale_ != (locale_t)0) break;
    }
    for (const std::string& w : stopwords) stopwords_.insert(case_sensitive_ ? w : ChangeCase(w, CaseChange::kLower));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const bool two_dim = x.dims() == 2;
    if (!(x.dims() == 1 || (two_dim && x.dim_size(0) == 1))) {
      return absl::InvalidArgumentError(
          absl::StrCat("StringNormalizer: input must be [C] or [1, C], got ", x.shape().DebugString()));
    }
    std::vector<std::string> kept;
    const auto in = x.flat<tstring>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const std::string& s = in[i];
      const bool stop = case_sensitive_ ? stopwords_.count(s) > 0
                                        : stopwords_.count(ChangeCase(s, CaseChange::kLower)) > 0;
      if (!stop) kept.push_back(ChangeCase(s, change_));
    }
    // Everything dropped from a non-empty input: one empty string.
    if (kept.empty() && x.NumElements() > 0) kept.emplace_back();
    const int64_t k = static_cast<int64_t>(kept.size());
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, two_dim ? TensorShape({1, k}) : TensorShape({k}), &y));
    auto out = y->flat<tstring>();
    for (int64_t i = 0; i < k; ++i) out[i] = std::move(kept[i]);
    return absl::OkStatus();
  }

 private:
  std::string ChangeCase(const std::string& s, CaseChange change) const {
    if (change == CaseChange::kNone) return s;
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
      const size_t start = i;
      bool valid;
      const char32_t cp = DecodeUtf8(s, &i, &valid);
      if (!valid) {
        out.push_back(s[start]);
        continue;
      }
      char32_t mapped = cp;
      if (locale_ != (locale_t)0) {
        mapped = change == CaseChange::kUpper ? towupper_l(cp, locale_) : towlower_l(cp, locale_);
      } else if (cp < 0x80) {
        mapped = change == CaseChange::kUpper ? (cp >= 'a' && cp <= 'z' ? cp - 32 : cp)
                                              : (cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
      }
      AppendUtf8(mapped, &out);
    }
    return out;
  }

  CaseChange change_ = CaseChange::kNone;
  bool case_sensitive_ = false;
  std::set<std::string> stopwords_;  // Lower-cased unless case-sensitive.
  locale_t locale_ = (locale_t)0;    // Owned; read-only after Init.
};

REGISTER_KERNEL_BUILDER(Name("Onnx>StringNormalizer").Device(DEVICE_CPU), StringNormalizerOp);

// ---- TfIdfVectorizer -----------------------------------------------------------------------

enum class TfIdfMode { kTF, kIDF, kTFIDF };

// Tokens are compared as int64 ids: integer inputs as themselves, strings as their position in
// pool_strings (kUnknownToken when absent, which matches no n-gram).
constexpr int64_t kUnknownToken = -1;

template <typename T>
class TfIdfVectorizerOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string mode;
    std::vector<int64_t> ngram_counts, pool_int64s;
    std::vector<std::string> pool_strings;
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
    SL_RETURN_IF_ERROR(ctx->GetAttr("min_gram_length", &min_n_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("max_gram_length", &max_n_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("max_skip_count", &max_skip_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("ngram_counts", &ngram_counts));
    SL_RETURN_IF_ERROR(ctx->GetAttr("ngram_indexes", &ngram_indexes_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("pool_int64s", &pool_int64s));
    SL_RETURN_IF_ERROR(ctx->GetAttr("pool_strings", &pool_strings));
    SL_RETURN_IF_ERROR(ctx->GetAttr("weights", &weights_));
    mode_ = mode == "IDF" ? TfIdfMode::kIDF : mode == "TFIDF" ? TfIdfMode::kTFIDF : TfIdfMode::kTF;
    if (min_n_ < 1 || max_n_ < min_n_ || max_skip_ < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got ",
          min_n_, ", ", max_n_, ", ", max_skip_));
    }
    constexpr bool kStrings = std::is_same_v<T, tstring>;
    if (kStrings ? !pool_int64s.empty() : !pool_strings.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("TfIdfVectorizer: ", kStrings ? "string" : "integer",
                                                     " input needs ", kStrings ? "pool_strings" : "pool_int64s"));
    }
    std::vector<int64_t> pool;
    if constexpr (kStrings) {
      for (const std::string& s : pool_strings) {
        auto it = string_ids_.emplace(s, static_cast<int64_t>(string_ids_.size())).first;
        pool.push_back(it->second);
      }
    } else {
      pool = pool_int64s;
    }
    // ngram_counts[i] is where the (i+1)-grams start in the pool.
    const int64_t pool_size = static_cast<int64_t>(pool.size());
    int64_t ngram = 0;
    for (size_t i = 0; i < ngram_counts.size(); ++i) {
      const int64_t n = static_cast<int64_t>(i) + 1;
      const int64_t begin = ngram_counts[i];
      const int64_t end = i + 1 < ngram_counts.size() ? ngram_counts[i + 1] : pool_size;
      if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TfIdfVectorizer: ngram_counts must be non-decreasing offsets into the pool of ", pool_size,
            " items, each section a whole number of n-grams; section ", i, " is [", begin, ", ", end, ")"));
      }
      if (n > max_n_ || begin == end) {
        ngram += (end - begin) / n;
        continue;
      }
      if (static_cast<int64_t>(grams_.size()) < n) grams_.resize(n);
      for (int64_t p = begin; p < end; p += n) {
        grams_[n - 1].emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n), ngram++);
      }
    }
    if (ngram != static_cast<int64_t>(ngram_indexes_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("TfIdfVectorizer: the pool holds ", ngram,
                                                     " n-grams but ngram_indexes has ", ngram_indexes_.size()));
    }
    if (!weights_.empty() && weights_.size() != ngram_indexes_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("TfIdfVectorizer: weights has ", weights_.size(),
                                                     " values for ", ngram_indexes_.size(), " n-grams"));
    }
    for (int64_t index : ngram_indexes_) {
      if (index < 0) return absl::InvalidArgumentError("TfIdfVectorizer: ngram_indexes must be >= 0");
      width_ = std::max(width_, index + 1);
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 1 && x.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("TfIdfVectorizer: input must be [C] or [N, C], got ", x.shape().DebugString()));
    }
    const int64_t rows = x.dims() == 2 ? x.dim_size(0) : 1;
    const int64_t cols = x.dims() == 2 ? x.dim_size(1) : x.dim_size(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(
        0, x.dims() == 2 ? TensorShape({rows, width_}) : TensorShape({width_}), &y));
    float* out = y->data<float>();
    std::fill(out, out + y->NumElements(), 0.0f);
    const auto in = x.flat<T>();
    std::vector<int64_t> tokens(cols), key;
    std::vector<int64_t> counts(ngram_indexes_.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) tokens[c] = TokenId(in[r * cols + c]);
      std::fill(counts.begin(), counts.end(), 0);
      const int64_t top = std::min<int64_t>(max_n_, grams_.size());
      for (int64_t n = min_n_; n <= top; ++n) {
        const auto& grams = grams_[n - 1];
        if (grams.empty()) continue;
        // Unigrams are counted once: skips do not change them.
        const int64_t max_step = n == 1 ? 1 : max_skip_ + 1;
        for (int64_t step = 1; step <= max_step; ++step) {
          for (int64_t start = 0; start + (n - 1) * step < cols; ++start) {
            key.clear();
            for (int64_t k = 0; k < n; ++k) key.push_back(tokens[start + k * step]);
            auto it = grams.find(key);
            if (it != grams.end()) ++counts[it->second];
          }
        }
      }
      float* row = out + r * width_;
      for (size_t g = 0; g < counts.size(); ++g) row[ngram_indexes_[g]] += Weighted(g, counts[g]);
    }
    return absl::OkStatus();
  }

 private:
  int64_t TokenId(const T& v) const {
    if constexpr (std::is_same_v<T, tstring>) {
      auto it = string_ids_.find(v);
      return it == string_ids_.end() ? kUnknownToken : it->second;
    } else {
      return static_cast<int64_t>(v);
    }
  }

  // The value n-gram g adds to its column. Weights belong to pool n-grams, as ONNX's spec
  // says (ONNX Runtime indexes them by output column; the two agree when ngram_indexes is the
  // identity).
  float Weighted(size_t g, int64_t count) const {
    switch (mode_) {
      case TfIdfMode::kTF:
        return static_cast<float>(count);
      case TfIdfMode::kIDF:
        return count == 0 ? 0.0f : weights_.empty() ? 1.0f : weights_[g];
      case TfIdfMode::kTFIDF:
        return static_cast<float>(count) * (weights_.empty() ? 1.0f : weights_[g]);
    }
    return 0.0f;
  }

  TfIdfMode mode_ = TfIdfMode::kTF;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, width_ = 0;
  std::vector<int64_t> ngram_indexes_;
  std::vector<float> weights_;
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams_;  // [n - 1]: n-gram -> its index.
  absl::flat_hash_map<std::string, int64_t> string_ids_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>TfIdfVectorizer").Device(DEVICE_CPU).TypeConstraint<tstring>("T"),
                        TfIdfVectorizerOp<tstring>);
REGISTER_KERNEL_BUILDER(Name("Onnx>TfIdfVectorizer").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                        TfIdfVectorizerOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Onnx>TfIdfVectorizer").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                        TfIdfVectorizerOp<int64_t>);

}  // namespace
}  // namespace sluice
