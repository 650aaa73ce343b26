// Sequences and optionals of tensors (ONNX's sequence and optional values), held as scalar
// DT_VARIANT tensors the way TensorFlow holds tensor lists: ops pass them along like any
// tensor, and the sequence ops read and make them.
//
//   Tensor seq = MakeSequence(DT_FLOAT, {a, b});              // a scalar DT_VARIANT tensor
//   SL_ASSIGN_OR_RETURN(const TensorSequence* s, GetSequence(seq, "input_sequence"));
//   const Tensor& first = s->elements()[0];
//   Tensor none = MakeOptional(std::nullopt);
#ifndef SLUICE_FRAMEWORK_TENSOR_SEQUENCE_H_
#define SLUICE_FRAMEWORK_TENSOR_SEQUENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace sluice {

// An ordered list of tensors of one dtype (DT_VARIANT for a sequence of sequences); shapes
// may differ. Immutable once made.
class TensorSequence final : public VariantValue {
 public:
  TensorSequence(DataType element_dtype, std::vector<Tensor> elements)
      : element_dtype_(element_dtype), elements_(std::move(elements)) {}

  DataType element_dtype() const { return element_dtype_; }
  const std::vector<Tensor>& elements() const { return elements_; }
  int64_t size() const { return static_cast<int64_t>(elements_.size()); }
  std::string DebugString() const override;

 private:
  DataType element_dtype_;
  std::vector<Tensor> elements_;
};

// A tensor (or a sequence, as a DT_VARIANT tensor), or nothing. Immutable once made.
class TensorOptional final : public VariantValue {
 public:
  explicit TensorOptional(std::optional<Tensor> value) : value_(std::move(value)) {}

  bool has_value() const { return value_.has_value(); }
  const Tensor& value() const { return *value_; }
  std::string DebugString() const override;

 private:
  std::optional<Tensor> value_;
};

// Scalar DT_VARIANT tensors holding a new sequence or optional.
Tensor MakeSequence(DataType element_dtype, std::vector<Tensor> elements);
Tensor MakeOptional(std::optional<Tensor> value);

// The sequence or optional a tensor holds; INVALID_ARGUMENT naming `what` when it holds
// something else. The pointer lives as long as `t` (or any tensor sharing its buffer).
absl::StatusOr<const TensorSequence*> GetSequence(const Tensor& t, absl::string_view what);
absl::StatusOr<const TensorOptional*> GetOptional(const Tensor& t, absl::string_view what);

// DT_VARIANT elements in TensorProto.variant_val, so that sequences and optionals travel
// between tasks and through TensorProto files: a VariantTensorDataProto per element, named
// kSequenceTypeName (metadata: the element dtype's name; tensors: the elements) or
// kOptionalTypeName (tensors: the value, if there is one); an empty element has no name.
inline constexpr char kSequenceTypeName[] = "sluice.TensorSequence";
inline constexpr char kOptionalTypeName[] = "sluice.TensorOptional";
// Appends `t`'s elements to proto->variant_val (dtype and shape are the caller's).
void VariantToProto(const Tensor& t, TensorProto* proto);
// A DT_VARIANT tensor of `shape` from proto.variant_val; errors name what is inconsistent.
absl::StatusOr<Tensor> VariantFromProto(const TensorProto& proto, const TensorShape& shape);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_TENSOR_SEQUENCE_H_
