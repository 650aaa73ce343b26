#include "framework/tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/bool_bytes.h"
#include "framework/checked_size.h"
#include "framework/memory_budget.h"
#include "framework/status.h"
#include "framework/tensor_sequence.h"

namespace sluice {
namespace {

// Buffers at least this big are aligned to, and advised onto, huge pages.
constexpr size_t kHugePageBytes = size_t{2} << 20;

// Freed numeric buffers of 64 KiB and more, kept by exact (rounded) size and handed out again
// last-freed first. A step frees each intermediate at its last use and the next step asks for
// the same sizes, so it gets back memory that is mapped, faulted in and, being the most
// recently used, still in cache; glibc's bins handed out the oldest free chunk instead, cold
// (a Concat's 364 KB output wrote at a quarter of the speed of a reused buffer). At most
// At most CacheLimit() bytes are kept idle; past that, buffers are freed.
// Off under AddressSanitizer, which must see each buffer freed to catch later uses of it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheBuffers = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCacheBuffers = false;
#else
constexpr bool kCacheBuffers = true;
#endif
#else
constexpr bool kCacheBuffers = true;
#endif
constexpr size_t kCacheMinBytes = size_t{64} << 10;
// 2 GiB, or an eighth of the machine's memory where that is less. A training step frees most
// of what it allocated at its end and asks for the same sizes again: at 512 MiB, EfficientNet-B0
// at batch 8 faulted in ~770 fresh (mostly huge) pages per step, 5-10% of its step time; at
// 2 GiB none, and its peak RSS stayed the same.
size_t CacheLimit() {
  static const size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t most = size_t{2} << 30;
    if (pages <= 0 || page <= 0) return most;
    return std::min(most, static_cast<size_t>(pages) / 8 * static_cast<size_t>(page));
  }();
  return limit;
}

class BufferCache {
 public:
  static BufferCache& Get() {
    static BufferCache* cache = new BufferCache();  // Never destroyed: buffers outlive statics.
    return *cache;
  }
  void* Take(size_t bytes) {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(bytes);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* data = it->second.back();
    it->second.pop_back();
    idle_bytes_ -= bytes;
    return data;
  }
  // False when the cache is full: the caller frees `data`.
  bool Give(void* data, size_t bytes) {
    absl::MutexLock lock(&mu_);
    if (idle_bytes_ + bytes > CacheLimit()) return false;
    free_[bytes].push_back(data);
    idle_bytes_ += bytes;
    return true;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  size_t idle_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

bool TensorBuffer::ReusesFreedBuffers() { return kCacheBuffers; }

std::shared_ptr<TensorBuffer> TensorBuffer::Allocate(DataType dt, int64_t num_elements) {
  std::shared_ptr<TensorBuffer> buf = AllocateUncharged(dt, num_elements);
  // Charged even past the limit: this form cannot fail for the budget, so the executor checks
  // the budget after the kernel that allocated (Tensor::Allocate fails at once instead).
  const std::shared_ptr<MemoryBudget>& budget = MemoryBudget::Current();
  if (buf != nullptr && budget != nullptr && buf->bytes_ > 0) {
    budget->Charge(buf->bytes_);
    buf->budget_ = budget;
  }
  return buf;
}

std::shared_ptr<TensorBuffer> TensorBuffer::AllocateUncharged(DataType dt, int64_t num_elements) {
  // Checked: a count times the element size that wraps would give a small buffer that
  // kernels then write past.
  absl::StatusOr<uint64_t> checked = TensorBytes(dt, num_elements);
  if (!checked.ok()) return nullptr;
  const size_t bytes = static_cast<size_t>(*checked);
  auto buf = std::shared_ptr<TensorBuffer>(new TensorBuffer());
  buf->bytes_ = bytes;
  const bool plain = dt != DT_STRING && dt != DT_VARIANT;
  if (plain && bytes >= kCacheMinBytes) {  // Big numeric buffers: through the cache.
    const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kTensorAlignment;
    const size_t rounded = (bytes + align - 1) / align * align;
    buf->data_ = kCacheBuffers ? BufferCache::Get().Take(rounded) : nullptr;
    if (buf->data_ == nullptr) {
      buf->data_ = std::aligned_alloc(align, rounded);
      if (buf->data_ == nullptr) return nullptr;
      // Huge pages: first writes to fresh memory fault one page at a time, and faults
      // dominate the cost of filling a big buffer (a fresh 64 MiB memcpy ran at a fifth of a
      // warm one). Backed by 2 MiB pages where the kernel allows (transparent huge pages in
      // "madvise" mode), there are 512 times fewer; the rounding wastes under one huge page.
      if (align == kHugePageBytes) madvise(buf->data_, rounded, MADV_HUGEPAGE);  // Advice only.
    }
    if (kCacheBuffers) buf->cached_bytes_ = rounded;
  } else if (bytes > 0) {
    size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    buf->data_ = std::aligned_alloc(kTensorAlignment, rounded);
    if (buf->data_ == nullptr) return nullptr;
  }
  if (dt == DT_STRING) {
    auto* s = static_cast<tstring*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (s + i) tstring();
    buf->num_strings_ = num_elements;
  } else if (dt == DT_VARIANT) {
    auto* v = static_cast<Variant*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (v + i) Variant();
    buf->num_variants_ = num_elements;
  }
  return buf;
}

std::shared_ptr<TensorBuffer> TensorBuffer::Wrap(void* data, size_t bytes, Release release) {
  auto buf = std::shared_ptr<TensorBuffer>(new TensorBuffer());
  buf->data_ = data;
  buf->bytes_ = bytes;
  buf->release_ = std::move(release);
  return buf;
}

std::shared_ptr<TensorBuffer> TensorBuffer::View(std::shared_ptr<TensorBuffer> parent, size_t offset, size_t bytes) {
  if (parent == nullptr || (reinterpret_cast<uintptr_t>(parent->data_) + offset) % kTensorAlignment != 0 ||
      offset > parent->bytes_ ||
      bytes > parent->bytes_ - offset || parent->num_strings_ > 0 || parent->num_variants_ > 0) {
    return nullptr;
  }
  void* data = static_cast<char*>(parent->data_) + offset;
  auto buf = Wrap(data, bytes, [parent = std::move(parent)](void*, size_t) {});
  buf->view_ = true;
  return buf;
}

TensorBuffer::~TensorBuffer() {
  if (budget_ != nullptr) budget_->Release(bytes_);
  if (release_) {
    release_(data_, bytes_);
    return;
  }
  auto* s = static_cast<tstring*>(data_);
  for (int64_t i = 0; i < num_strings_; ++i) s[i].~tstring();
  auto* v = static_cast<Variant*>(data_);
  for (int64_t i = 0; i < num_variants_; ++i) v[i].~Variant();
  if (cached_bytes_ > 0 && BufferCache::Get().Give(data_, cached_bytes_)) return;
  std::free(data_);
}

Tensor::Tensor(DataType dt, const TensorShape& shape)
    : dtype_(dt), shape_(shape), num_elements_(shape.num_elements()) {
  buf_ = TensorBuffer::Allocate(dt, num_elements_);
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dt, const TensorShape& shape) {
  // Names the shape when it is too big to ever allocate; the buffer then reports plain OOM.
  SL_RETURN_IF_ERROR(ShapeElements(shape.dim_sizes()).status(), "allocating a ",
                     DataTypeString(dt), " tensor");
  SL_RETURN_IF_ERROR(TensorBytes(dt, shape.num_elements(), absl::StrCat("shape ", shape.DebugString()))
                         .status());
  const std::shared_ptr<MemoryBudget>& budget = MemoryBudget::Current();
  const uint64_t bytes = static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dt);  // Checked above.
  if (budget != nullptr && bytes > 0 && !budget->TryCharge(bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a ", DataTypeString(dt), " tensor of shape ", shape.DebugString(), " needs ", bytes,
        " bytes, over the session's memory limit of ", budget->limit(), " bytes (", budget->used(),
        " in use)"));
  }
  Tensor t(dt, shape, TensorBuffer::AllocateUncharged(dt, shape.num_elements()));
  if (t.buf_ == nullptr && t.num_elements_ > 0) {
    if (budget != nullptr) budget->Release(bytes);
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory allocating a ", DataTypeString(dt), " tensor of shape ", shape.DebugString()));
  }
  if (budget != nullptr && t.buf_ != nullptr && bytes > 0) t.buf_->budget_ = budget;
  return t;
}

Tensor::Tensor(DataType dt, const TensorShape& shape, std::shared_ptr<TensorBuffer> buffer)
    : dtype_(dt), shape_(shape), num_elements_(shape.num_elements()), buf_(std::move(buffer)) {}

size_t Tensor::TotalBytes() const {
  if (dtype_ != DT_STRING) return AllocatedBytes();
  size_t n = 0;
  for (const auto& s : flat<tstring>()) n += s.size();
  return n;
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (shape.num_elements() != num_elements_) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape a tensor of ", num_elements_,
                                                   " elements to shape ", shape.DebugString()));
  }
  return Tensor(dtype_, shape, buf_);
}

