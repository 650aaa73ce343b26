// Kernels of ONNX's ai.onnx.ml ops: ArrayFeatureExtractor, Binarizer, LabelEncoder and
// TreeEnsemble (ops/onnx_ml_ops.cc has their contracts).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// ---- ArrayFeatureExtractor ------------------------------------------------------------------

template <typename T>
class ArrayFeatureExtractorOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.dims() < 1) {
      return absl::InvalidArgumentError("ArrayFeatureExtractor: x must have at least one dim, got a scalar");
    }
    const int64_t n = x.dim_size(x.dims() - 1);
    const int64_t k = y.NumElements();
    const auto idx = y.flat<int64_t>();
    for (int64_t j = 0; j < k; ++j) {
      if (idx[j] < 0 || idx[j] >= n) {
        return absl::InvalidArgumentError(absl::StrCat("ArrayFeatureExtractor: index ", idx[j], " at position ", j,
                                                       " of y is outside [0, ", n, ") (x's last dim)"));
      }
    }
    TensorShape out_shape;
    if (x.dims() == 1) {
      out_shape = TensorShape({1, k});
    } else {
      out_shape = x.shape();
      out_shape.set_dim(x.dims() - 1, k);
    }
    Tensor* z;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &z));
    const int64_t rows = n == 0 ? 0 : x.NumElements() / n;
    const auto in = x.flat<T>();
    auto out = z->flat<T>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) out[r * k + j] = in[r * n + idx[j]];
    }
    return absl::OkStatus();
  }
};

#define SL_REGISTER_AFE(T) \
  REGISTER_KERNEL_BUILDER(Name("Onnx>ArrayFeatureExtractor").Device(DEVICE_CPU).TypeConstraint<T>("T"), ArrayFeatureExtractorOp<T>)
SL_REGISTER_AFE(float);
SL_REGISTER_AFE(double);
SL_REGISTER_AFE(int64_t);
SL_REGISTER_AFE(int32_t);
SL_REGISTER_AFE(tstring);
#undef SL_REGISTER_AFE

// ---- Binarizer --------------------------------------------------------------------------------

template <typename T>
class BinarizerOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("threshold", &threshold_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const auto in = x.flat<T>();
    auto out = y->flat<T>();
    // Compared in double: an int64 above 2^24 must not round to the float threshold.
    const double t = threshold_;
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = static_cast<double>(in[i]) > t ? T(1) : T(0);
    return absl::OkStatus();
  }

 private:
  float threshold_ = 0;
};

#define SL_REGISTER_BINARIZER(T) \
  REGISTER_KERNEL_BUILDER(Name("Onnx>Binarizer").Device(DEVICE_CPU).TypeConstraint<T>("T"), BinarizerOp<T>)
SL_REGISTER_BINARIZER(float);
SL_REGISTER_BINARIZER(double);
SL_REGISTER_BINARIZER(int64_t);
SL_REGISTER_BINARIZER(int32_t);
#undef SL_REGISTER_BINARIZER

// ---- LabelEncoder -----------------------------------------------------------------------------

// The lookup key of element i of `t`: the string itself, or the element's value as a double
// (int64 keys as themselves) in a canonical byte form, so that -0 finds 0 and every NaN finds NaN.
std::string KeyOf(const Tensor& t, int64_t i) {
  auto bytes = [](auto v) { return std::string(reinterpret_cast<const char*>(&v), sizeof(v)); };
  switch (t.dtype()) {
    case DT_STRING:
      return t.flat<tstring>()[i];
    case DT_INT64:
      return bytes(t.flat<int64_t>()[i]);
    case DT_INT32:
      return bytes(static_cast<int64_t>(t.flat<int32_t>()[i]));
    case DT_INT16:
      return bytes(static_cast<int64_t>(t.flat<int16_t>()[i]));
    default: {
      double v = t.dtype() == DT_FLOAT ? static_cast<double>(t.flat<float>()[i]) : t.flat<double>()[i];
      if (v == 0) v = 0;  // -0 -> +0.
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      return bytes(v);
    }
  }
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype).
void CopyElement(const Tensor& src, int64_t from, Tensor* dst, int64_t to) {
  if (src.dtype() == DT_STRING) {
    dst->flat<tstring>()[to] = src.flat<tstring>()[from];
    return;
  }
  const size_t size = DataTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + to * size, static_cast<const char*>(src.raw_data()) + from * size,
              size);
}

class LabelEncoderOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("keys", &keys_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("values", &values_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("default_value", &default_));
    DataType tk, tv;
    SL_RETURN_IF_ERROR(ctx->GetAttr("TK", &tk));
    SL_RETURN_IF_ERROR(ctx->GetAttr("TV", &tv));
    if (keys_.dtype() != tk || values_.dtype() != tv || default_.dtype() != tv) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LabelEncoder: keys must be ", DataTypeString(tk), " and values and the default ", DataTypeString(tv),
          ", got keys ", DataTypeString(keys_.dtype()), ", values ", DataTypeString(values_.dtype()),
          ", default ", DataTypeString(default_.dtype())));
    }
    if (keys_.NumElements() != values_.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat("LabelEncoder: ", keys_.NumElements(), " keys but ",
                                                     values_.NumElements(), " values"));
    }
    if (default_.NumElements() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("LabelEncoder: the default value must have one element, got ", default_.NumElements()));
    }
    // The first of repeated keys wins.
    for (int64_t i = 0; i < keys_.NumElements(); ++i) index_.emplace(KeyOf(keys_, i), i);
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      auto it = index_.find(KeyOf(x, i));
      if (it == index_.end()) {
        CopyElement(default_, 0, y, i);
      } else {
        CopyElement(values_, it->second, y, i);
      }
    }
    return absl::OkStatus();
  }

 private:
  Tensor keys_, values_, default_;
  absl::flat_hash_map<std::string, int64_t> index_;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>LabelEncoder").Device(DEVICE_CPU), LabelEncoderOp);

// ---- TreeEnsemble -----------------------------------------------------------------------------

enum class Aggregate { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };
enum class PostTransform { kNone = 0, kSoftmax = 1, kLogistic = 2, kSoftmaxZero = 3, kProbit = 4 };
enum class NodeMode { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };

// The inverse of the standard normal CDF, for PROBIT: sqrt(2) * erfinv(2p - 1), erfinv by
// Giles' single-precision approximation refined with two Newton steps on erf.
double Probit(double p) {
  const double x = 2 * p - 1;
  if (x <= -1) return -std::numeric_limits<double>::infinity();
  if (x >= 1) return std::numeric_limits<double>::infinity();
  double w = -std::log((1 - x) * (1 + x)), r;
  if (w < 5) {
    w -= 2.5;
    r = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941}) {
      r = c + r * w;
    }
  } else {
    w = std::sqrt(w) - 3;
    r = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682}) {
      r = c + r * w;
    }
  }
  r *= x;
  for (int i = 0; i < 2; ++i) r -= (std::erf(r) - x) / (2 / std::sqrt(M_PI) * std::exp(-r * r));
  return std::sqrt(2.0) * r;
}

