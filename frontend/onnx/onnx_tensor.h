// Conversion between Sluice tensors and ONNX TensorProto (the file format of `sluice run`
// inputs and outputs and of ONNX test data), every ONNX element type Sluice can hold.
//
//   onnx::TensorProto proto;  // parsed from input_0.pb
//   SL_ASSIGN_OR_RETURN(Tensor t, TensorFromOnnx(proto));
//   SL_RETURN_IF_ERROR(TensorToOnnx(t, "output_0", &proto));
#ifndef SLUICE_FRONTEND_ONNX_ONNX_TENSOR_H_
#define SLUICE_FRONTEND_ONNX_ONNX_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "framework/tensor_sequence.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"

namespace sluice {

// ONNX TensorProto.DataType <-> DataType; errors name the unsupported type.
absl::StatusOr<DataType> DataTypeFromOnnx(int onnx_type);
absl::StatusOr<int> DataTypeToOnnx(DataType dt);

// Reads raw_data or the typed field. Tensors with external data need ReadOnnxTensorFile's
// directory (see frontend/onnx for models); here they are an error.
absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& proto);
// Writes raw_data (strings to string_data).
absl::Status TensorToOnnx(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

// ONNX SequenceProto and OptionalProto <-> scalar DT_VARIANT tensors holding a TensorSequence
// or TensorOptional. `type`, the value's ONNX type, gives the element dtype of an empty
// sequence; it may be null when the proto says enough.
absl::StatusOr<Tensor> SequenceFromOnnx(const onnx::SequenceProto& proto, const onnx::TypeProto* type);
absl::StatusOr<Tensor> OptionalFromOnnx(const onnx::OptionalProto& proto, const onnx::TypeProto* type);
absl::Status SequenceToOnnx(const Tensor& sequence, const std::string& name, onnx::SequenceProto* proto);
absl::Status OptionalToOnnx(const Tensor& optional, const std::string& name, onnx::OptionalProto* proto);

// Whole files: a serialized TensorProto. Errors name the file.
absl::StatusOr<Tensor> ReadOnnxTensorFile(const std::string& path, std::string* name = nullptr);
absl::Status WriteOnnxTensorFile(const std::string& path, const Tensor& tensor,
                                 const std::string& name);
// A value of ONNX type `type`: a TensorProto, SequenceProto or OptionalProto file.
absl::StatusOr<Tensor> ReadOnnxValueFile(const std::string& path, const onnx::TypeProto& type,
                                         std::string* name = nullptr);
// A tensor as a TensorProto file, a sequence or optional (DT_VARIANT) as its ONNX proto.
absl::Status WriteOnnxValueFile(const std::string& path, const Tensor& value, const std::string& name);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_ONNX_TENSOR_H_
