#include "frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "framework/bool_bytes.h"
#include "framework/checked_size.h"
#include "framework/file_util.h"
#include "framework/status.h"

namespace sluice {
namespace {

struct TypePair {
  int onnx;
  DataType dt;
};

// ONNX TensorProto.DataType numbers.
constexpr TypePair kTypes[] = {
    {1, DT_FLOAT},  {2, DT_UINT8},      {3, DT_INT8},       {4, DT_UINT16},  {5, DT_INT16},
    {6, DT_INT32},  {7, DT_INT64},      {8, DT_STRING},     {9, DT_BOOL},    {10, DT_HALF},
    {11, DT_DOUBLE}, {12, DT_UINT32},   {13, DT_UINT64},    {14, DT_COMPLEX64},
    {15, DT_COMPLEX128}, {16, DT_BFLOAT16}, {17, DT_FLOAT8_E4M3FN}, {18, DT_FLOAT8_E4M3FNUZ},
    {19, DT_FLOAT8_E5M2}, {20, DT_FLOAT8_E5M2FNUZ}, {21, DT_UINT4}, {22, DT_INT4},
};

bool IsPacked4Bit(DataType dt) { return dt == DT_INT4 || dt == DT_UINT4; }

// ONNX packs INT4 and UINT4 two to a byte, the first element in the low nibble; an odd
// count leaves the last byte's high nibble unused.
uint64_t PackedBytes(int64_t elements) { return static_cast<uint64_t>(elements) / 2 + elements % 2; }

template <typename T>
void Unpack4Bit(absl::Span<T> out, const uint8_t* packed) {
  for (size_t i = 0; i < out.size(); ++i) {
    int nibble = (packed[i / 2] >> (i % 2 == 0 ? 0 : 4)) & 0xf;
    if constexpr (std::is_same_v<T, int4>) nibble = nibble >= 8 ? nibble - 16 : nibble;
    out[i] = T(nibble);
  }
}

template <typename T>
std::string Pack4Bit(absl::Span<const T> in) {
  std::string packed(PackedBytes(in.size()), '\0');
  for (size_t i = 0; i < in.size(); ++i) {
    const uint8_t nibble = static_cast<uint8_t>(static_cast<int>(in[i]) & 0xf);
    packed[i / 2] = static_cast<char>(static_cast<uint8_t>(packed[i / 2]) | (i % 2 == 0 ? nibble : nibble << 4));
  }
  return packed;
}

template <typename T>
absl::Status FillFromField(const onnx::TensorProto& p, absl::Span<T> out) {
  auto mismatch = [&](int have) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", p.name(), "' has ", have,
                                                   " values for ", out.size(), " elements"));
  };
  if constexpr (std::is_same_v<T, float>) {
    if (p.float_data_size() != static_cast<int>(out.size())) return mismatch(p.float_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = p.float_data(i);
  } else if constexpr (std::is_same_v<T, double>) {
    if (p.double_data_size() != static_cast<int>(out.size())) return mismatch(p.double_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = p.double_data(i);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (p.int64_data_size() != static_cast<int>(out.size())) return mismatch(p.int64_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = p.int64_data(i);
  } else if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>) {
    if (p.uint64_data_size() != static_cast<int>(out.size())) return mismatch(p.uint64_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(p.uint64_data(i));
  } else if constexpr (std::is_same_v<T, tstring>) {
    if (p.string_data_size() != static_cast<int>(out.size())) return mismatch(p.string_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = p.string_data(i);
  } else if constexpr (std::is_same_v<T, complex64>) {
    if (p.float_data_size() != 2 * static_cast<int>(out.size())) return mismatch(p.float_data_size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = T(p.float_data(2 * i), p.float_data(2 * i + 1));
  } else if constexpr (std::is_same_v<T, complex128>) {
    if (p.double_data_size() != 2 * static_cast<int>(out.size())) return mismatch(p.double_data_size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = T(p.double_data(2 * i), p.double_data(2 * i + 1));
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    if (p.int32_data_size() != static_cast<int>(out.size())) return mismatch(p.int32_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = T::FromBits(static_cast<uint16_t>(p.int32_data(i)));
  } else if constexpr (kIsFloat8<T>) {
    if (p.int32_data_size() != static_cast<int>(out.size())) return mismatch(p.int32_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = T::FromBits(static_cast<uint8_t>(p.int32_data(i)));
  } else if constexpr (kIsInt4<T>) {  // One packed byte (two elements) per int32_data entry.
    if (static_cast<uint64_t>(p.int32_data_size()) != PackedBytes(out.size())) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", p.name(), "' has ", p.int32_data_size(),
                                                     " int32_data entries (two 4-bit values each) for ",
                                                     out.size(), " elements; ", PackedBytes(out.size()),
                                                     " are needed"));
    }
    std::vector<uint8_t> packed(p.int32_data().begin(), p.int32_data().end());
    Unpack4Bit(out, packed.data());
  } else {  // int32, int16, int8, uint16, uint8, bool live in int32_data.
    if (p.int32_data_size() != static_cast<int>(out.size())) return mismatch(p.int32_data_size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(p.int32_data(i));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DataType> DataTypeFromOnnx(int onnx_type) {
  for (const auto& t : kTypes) {
    if (t.onnx == onnx_type) return t.dt;
  }
  if (onnx_type != onnx::TensorProto::UNDEFINED && onnx::TensorProto_DataType_IsValid(onnx_type)) {
    // A type ONNX has and Sluice does not hold (none as of IR 10; kept for newer ones).
    return absl::UnimplementedError(absl::StrCat(
        "ONNX element type ", onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(onnx_type)),
        " (", onnx_type, ") has no Sluice dtype yet"));
  }
  return absl::InvalidArgumentError(absl::StrCat("ONNX element type ", onnx_type,
                                                 " is not an ONNX TensorProto.DataType"));
}

absl::StatusOr<int> DataTypeToOnnx(DataType dt) {
  for (const auto& t : kTypes) {
    if (t.dt == dt) return t.onnx;
  }
  return absl::UnimplementedError(absl::StrCat(DataTypeString(dt), " has no ONNX element type"));
}

absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& p) {
  auto dt = DataTypeFromOnnx(p.data_type());
  SL_RETURN_IF_ERROR(dt.status(), "tensor '", p.name(), "'");
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", p.name(), "' keeps its data in an external file"));
  }
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  auto shape = TensorShape::FromDims(dims);
  SL_RETURN_IF_ERROR(shape.status(), "tensor '", p.name(), "'");
  // The size is checked before anything is allocated: a few bytes of model must not claim a
  // buffer of terabytes.
  SL_ASSIGN_OR_RETURN(uint64_t bytes, TensorBytes(*dt, shape->num_elements(), absl::StrCat("tensor '", p.name(), "'")));
  if (IsPacked4Bit(*dt)) bytes = PackedBytes(shape->num_elements());
  if (p.has_raw_data() && *dt != DT_STRING && p.raw_data().size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", p.name(), "' of ", DataTypeString(*dt), " ", shape->DebugString(), " needs ",
        bytes, " bytes of raw_data but has ", p.raw_data().size()));
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dt, *shape), "tensor '", p.name(), "'");
  if (p.has_raw_data() && IsPacked4Bit(*dt)) {
    const auto* packed = reinterpret_cast<const uint8_t*>(p.raw_data().data());
    if (*dt == DT_INT4) Unpack4Bit(t.flat<int4>(), packed);
    if (*dt == DT_UINT4) Unpack4Bit(t.flat<uint4>(), packed);
    return t;
  }
  if (p.has_raw_data() && *dt != DT_STRING) {
    if (t.AllocatedBytes() > 0) std::memcpy(t.raw_data(), p.raw_data().data(), t.AllocatedBytes());
    if (*dt == DT_BOOL) CanonicalizeBoolBytes(t.raw_data(), t.AllocatedBytes());
    return t;
  }
  absl::Status status;
  VisitDataType(*dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    status = FillFromField<T>(p, t.flat<T>());
  });
  if (!status.ok()) return status;
  return t;
}

