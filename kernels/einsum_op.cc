// Einsum (ONNX / numpy equation syntax). The equation is parsed once in Init. Each run takes
// the diagonal of labels repeated within an operand, sums labels that nothing later needs,
// and contracts the operands left to right as batched GEMMs ([batch, m, k] x [batch, k, n]),
// reading an operand in place (transposed or not) when its labels are already grouped.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/blas.h"
#include "kernels/kernel_registry.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

constexpr int kNumLetters = 52;  // a-z, A-Z; ellipsis dims get labels from here on.
constexpr int kEllipsis = -1;    // Marks the ellipsis within a parsed term.

// Letters sort as characters do ('A' < 'a'), which orders the implicit output.
int LetterLabel(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : 26 + (c - 'a'); }

struct Equation {
  std::vector<std::vector<int>> inputs;  // Letter labels and at most one kEllipsis each.
  std::vector<int> output;
  bool explicit_output = false;
};

absl::StatusOr<std::vector<int>> ParseTerm(const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      labels.push_back(LetterLabel(c));
    } else if (c == '.' && term.compare(i, 3, "...") == 0 && !ellipsis) {
      ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Einsum: unexpected '", std::string(1, c), "' in term '", term,
                                                     "' (terms are letters and at most one '...')"));
    }
  }
  return labels;
}

absl::StatusOr<Equation> ParseEquation(const std::string& text) {
  std::string eq;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n') eq.push_back(c);
  }
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    SL_ASSIGN_OR_RETURN(std::vector<int> term, ParseTerm(lhs.substr(start, comma - start)));
    e.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    SL_ASSIGN_OR_RETURN(e.output, ParseTerm(eq.substr(arrow + 2)));
    std::vector<bool> seen(kNumLetters, false);
    for (int l : e.output) {
      if (l == kEllipsis) continue;
      if (seen[l]) return absl::InvalidArgumentError(absl::StrCat("Einsum: output label repeats in '", text, "'"));
      seen[l] = true;
      bool found = false;
      for (const auto& in : e.inputs) found = found || std::count(in.begin(), in.end(), l) > 0;
      if (!found) return absl::InvalidArgumentError(absl::StrCat("Einsum: an output label of '", text, "' is in no input"));
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters used exactly once, sorted.
    std::vector<int> count(kNumLetters, 0);
    bool any_ellipsis = false;
    for (const auto& in : e.inputs) {
      for (int l : in) {
        if (l == kEllipsis) any_ellipsis = true;
        else ++count[l];
      }
    }
    if (any_ellipsis) e.output.push_back(kEllipsis);
    for (int l = 0; l < kNumLetters; ++l) {
      if (count[l] == 1) e.output.push_back(l);
    }
  }
  return e;
}