Tensor Tensor::DeepCopy() const {
  Tensor t(dtype_, shape_);
  if (dtype_ == DT_STRING) {
    auto src = flat<tstring>();
    auto dst = t.flat<tstring>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_VARIANT) {
    // Variant values are immutable: the copy shares them.
    auto src = flat<Variant>();
    auto dst = t.flat<Variant>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (AllocatedBytes() > 0) {
    std::memcpy(t.raw_data(), raw_data(), AllocatedBytes());
  }
  return t;
}

namespace {

// How each C++ element type is stored in TensorProto's typed fields.
template <typename T> struct ProtoField;

#define SL_PROTO_FIELD(T, FIELD, STORED)                                              \
  template <> struct ProtoField<T> {                                                  \
    static int Count(const TensorProto& p) { return p.FIELD##_size(); }               \
    static T Get(const TensorProto& p, int i) { return static_cast<T>(p.FIELD(i)); }  \
    static void Add(TensorProto* p, T v) { p->add_##FIELD(static_cast<STORED>(v)); } \
  }
SL_PROTO_FIELD(float, float_val, float);
SL_PROTO_FIELD(double, double_val, double);
SL_PROTO_FIELD(int32_t, int_val, int32_t);
SL_PROTO_FIELD(int16_t, int_val, int32_t);
SL_PROTO_FIELD(int8_t, int_val, int32_t);
SL_PROTO_FIELD(uint8_t, int_val, int32_t);
SL_PROTO_FIELD(uint16_t, int_val, int32_t);
SL_PROTO_FIELD(int64_t, int64_val, int64_t);
SL_PROTO_FIELD(uint32_t, uint32_val, uint32_t);
SL_PROTO_FIELD(uint64_t, uint64_val, uint64_t);
SL_PROTO_FIELD(bool, bool_val, bool);
SL_PROTO_FIELD(int4, int_val, int32_t);
SL_PROTO_FIELD(uint4, int_val, int32_t);
#undef SL_PROTO_FIELD

// float8_val: one byte of bits per value.
template <typename F8> struct Float8Field {
  static int Count(const TensorProto& p) { return static_cast<int>(p.float8_val().size()); }
  static F8 Get(const TensorProto& p, int i) { return F8::FromBits(static_cast<uint8_t>(p.float8_val()[i])); }
  static void Add(TensorProto* p, F8 v) { p->mutable_float8_val()->push_back(static_cast<char>(v.bits)); }
};
template <> struct ProtoField<float8_e5m2> : Float8Field<float8_e5m2> {};
template <> struct ProtoField<float8_e4m3fn> : Float8Field<float8_e4m3fn> {};
template <> struct ProtoField<float8_e4m3fnuz> : Float8Field<float8_e4m3fnuz> {};
template <> struct ProtoField<float8_e5m2fnuz> : Float8Field<float8_e5m2fnuz> {};

template <> struct ProtoField<tstring> {
  static int Count(const TensorProto& p) { return p.string_val_size(); }
  static tstring Get(const TensorProto& p, int i) { return p.string_val(i); }
  static void Add(TensorProto* p, const tstring& v) { p->add_string_val(v); }
};

template <typename H> struct HalfField {
  static int Count(const TensorProto& p) { return p.half_val_size(); }
  static H Get(const TensorProto& p, int i) { return H::FromBits(static_cast<uint16_t>(p.half_val(i))); }
  static void Add(TensorProto* p, H v) { p->add_half_val(v.bits); }
};
template <> struct ProtoField<half> : HalfField<half> {};
template <> struct ProtoField<bfloat16> : HalfField<bfloat16> {};

template <typename C, typename R> struct ComplexField {
  static int Count(const TensorProto& p) { return Values(p).size() / 2; }
  static C Get(const TensorProto& p, int i) { return C(Values(p)[2 * i], Values(p)[2 * i + 1]); }
  static const google::protobuf::RepeatedField<R>& Values(const TensorProto& p);
};
template <> const google::protobuf::RepeatedField<float>& ComplexField<complex64, float>::Values(
    const TensorProto& p) { return p.scomplex_val(); }
template <> const google::protobuf::RepeatedField<double>& ComplexField<complex128, double>::Values(
    const TensorProto& p) { return p.dcomplex_val(); }
template <> struct ProtoField<complex64> : ComplexField<complex64, float> {
  static void Add(TensorProto* p, complex64 v) { p->add_scomplex_val(v.real()); p->add_scomplex_val(v.imag()); }
};
template <> struct ProtoField<complex128> : ComplexField<complex128, double> {
  static void Add(TensorProto* p, complex128 v) { p->add_dcomplex_val(v.real()); p->add_dcomplex_val(v.imag()); }
};

template <typename T>
std::string ValueString(const T& v) {
  if constexpr (std::is_same_v<T, tstring>) {
    return absl::StrCat("\"", v.substr(0, 32), v.size() > 32 ? "..." : "", "\"");
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return absl::StrCat("(", v.real(), ",", v.imag(), ")");
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || kIsFloat8<T>) {
    return absl::StrCat(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || kIsInt4<T>) {
    return absl::StrCat(static_cast<int>(v));
  } else {
    return absl::StrCat(v);
  }
}

}  // namespace

absl::StatusOr<Tensor> Tensor::FromProto(const TensorProto& proto) {
  DataType dt = proto.dtype();
  if (!DataTypeIsSupported(dt) && dt != DT_VARIANT) {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorProto has unsupported dtype ", DataTypeString(dt)));
  }
  SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  if (dt == DT_VARIANT) return VariantFromProto(proto, shape);
  // Sizes are checked before anything is allocated.
  SL_ASSIGN_OR_RETURN(uint64_t bytes, TensorBytes(dt, shape.num_elements(),
                                                  absl::StrCat("TensorProto of shape ", shape.DebugString())));
  if (dt != DT_STRING && !proto.tensor_content().empty() && proto.tensor_content().size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto of ", DataTypeString(dt), " ", shape.DebugString(), " needs ", bytes,
        " bytes of tensor_content but has ", proto.tensor_content().size()));
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, shape));
  const int64_t n = t.NumElements();
  if (dt != DT_STRING && !proto.tensor_content().empty()) {
    std::memcpy(t.raw_data(), proto.tensor_content().data(), t.AllocatedBytes());
    if (dt == DT_BOOL) CanonicalizeBoolBytes(t.raw_data(), t.AllocatedBytes());
    return t;
  }
  absl::Status status;
  VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using F = ProtoField<T>;
    const int count = F::Count(proto);
    auto out = t.flat<T>();
    if (count > n) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "TensorProto of ", DataTypeString(dt), " ", shape.DebugString(), " has ", count,
          " values for ", n, " elements"));
      return;
    }
    for (int i = 0; i < count; ++i) out[i] = F::Get(proto, i);
    // One value (or a prefix) fills the shape: the rest repeats the last value, or zero.
    T fill = count > 0 ? F::Get(proto, count - 1) : T{};
    for (int64_t i = count; i < n; ++i) out[i] = fill;
  });
  if (!status.ok()) return status;
  return t;
}