absl::Status TensorToOnnx(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  SL_ASSIGN_OR_RETURN(int type, DataTypeToOnnx(t.dtype()));
  p->Clear();
  p->set_name(name);
  p->set_data_type(type);
  for (int64_t d : t.shape().dim_sizes()) p->add_dims(d);
  if (t.dtype() == DT_STRING) {
    for (const auto& s : t.flat<tstring>()) p->add_string_data(s);
  } else if (t.dtype() == DT_INT4) {
    p->set_raw_data(Pack4Bit<int4>(t.flat<int4>()));
  } else if (t.dtype() == DT_UINT4) {
    p->set_raw_data(Pack4Bit<uint4>(t.flat<uint4>()));
  } else {
    p->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.AllocatedBytes()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ReadOnnxTensorFile(const std::string& path, std::string* name) {
  SL_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path, "tensor file"));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized ONNX TensorProto"));
  }
  if (name != nullptr) *name = proto.name();
  auto t = TensorFromOnnx(proto);
  SL_RETURN_IF_ERROR(t.status(), path);
  return t;
}

absl::Status WriteOnnxTensorFile(const std::string& path, const Tensor& tensor,
                                 const std::string& name) {
  onnx::TensorProto proto;
  SL_RETURN_IF_ERROR(TensorToOnnx(tensor, name, &proto));
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out)) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