// A dense row-major operand during evaluation; `data` points into `storage` or into an input.
template <typename A>
struct Operand {
  std::vector<int> labels;
  std::vector<int64_t> dims;
  const A* data = nullptr;
  std::vector<A> storage;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  void Own(std::vector<A> v) {
    storage = std::move(v);
    data = storage.data();
  }
};

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// dst[i] = src[offset of i under `strides`], for i over `dims` in row-major order.
template <typename A>
void StridedCopy(const A* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, A* dst) {
  const int rank = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t inner = dims[rank - 1], step = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) dst[o + j] = src[off + j * step];
    for (int d = rank - 2; d >= 0; --d) {
      off += strides[d];
      if (++index[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// Reorders `op` so its labels read `order` (a permutation of them).
template <typename A>
void Transpose(Operand<A>* op, const std::vector<int>& order) {
  if (order == op->labels) return;
  const std::vector<int64_t> src_strides = DenseStrides(op->dims);
  std::vector<int64_t> dims, strides;
  for (int l : order) {
    const size_t p = std::find(op->labels.begin(), op->labels.end(), l) - op->labels.begin();
    dims.push_back(op->dims[p]);
    strides.push_back(src_strides[p]);
  }
  std::vector<A> out(op->size());
  StridedCopy(op->data, dims, strides, out.data());
  op->labels = order;
  op->dims = dims;
  op->Own(std::move(out));
}

// Takes the diagonal over each label that repeats in `op`; labels keep their first position.
template <typename A>
void TakeDiagonals(Operand<A>* op) {
  std::vector<int> labels;
  std::vector<int64_t> dims, strides;
  const std::vector<int64_t> src_strides = DenseStrides(op->dims);
  for (size_t i = 0; i < op->labels.size(); ++i) {
    const size_t p = std::find(labels.begin(), labels.end(), op->labels[i]) - labels.begin();
    if (p < labels.size()) {
      strides[p] += src_strides[i];
    } else {
      labels.push_back(op->labels[i]);
      dims.push_back(op->dims[i]);
      strides.push_back(src_strides[i]);
    }
  }
  if (labels.size() == op->labels.size()) return;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<A> out(n);
  StridedCopy(op->data, dims, strides, out.data());
  op->labels = labels;
  op->dims = dims;
  op->Own(std::move(out));
}

// Sums `op` over every label for which keep(label) is false.
template <typename A, typename Keep>
void SumOut(Operand<A>* op, Keep keep) {
  std::vector<int> labels;
  std::vector<int64_t> dims;
  std::vector<bool> kept(op->labels.size());
  for (size_t i = 0; i < op->labels.size(); ++i) {
    kept[i] = keep(op->labels[i]);
    if (kept[i]) {
      labels.push_back(op->labels[i]);
      dims.push_back(op->dims[i]);
    }
  }
  if (labels.size() == op->labels.size()) return;
  const std::vector<int64_t> out_strides = DenseStrides(dims);
  std::vector<int64_t> strides(op->labels.size(), 0);  // Output stride per input dim; 0 when summed.
  for (size_t i = 0, k = 0; i < op->labels.size(); ++i) {
    if (kept[i]) strides[i] = out_strides[k++];
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<A> out(n, A(0));
  const int rank = static_cast<int>(op->dims.size());
  const int64_t total = op->size();
  std::vector<int64_t> index(rank, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[off] += op->data[i];
    for (int d = rank - 1; d >= 0; --d) {
      off += strides[d];
      if (++index[d] < op->dims[d]) break;
      off -= strides[d] * op->dims[d];
      index[d] = 0;
    }
  }
  op->labels = labels;
  op->dims = dims;
  op->Own(std::move(out));
}

bool Contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int> Concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

// The product of a and b summed over their shared labels that `needed` lacks: labels
// [batch, m, n] for the shared labels `needed` has, a's own and b's own. `threads`: as GemmRowMajor's.
template <typename A>
Operand<A> Contract(Operand<A> a, Operand<A> b, const std::vector<int>& needed, int threads) {
  SumOut(&a, [&](int l) { return Contains(b.labels, l) || Contains(needed, l); });
  SumOut(&b, [&](int l) { return Contains(a.labels, l) || Contains(needed, l); });
  std::vector<int> batch, m_labels, k_labels, n_labels;
  int64_t nb = 1, m = 1, k = 1, n = 1;
  Operand<A> out;
  for (size_t i = 0; i < a.labels.size(); ++i) {
    const int l = a.labels[i];
    if (!Contains(b.labels, l)) {
      m_labels.push_back(l);
      m *= a.dims[i];
    } else if (Contains(needed, l)) {
      batch.push_back(l);
      nb *= a.dims[i];
    } else {
      k_labels.push_back(l);
      k *= a.dims[i];
    }
  }
  for (size_t i = 0; i < b.labels.size(); ++i) {
    if (!Contains(a.labels, b.labels[i])) {
      n_labels.push_back(b.labels[i]);
      n *= b.dims[i];
    }
  }
  // Read each side as stored when its labels already come as [batch, rows, depth] or
  // [batch, depth, rows]; otherwise transpose it to the first.
  bool trans_a = false, trans_b = false;
  if (a.labels == Concat({&batch, &k_labels, &m_labels}) && a.labels != Concat({&batch, &m_labels, &k_labels})) {
    trans_a = true;
  } else {
    Transpose(&a, Concat({&batch, &m_labels, &k_labels}));
  }
  if (b.labels == Concat({&batch, &n_labels, &k_labels}) && b.labels != Concat({&batch, &k_labels, &n_labels})) {
    trans_b = true;
  } else {
    Transpose(&b, Concat({&batch, &k_labels, &n_labels}));
  }
  out.labels = Concat({&batch, &m_labels, &n_labels});
  for (int l : out.labels) {
    const auto ia = std::find(a.labels.begin(), a.labels.end(), l);
    out.dims.push_back(ia != a.labels.end() ? a.dims[ia - a.labels.begin()]
                                            : b.dims[std::find(b.labels.begin(), b.labels.end(), l) - b.labels.begin()]);
  }
  std::vector<A> result(nb * m * n, A(0));
  if (k > 0 && m > 0 && n > 0) {
    for (int64_t i = 0; i < nb; ++i) {
      GemmRowMajor<A>(trans_a, trans_b, m, n, k, A(1), a.data + i * m * k, trans_a ? m : k, b.data + i * k * n,
                      trans_b ? k : n, A(0), result.data() + i * m * n, n, threads);
    }
  }
  out.Own(std::move(result));
  return out;
}

// Arithmetic type per element type: floats widen half; integers wrap as in T, computed in
// uint64 (two's complement arithmetic is exact modulo 2^bits, so the low bits are T's; signed
// int64 overflow would be undefined behaviour).
template <typename T>
using EinsumAcc = std::conditional_t<
    std::is_same_v<T, double>, double,
    std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, half>, float, uint64_t>>;

template <typename T>
class EinsumOp : public OpKernel {
 public:
  using A = EinsumAcc<T>;

  // `tensorflow`: TensorFlow's Einsum, which takes one or two operands and needs the explicit
  // output ("->"); the ONNX op takes any number and may leave the output implicit.
  explicit EinsumOp(bool tensorflow = false) : tensorflow_(tensorflow) {}

  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string equation;
    int64_t n = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("equation", &equation));
    SL_RETURN_IF_ERROR(ctx->GetAttr("N", &n));
    if (tensorflow_) {
      // TensorFlow's wording: clients (tfjs) match these messages.
      if (n > 2) return absl::InvalidArgumentError(absl::StrCat("Einsum: Expecting 1 or 2 input tensors but got: ", n));
      size_t arrows = 0;
      for (size_t p = equation.find("->"); p != std::string::npos; p = equation.find("->", p + 2)) ++arrows;
      if (arrows != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Einsum: Expecting exactly one '->' in einsum equation: '", equation, "'"));
      }
    }
    SL_ASSIGN_OR_RETURN(eq_, ParseEquation(equation));
    if (static_cast<int64_t>(eq_.inputs.size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum: equation '", equation, "' has ", eq_.inputs.size(),
                                                     " terms for ", n, " inputs (Expected ", eq_.inputs.size(),
                                                     " inputs but got: ", n, ")"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const int num = ctx->num_inputs();
    // Ellipsis dims: as many as the widest input gives, aligned to the right.
    int num_ellipsis = 0;
    std::vector<int> input_ellipsis(num, 0);
    for (int i = 0; i < num; ++i) {
      const auto& term = eq_.inputs[i];
      const int letters = static_cast<int>(term.size()) - (Contains(term, kEllipsis) ? 1 : 0);
      const int rank = ctx->input(i).dims();
      if (Contains(term, kEllipsis) ? rank < letters : rank != letters) {
        return absl::InvalidArgumentError(absl::StrCat("Einsum: input ", i, " has shape ",
                                                       ctx->input(i).shape().DebugString(), " but its term has ",
                                                       letters, " letters", Contains(term, kEllipsis) ? " and '...'" : ""));
      }
      input_ellipsis[i] = rank - letters;
      num_ellipsis = std::max(num_ellipsis, input_ellipsis[i]);
    }
    auto expand = [&](const std::vector<int>& term, int count) {
      std::vector<int> labels;
      for (int l : term) {
        if (l != kEllipsis) {
          labels.push_back(l);
          continue;
        }
        for (int j = num_ellipsis - count; j < num_ellipsis; ++j) labels.push_back(kNumLetters + j);
      }
      return labels;
    };
    // Sizes per label; ellipsis dims of size 1 broadcast.
    std::vector<int64_t> size(kNumLetters + num_ellipsis, -1);
    std::vector<Operand<A>> ops(num);
    for (int i = 0; i < num; ++i) {
      const Tensor& t = ctx->input(i);
      Operand<A>& op = ops[i];
      op.labels = expand(eq_.inputs[i], input_ellipsis[i]);
      for (int d = 0; d < t.dims(); ++d) {
        const int l = op.labels[d];
        const int64_t s = t.dim_size(d);
        op.dims.push_back(s);
        if (size[l] == -1 || (l >= kNumLetters && size[l] == 1)) {
          size[l] = s;
        } else if (size[l] != s && !(l >= kNumLetters && s == 1)) {
          // The second half is TensorFlow's wording, which tfjs matches.
          return absl::InvalidArgumentError(absl::StrCat(
              "Einsum: a label has sizes ", size[l], " and ", s, " (input ", i, ", dim ", d, "): expected dimension ",
              size[l], " at axis ", d, " of the input shaped ", t.shape().DebugString(), " but got dimension ", s));
        }
      }
    }
    std::vector<int> out_labels = expand(eq_.output, num_ellipsis);
    DimVector out_dims;
    for (int l : out_labels) out_dims.push_back(size[l]);
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));
    T* yd = y->data<T>();

    for (int i = 0; i < num; ++i) {
      Operand<A>& op = ops[i];
      const Tensor& t = ctx->input(i);
      if constexpr (std::is_same_v<T, A>) {
        op.data = t.data<T>();
      } else {
        std::vector<A> v(t.NumElements());
        for (int64_t j = 0; j < t.NumElements(); ++j) v[j] = static_cast<A>(t.data<T>()[j]);
        op.Own(std::move(v));
      }
      TakeDiagonals(&op);
      // A broadcast dim of size 1 reads as if the label were absent.
      for (size_t d = 0; d < op.labels.size();) {
        if (op.dims[d] == 1 && size[op.labels[d]] != 1) {
          op.labels.erase(op.labels.begin() + d);
          op.dims.erase(op.dims.begin() + d);
        } else {
          ++d;
        }
      }
    }
    // Labels needed after operand i: the output's and those of operands after i.
    auto needed_after = [&](int i) {
      std::vector<int> needed = out_labels;
      for (int j = i + 1; j < num; ++j) needed.insert(needed.end(), ops[j].labels.begin(), ops[j].labels.end());
      return needed;
    };
    Operand<A> result = std::move(ops[0]);
    if (num == 1) {
      SumOut(&result, [&](int l) { return Contains(out_labels, l); });
    } else {
      const std::vector<int> needed0 = needed_after(0);
      SumOut(&result, [&](int l) { return Contains(needed0, l); });
    }
    for (int i = 1; i < num; ++i) {
      // What operand i alone uses is summed before the product.
      const std::vector<int> needed = needed_after(i);
      SumOut(&ops[i], [&](int l) { return Contains(needed, l) || Contains(result.labels, l); });
      result = Contract(std::move(result), std::move(ops[i]), needed, ctx->intra_op_threads());
    }
    // Output labels every operand broadcast away are size 1; put the rest in output order.
    std::vector<int> order;
    for (int l : out_labels) {
      if (Contains(result.labels, l)) order.push_back(l);
    }
    Transpose(&result, order);
    for (int64_t j = 0; j < y->NumElements(); ++j) {
      if constexpr (std::is_same_v<T, half>) {
        yd[j] = T(static_cast<float>(result.data[j]));
      } else {
        yd[j] = static_cast<T>(result.data[j]);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool tensorflow_ = false;
  Equation eq_;
};

struct RegisterEinsum {
  RegisterEinsum() {
    using EinsumTypes = decltype(TypeList<half, float, double>{} + IntTypes{});
    RegisterCpuKernels("Onnx>Einsum", "T", EinsumTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<EinsumOp<typename decltype(t)::type>>();
    });
    // TensorFlow's Einsum (inputs: N * T, attrs equation and N) has the same inputs and attrs.
    using TfEinsumTypes = TypeList<half, float, double, int32_t, int64_t>;
    RegisterCpuKernels("Einsum", "T", TfEinsumTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<EinsumOp<typename decltype(t)::type>>(/*tensorflow=*/true);
    });
  }
} register_einsum;

}  // namespace
}  // namespace sluice