template <typename T>
class TreeEnsembleOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t aggregate, post;
    Tensor leaf_weights, splits, members;
    SL_RETURN_IF_ERROR(ctx->GetAttr("aggregate_function", &aggregate));
    SL_RETURN_IF_ERROR(ctx->GetAttr("post_transform", &post));
    SL_RETURN_IF_ERROR(ctx->GetAttr("n_targets", &n_targets_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("leaf_targetids", &leaf_targets_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("leaf_weights", &leaf_weights));
    SL_RETURN_IF_ERROR(ctx->GetAttr("membership_values", &members));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_falseleafs", &false_leaf_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_falsenodeids", &false_id_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_featureids", &feature_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_missing_value_tracks_true", &missing_true_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_modes", &modes_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_splits", &splits));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_trueleafs", &true_leaf_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("nodes_truenodeids", &true_id_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("tree_roots", &roots_));
    auto fail = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat("TreeEnsemble: ", parts...)); };
    if (aggregate < 0 || aggregate > 3) return fail("aggregate_function must be 0 to 3, got ", aggregate);
    if (post < 0 || post > 4) return fail("post_transform must be 0 to 4, got ", post);
    aggregate_ = static_cast<Aggregate>(aggregate);
    post_ = static_cast<PostTransform>(post);
    if (n_targets_ < 1) return fail("n_targets must be positive, got ", n_targets_);
    for (const Tensor* t : {&leaf_weights, &splits, &members}) {
      if (t->dtype() != DataTypeToEnum<T>::value) {
        return fail("leaf_weights, nodes_splits and membership_values must be ", DataTypeString(DataTypeToEnum<T>::value),
                    " like x, got ", DataTypeString(t->dtype()));
      }
    }
    const auto flat = [](const Tensor& t) {
      const auto f = t.flat<T>();
      return std::vector<double>(f.data(), f.data() + t.NumElements());
    };
    leaf_weights_ = flat(leaf_weights);
    splits_ = flat(splits);
    const size_t nodes = modes_.size();
    for (const auto* v : {&false_leaf_, &false_id_, &feature_, &true_leaf_, &true_id_}) {
      if (v->size() != nodes) return fail("every nodes_* attribute needs one entry per node (", nodes, " modes)");
    }
    if (splits_.size() != nodes) return fail(splits_.size(), " nodes_splits for ", nodes, " nodes");
    if (!missing_true_.empty() && missing_true_.size() != nodes) {
      return fail(missing_true_.size(), " nodes_missing_value_tracks_true for ", nodes, " nodes");
    }
    if (leaf_targets_.size() != leaf_weights_.size()) {
      return fail(leaf_targets_.size(), " leaf_targetids but ", leaf_weights_.size(), " leaf_weights");
    }
    for (size_t i = 0; i < leaf_targets_.size(); ++i) {
      if (leaf_targets_[i] < 0 || leaf_targets_[i] >= n_targets_) {
        return fail("leaf ", i, " has target ", leaf_targets_[i], ", outside [0, ", n_targets_, ")");
      }
    }
    // Each membership node takes the next NaN-terminated run of membership_values.
    const std::vector<double> member_values = flat(members);
    size_t next = 0;
    sets_.resize(nodes);
    for (size_t i = 0; i < nodes; ++i) {
      if (modes_[i] < 0 || modes_[i] > 6) return fail("node ", i, " has mode ", modes_[i], ", not 0 to 6");
      if (feature_[i] < 0) return fail("node ", i, " reads feature ", feature_[i]);
      max_feature_ = std::max(max_feature_, feature_[i]);
      for (int branch = 0; branch < 2; ++branch) {
        const int64_t id = branch == 0 ? true_id_[i] : false_id_[i];
        const bool leaf = (branch == 0 ? true_leaf_[i] : false_leaf_[i]) != 0;
        const int64_t limit = leaf ? static_cast<int64_t>(leaf_weights_.size()) : static_cast<int64_t>(nodes);
        if (id < 0 || id >= limit) {
          return fail("node ", i, "'s ", branch == 0 ? "true" : "false", " branch goes to ", leaf ? "leaf " : "node ",
                      id, ", outside [0, ", limit, ")");
        }
      }
      if (static_cast<NodeMode>(modes_[i]) != NodeMode::kMember) continue;
      bool closed = false;
      while (next < member_values.size()) {
        const double v = member_values[next++];
        if (std::isnan(v)) {
          closed = true;
          break;
        }
        sets_[i].push_back(v);
      }
      if (!closed) return fail("node ", i, " is a set membership node with no NaN-terminated run of membership_values left");
      std::sort(sets_[i].begin(), sets_[i].end());
    }
    for (size_t t = 0; t < roots_.size(); ++t) {
      if (roots_[t] < 0 || roots_[t] >= static_cast<int64_t>(nodes)) {
        return fail("tree ", t, "'s root is node ", roots_[t], ", outside [0, ", nodes, ")");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 2) return absl::InvalidArgumentError(absl::StrCat("TreeEnsemble: x must be [N, F], got ", x.shape().DebugString()));
    const int64_t n = x.dim_size(0), f = x.dim_size(1);
    if (!roots_.empty() && max_feature_ >= f) {
      return absl::InvalidArgumentError(
          absl::StrCat("TreeEnsemble: a node reads feature ", max_feature_, " but x has ", f, " features"));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n, n_targets_}), &y));
    const auto in = x.flat<T>();
    auto out = y->flat<T>();
    const double init = aggregate_ == Aggregate::kMin   ? std::numeric_limits<T>::max()
                        : aggregate_ == Aggregate::kMax ? std::numeric_limits<T>::lowest()
                                                        : 0.0;
    std::vector<double> scores(n_targets_);
    for (int64_t r = 0; r < n; ++r) {
      std::fill(scores.begin(), scores.end(), init);
      const T* row = in.data() + r * f;
      for (int64_t root : roots_) {
        SL_ASSIGN_OR_RETURN(int64_t leaf, Walk(root, row));
        double& s = scores[leaf_targets_[leaf]];
        const double w = leaf_weights_[leaf];
        switch (aggregate_) {
          case Aggregate::kAverage:
            s += w / static_cast<double>(roots_.size());
            break;
          case Aggregate::kSum:
            s += w;
            break;
          case Aggregate::kMin:
            s = std::min(s, w);
            break;
          case Aggregate::kMax:
            s = std::max(s, w);
            break;
        }
      }
      Transform(&scores);
      for (int64_t t = 0; t < n_targets_; ++t) out[r * n_targets_ + t] = static_cast<T>(scores[t]);
    }
    return absl::OkStatus();
  }

 private:
  // The leaf that `row` reaches from node `root`. A malformed ensemble may loop: a walk longer
  // than the node count fails instead of hanging.
  absl::StatusOr<int64_t> Walk(int64_t root, const T* row) const {
    const bool root_is_leaf = true_leaf_[root] && false_leaf_[root] && true_id_[root] == false_id_[root];
    if (root_is_leaf) return true_id_[root];
    int64_t node = root;
    for (size_t step = 0; step <= modes_.size(); ++step) {
      const double v = row[feature_[node]];
      // IEEE comparisons (a NaN feature is false for all but !=), or true where a missing
      // value tracks the true branch.
      const double s = splits_[node];
      bool go_true;
      switch (static_cast<NodeMode>(modes_[node])) {
        case NodeMode::kLeq: go_true = v <= s; break;
        case NodeMode::kLt: go_true = v < s; break;
        case NodeMode::kGte: go_true = v >= s; break;
        case NodeMode::kGt: go_true = v > s; break;
        case NodeMode::kEq: go_true = v == s; break;
        case NodeMode::kNeq: go_true = v != s; break;
        default: go_true = !std::isnan(v) && std::binary_search(sets_[node].begin(), sets_[node].end(), v); break;
      }
      if (std::isnan(v) && !missing_true_.empty() && missing_true_[node] != 0) go_true = true;
      const bool leaf = (go_true ? true_leaf_[node] : false_leaf_[node]) != 0;
      const int64_t next = go_true ? true_id_[node] : false_id_[node];
      if (leaf) return next;
      node = next;
    }
    return absl::InvalidArgumentError(absl::StrCat("TreeEnsemble: the tree rooted at node ", root,
                                                   " loops: its walk passed more nodes than the ensemble has"));
  }

  void Transform(std::vector<double>* s) const {
    switch (post_) {
      case PostTransform::kNone:
        return;
      case PostTransform::kLogistic:
        for (double& v : *s) v = 1 / (1 + std::exp(-v));
        return;
      case PostTransform::kProbit:
        for (double& v : *s) v = Probit(v);
        return;
      case PostTransform::kSoftmax:
      case PostTransform::kSoftmaxZero: {
        // SOFTMAX_ZERO leaves zeros at zero and normalizes over the others.
        const bool zero = post_ == PostTransform::kSoftmaxZero;
        double m = -std::numeric_limits<double>::infinity();
        for (double v : *s) {
          if (!(zero && v == 0)) m = std::max(m, v);
        }
        double sum = 0;
        for (double& v : *s) {
          if (zero && v == 0) continue;
          v = std::exp(v - m);
          sum += v;
        }
        for (double& v : *s) {
          if (!(zero && v == 0) && sum > 0) v /= sum;
        }
        return;
      }
    }
  }

  Aggregate aggregate_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
  int64_t n_targets_ = 0, max_feature_ = -1;
  std::vector<int64_t> leaf_targets_, false_leaf_, false_id_, feature_, missing_true_, modes_, true_leaf_, true_id_, roots_;
  std::vector<double> leaf_weights_, splits_;
  std::vector<std::vector<double>> sets_;  // Sorted members, for kMember nodes.
};

REGISTER_KERNEL_BUILDER(Name("Onnx>TreeEnsemble").Device(DEVICE_CPU).TypeConstraint<float>("T"), TreeEnsembleOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>TreeEnsemble").Device(DEVICE_CPU).TypeConstraint<double>("T"), TreeEnsembleOp<double>);

}  // namespace
}  // namespace sluice