namespace {

// The element dtype of a sequence of `elem` (DT_VARIANT for nested sequences and optionals);
// DT_INVALID when the type does not say.
DataType ElementDtype(const onnx::TypeProto* elem) {
  if (elem == nullptr) return DT_INVALID;
  if (elem->has_tensor_type()) {
    auto dt = DataTypeFromOnnx(elem->tensor_type().elem_type());
    return dt.ok() ? *dt : DT_INVALID;
  }
  if (elem->has_sequence_type() || elem->has_optional_type()) return DT_VARIANT;
  return DT_INVALID;
}

absl::StatusOr<Tensor> ValueFromOnnx(int elem_type, const onnx::TensorProto& tensor,
                                     const onnx::SequenceProto& sequence, const onnx::OptionalProto& optional,
                                     const onnx::TypeProto* type) {
  switch (elem_type) {
    case onnx::SequenceProto::TENSOR: return TensorFromOnnx(tensor);
    case onnx::SequenceProto::SEQUENCE: return SequenceFromOnnx(sequence, type);
    case onnx::SequenceProto::OPTIONAL: return OptionalFromOnnx(optional, type);
    default:
      return absl::UnimplementedError(absl::StrCat("values of ONNX kind ", elem_type,
                                                   " (sparse tensors, maps) are not supported"));
  }
}

}  // namespace

absl::StatusOr<Tensor> SequenceFromOnnx(const onnx::SequenceProto& p, const onnx::TypeProto* type) {
  const onnx::TypeProto* elem_type =
      type != nullptr && type->has_sequence_type() ? &type->sequence_type().elem_type() : nullptr;
  DataType dt = ElementDtype(elem_type);
  std::vector<Tensor> elements;
  auto add = [&](absl::StatusOr<Tensor> t) -> absl::Status {
    SL_RETURN_IF_ERROR(t.status(), "sequence '", p.name(), "' element ", elements.size());
    if (dt == DT_INVALID) dt = t->dtype();
    if (t->dtype() != dt) {
      return absl::InvalidArgumentError(absl::StrCat("sequence '", p.name(), "' mixes ", DataTypeString(dt),
                                                     " and ", DataTypeString(t->dtype()), " elements"));
    }
    elements.push_back(*std::move(t));
    return absl::OkStatus();
  };
  switch (p.elem_type()) {
    case onnx::SequenceProto::TENSOR:
      for (const auto& t : p.tensor_values()) SL_RETURN_IF_ERROR(add(TensorFromOnnx(t)));
      break;
    case onnx::SequenceProto::SEQUENCE:
      for (const auto& s : p.sequence_values()) SL_RETURN_IF_ERROR(add(SequenceFromOnnx(s, elem_type)));
      break;
    case onnx::SequenceProto::OPTIONAL:
      for (const auto& o : p.optional_values()) SL_RETURN_IF_ERROR(add(OptionalFromOnnx(o, elem_type)));
      break;
    case onnx::SequenceProto::UNDEFINED:
      break;  // An empty sequence of a type that only `type` tells.
    default:
      return absl::UnimplementedError(absl::StrCat("sequence '", p.name(), "' holds ONNX values of kind ",
                                                   p.elem_type(), " (sparse tensors, maps), which Sluice lacks"));
  }
  if (dt == DT_INVALID) {
    return absl::InvalidArgumentError(absl::StrCat("sequence '", p.name(), "' is empty and its element type unknown"));
  }
  return MakeSequence(dt, std::move(elements));
}

