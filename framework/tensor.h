// Tensor: a dtype, a shape and a reference-counted, 64-byte-aligned buffer. Copies share the
// buffer; DeepCopy makes a new one.
//
//   Tensor t(DT_FLOAT, TensorShape({2, 2}));
//   auto v = t.flat<float>();  v[0] = 1.0f;
//   TensorProto p;  t.AsProtoTensorContent(&p);
//   SL_ASSIGN_OR_RETURN(Tensor back, Tensor::FromProto(p));
#ifndef SLUICE_FRAMEWORK_TENSOR_H_
#define SLUICE_FRAMEWORK_TENSOR_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/memory_budget.h"
#include "framework/tensor_shape.h"
#include "framework/types.h"
#include "proto/tensor.pb.h"

namespace sluice {

inline constexpr size_t kTensorAlignment = 64;

// Owns (or borrows, with a release callback) the bytes behind one or more Tensors.
// Thread-safe to share; the bytes themselves are not synchronized.
class TensorBuffer {
 public:
  using Release = std::function<void(void* data, size_t bytes)>;

  // Aligned storage for `num_elements` of `dt`; DT_STRING and DT_VARIANT elements are
  // constructed empty.
  // Numeric contents are left uninitialized. Returns null when memory runs out or the size
  // overflows or exceeds kMaxTensorBytes (checked_size.h). Charged to the current memory
  // budget (memory_budget.h), if any, even past its limit.
  static std::shared_ptr<TensorBuffer> Allocate(DataType dt, int64_t num_elements);
  // Whether freed numeric buffers of 64 KiB and more are kept and handed out again by size
  // (false under AddressSanitizer, which must see them freed).
  static bool ReusesFreedBuffers();
  // Borrows caller memory; `release` runs when the last Tensor referring to it goes away.
  static std::shared_ptr<TensorBuffer> Wrap(void* data, size_t bytes, Release release);
  // `bytes` of `parent`'s data from byte `offset` (at an address aligned to kTensorAlignment), sharing
  // them and keeping `parent` alive: a split without a copy. Null when the range does not fit
  // or is misaligned. Never written in place: Tensor::RefCountIsOne is false for a view.
  static std::shared_ptr<TensorBuffer> View(std::shared_ptr<TensorBuffer> parent, size_t offset, size_t bytes);

  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  friend class Tensor;
  TensorBuffer() = default;
  static std::shared_ptr<TensorBuffer> AllocateUncharged(DataType dt, int64_t num_elements);

  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t cached_bytes_ = 0;   // Nonzero: data_ came from (and goes back to) the buffer cache.
  int64_t num_strings_ = 0;   // DT_STRING buffers destroy their elements,
  int64_t num_variants_ = 0;  // and so do DT_VARIANT ones.
  bool view_ = false;         // Shares another buffer's bytes (View).
  Release release_;
  std::shared_ptr<MemoryBudget> budget_;  // What the bytes are charged to; null: nothing.
};

// The largest tensor a compact TensorProto from the network may expand to (Tensor::FromWireProto).
inline constexpr uint64_t kMaxCompactWireTensorBytes = uint64_t{256} << 20;

class Tensor {
 public:
  Tensor() = default;  // Uninitialized: dtype DT_INVALID, no buffer.
  // Allocates; on allocation failure the tensor is left uninitialized (see Allocate).
  Tensor(DataType dt, const TensorShape& shape);
  // Allocates, or INVALID_ARGUMENT (negative dims, an element count that overflows) or
  // RESOURCE_EXHAUSTED (over kMaxTensorBytes, over the current memory budget's limit, or out
  // of memory): for sizes from user input.
  static absl::StatusOr<Tensor> Allocate(DataType dt, const TensorShape& shape);
  Tensor(DataType dt, const TensorShape& shape, std::shared_ptr<TensorBuffer> buffer);

  // Scalar helpers, mostly for tests and constants.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    t.flat<T>()[0] = value;
    return t;
  }
  template <typename T>
  static Tensor FromVector(absl::Span<const T> values, const TensorShape& shape) {
    Tensor t(DataTypeToEnum<T>::value, shape);
    auto f = t.flat<T>();
    for (size_t i = 0; i < f.size() && i < values.size(); ++i) f[i] = values[i];
    return t;
  }

  // Parses a TensorProto: tensor_content, or a typed *_val field where fewer values than
  // elements repeat the last one. Errors name what is inconsistent.
  static absl::StatusOr<Tensor> FromProto(const TensorProto& proto);
  // FromProto for tensors that came over the network: tensor_content of the exact size, one
  // value per element, or TensorFlow's compact form (fewer values, the last one repeated:
  // "one value fills the shape") for tensors of at most kMaxCompactWireTensorBytes, so that a
  // message of a few bytes cannot claim a shape of terabytes.
  static absl::StatusOr<Tensor> FromWireProto(const TensorProto& proto);
  // Writes raw bytes into tensor_content (strings go to string_val).
  void AsProtoTensorContent(TensorProto* proto) const;
  // Writes the typed *_val field.
  void AsProtoField(TensorProto* proto) const;

  bool IsInitialized() const { return dtype_ != DT_INVALID && (buf_ != nullptr || NumElements() == 0); }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return num_elements_; }
  size_t TotalBytes() const;  // For strings, the sum of string sizes.
  size_t AllocatedBytes() const { return num_elements_ * DataTypeSize(dtype_); }

  void* raw_data() const { return buf_ ? buf_->data() : nullptr; }
  const std::shared_ptr<TensorBuffer>& buffer() const { return buf_; }
  // True when no other Tensor shares this buffer (kernels may then reuse it in place).
  // Never for a view (TensorBuffer::View): its bytes are another buffer's too.
  bool RefCountIsOne() const { return buf_ != nullptr && !buf_->view_ && buf_.use_count() == 1; }

  template <typename T>
  T* data() const { return static_cast<T*>(raw_data()); }
  template <typename T>
  absl::Span<T> flat() const { return absl::Span<T>(data<T>(), num_elements_); }
  template <typename T>
  T& scalar() const { return *data<T>(); }

  // Shares the buffer under another shape with the same element count.
  absl::StatusOr<Tensor> Reshaped(const TensorShape& shape) const;
  Tensor DeepCopy() const;

  // "Tensor<float [2,2]: 1 2 3 4>", at most `max_entries` values.
  std::string DebugString(int max_entries = 8) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<TensorBuffer> buf_;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_TENSOR_H_
