#include "frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
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
    {15, DT_COMPLEX128}, {16, DT_BFLOAT16},
};

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
  return absl::UnimplementedError(absl::StrCat("ONNX element type ", onnx_type,
                                               " is not supported"));
}

absl::StatusOr<int> DataTypeToOnnx(DataType dt) {
  for (const auto& t : kTypes) {
    if (t.dt == dt) return t.onnx;
  }
  return absl::UnimplementedError(absl::StrCat(DataTypeString(dt), " has no ONNX element type"));
}

absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& p) {
  auto dt = DataTypeFromOnnx(p.data_type());
  if (!dt.ok()) return AddContext(dt.status(), absl::StrCat("tensor '", p.name(), "'"));
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", p.name(), "' keeps its data in an external file"));
  }
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  auto shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return AddContext(shape.status(), absl::StrCat("tensor '", p.name(), "'"));
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dt, *shape));
  if (p.has_raw_data() && *dt != DT_STRING) {
    if (p.raw_data().size() != t.AllocatedBytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", p.name(), "' of ", DataTypeString(*dt), " ", shape->DebugString(), " needs ",
          t.AllocatedBytes(), " bytes of raw_data but has ", p.raw_data().size()));
    }
    if (t.AllocatedBytes() > 0) std::memcpy(t.raw_data(), p.raw_data().data(), t.AllocatedBytes());
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
  } else {
    p->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.AllocatedBytes()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ReadOnnxTensorFile(const std::string& path, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open tensor file '", path, "'"));
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(buf.str())) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a serialized ONNX TensorProto"));
  }
  if (name != nullptr) *name = proto.name();
  auto t = TensorFromOnnx(proto);
  if (!t.ok()) return AddContext(t.status(), path);
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

}  // namespace sluice