absl::StatusOr<Tensor> OptionalFromOnnx(const onnx::OptionalProto& p, const onnx::TypeProto* type) {
  const onnx::TypeProto* elem_type =
      type != nullptr && type->has_optional_type() ? &type->optional_type().elem_type() : nullptr;
  switch (p.elem_type()) {
    case onnx::OptionalProto::UNDEFINED:
      return MakeOptional(std::nullopt);
    case onnx::OptionalProto::TENSOR:
      if (!p.has_tensor_value()) return MakeOptional(std::nullopt);
      break;
    case onnx::OptionalProto::SEQUENCE:
      if (!p.has_sequence_value()) return MakeOptional(std::nullopt);
      break;
    case onnx::OptionalProto::OPTIONAL:
      if (!p.has_optional_value()) return MakeOptional(std::nullopt);
      break;
    default:
      break;
  }
  auto value = ValueFromOnnx(p.elem_type(), p.tensor_value(), p.sequence_value(), p.optional_value(), elem_type);
  SL_RETURN_IF_ERROR(value.status(), "optional '", p.name(), "'");
  return MakeOptional(*std::move(value));
}

absl::Status SequenceToOnnx(const Tensor& t, const std::string& name, onnx::SequenceProto* p) {
  SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(t, name));
  p->Clear();
  p->set_name(name);
  for (const Tensor& e : seq->elements()) {
    if (e.dtype() != DT_VARIANT) {
      p->set_elem_type(onnx::SequenceProto::TENSOR);
      SL_RETURN_IF_ERROR(TensorToOnnx(e, "", p->add_tensor_values()));
    } else if (GetSequence(e, name).ok()) {
      p->set_elem_type(onnx::SequenceProto::SEQUENCE);
      SL_RETURN_IF_ERROR(SequenceToOnnx(e, "", p->add_sequence_values()));
    } else {
      p->set_elem_type(onnx::SequenceProto::OPTIONAL);
      SL_RETURN_IF_ERROR(OptionalToOnnx(e, "", p->add_optional_values()));
    }
  }
  if (seq->elements().empty() && seq->element_dtype() != DT_VARIANT) p->set_elem_type(onnx::SequenceProto::TENSOR);
  return absl::OkStatus();
}

absl::Status OptionalToOnnx(const Tensor& t, const std::string& name, onnx::OptionalProto* p) {
  SL_ASSIGN_OR_RETURN(const TensorOptional* opt, GetOptional(t, name));
  p->Clear();
  p->set_name(name);
  if (!opt->has_value()) return absl::OkStatus();
  const Tensor& v = opt->value();
  if (v.dtype() != DT_VARIANT) {
    p->set_elem_type(onnx::OptionalProto::TENSOR);
    return TensorToOnnx(v, "", p->mutable_tensor_value());
  }
  if (GetSequence(v, name).ok()) {
    p->set_elem_type(onnx::OptionalProto::SEQUENCE);
    return SequenceToOnnx(v, "", p->mutable_sequence_value());
  }
  p->set_elem_type(onnx::OptionalProto::OPTIONAL);
  return OptionalToOnnx(v, "", p->mutable_optional_value());
}

absl::StatusOr<Tensor> ReadOnnxValueFile(const std::string& path, const onnx::TypeProto& type, std::string* name) {
  if (!type.has_sequence_type() && !type.has_optional_type()) return ReadOnnxTensorFile(path, name);
  SL_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path, "value file"));
  absl::StatusOr<Tensor> t;
  if (type.has_sequence_type()) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized ONNX SequenceProto"));
    }
    if (name != nullptr) *name = proto.name();
    t = SequenceFromOnnx(proto, &type);
  } else {
    onnx::OptionalProto proto;
    if (!proto.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized ONNX OptionalProto"));
    }
    if (name != nullptr) *name = proto.name();
    t = OptionalFromOnnx(proto, &type);
  }
  SL_RETURN_IF_ERROR(t.status(), path);
  return t;
}

absl::Status WriteOnnxValueFile(const std::string& path, const Tensor& value, const std::string& name) {
  if (value.dtype() != DT_VARIANT) return WriteOnnxTensorFile(path, value, name);
  std::string bytes;
  onnx::SequenceProto seq;
  onnx::OptionalProto opt;
  if (SequenceToOnnx(value, name, &seq).ok()) {
    bytes = seq.SerializeAsString();
  } else {
    SL_RETURN_IF_ERROR(OptionalToOnnx(value, name, &opt));
    bytes = opt.SerializeAsString();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), bytes.size())) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace sluice