absl::StatusOr<Tensor> Tensor::FromWireProto(const TensorProto& proto) {
  const DataType dt = proto.dtype();
  if (!DataTypeIsSupported(dt) && dt != DT_VARIANT) return FromProto(proto);  // Its error.
  SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  const int64_t n = shape.num_elements();
  if (dt != DT_STRING && !proto.tensor_content().empty()) {
    const uint64_t want = static_cast<uint64_t>(n) * DataTypeSize(dt);
    if (proto.tensor_content().size() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorProto of ", DataTypeString(dt), " ", shape.DebugString(), " needs ", want,
          " bytes of tensor_content but has ", proto.tensor_content().size()));
    }
    return FromProto(proto);
  }
  int64_t count = dt == DT_VARIANT ? proto.variant_val_size() : 0;
  VisitDataType(dt, [&](auto tag) { count = ProtoField<typename decltype(tag)::type>::Count(proto); });
  if (count == n) return FromProto(proto);
  // TensorFlow's compact form: the last value fills the rest, up to a bound.
  if (count >= 1 && count < n && dt != DT_VARIANT) {
    SL_ASSIGN_OR_RETURN(uint64_t bytes, TensorBytes(dt, n, "a compact TensorProto"));
    if (bytes <= kMaxCompactWireTensorBytes) return FromProto(proto);
    return absl::ResourceExhaustedError(absl::StrCat(
        "TensorProto of ", DataTypeString(dt), " ", shape.DebugString(), " carries ", count,
        " values for ", n, " elements; a compact tensor from the network may fill at most ",
        kMaxCompactWireTensorBytes >> 20, " MiB (send tensor_content instead)"));
  }
  return absl::InvalidArgumentError(absl::StrCat("TensorProto of ", DataTypeString(dt), " ",
                                                 shape.DebugString(), " carries ", count,
                                                 " values for ", n, " elements"));
}

void Tensor::AsProtoTensorContent(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  if (dtype_ == DT_VARIANT) {
    VariantToProto(*this, proto);
    return;
  }
  if (dtype_ == DT_STRING) {
    for (const auto& s : flat<tstring>()) proto->add_string_val(s);
    return;
  }
  if (AllocatedBytes() > 0) {
    proto->set_tensor_content(std::string(static_cast<const char*>(raw_data()), AllocatedBytes()));
  }
}

void Tensor::AsProtoField(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  if (dtype_ == DT_VARIANT) {
    VariantToProto(*this, proto);
    return;
  }
  VisitDataType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const auto& v : flat<T>()) ProtoField<T>::Add(proto, v);
  });
}

std::string Tensor::DebugString(int max_entries) const {
  std::string out = absl::StrCat("Tensor<", DataTypeString(dtype_), " ", shape_.DebugString());
  if (!IsInitialized()) return out + " uninitialized>";
  out += ":";
  if (dtype_ == DT_VARIANT) {
    auto v = flat<Variant>();
    for (int64_t i = 0; i < num_elements_ && i < max_entries; ++i) {
      absl::StrAppend(&out, " ", v[i] == nullptr ? "empty" : v[i]->DebugString());
    }
    if (num_elements_ > max_entries) out += " ...";
    return out + ">";
  }
  VisitDataType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto v = flat<T>();
    for (int64_t i = 0; i < num_elements_ && i < max_entries; ++i) {
      absl::StrAppend(&out, " ", ValueString(v[i]));
    }
    if (num_elements_ > max_entries) out += " ...";
  });
  return out + ">";
}

}  // namespace sluice
