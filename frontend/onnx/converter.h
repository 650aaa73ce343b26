// Converting one ONNX node into Sluice nodes. Converters are keyed by (domain, op, version
// range), where versions are the ONNX schema's since_version for the node's opset, and live
// in frontend/onnx/converters/<family>.cc, one registration per range:
//
//   // Relu-6 dropped consumed_inputs; 13 and 14 only widened the types.
//   REGISTER_ONNX_CONVERTER("", "Relu", 6, 14, EmitGeneric);
//
//   absl::Status ConvertReshape5(OnnxNodeContext* ctx) { return ctx->EmitGeneric(); }
//   absl::Status ConvertReshape1(OnnxNodeContext* ctx) {    // shape was an attribute
//     SL_ASSIGN_OR_RETURN(auto shape, ctx->GetInts("shape"));
//     std::string s = ctx->AddConst(Tensor::FromVector<int64_t>(shape, {n}), "shape");
//     SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Reshape", {{ctx->input(0)}, {s}}, {}));
//     return ctx->SetOutputs(out);
//   }
//
// Conventions for the Sluice ops that ONNX nodes become: the op has the ONNX op's name and
// attrs (same names, same defaults); type attrs are named after the ONNX type constraints
// (T, T1, Tind, ...); an optional ONNX input is an input of type `list(type)` that holds zero
// or one tensor; a variadic input is `N * T`. EmitGeneric maps a node onto such an op.
#ifndef SLUICE_FRONTEND_ONNX_CONVERTER_H_
#define SLUICE_FRONTEND_ONNX_CONVERTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/node_attr.h"
#include "framework/tensor.h"
#include "onnx/onnx_pb.h"

namespace sluice {

class OnnxImporter;

class OnnxNodeContext {
 public:
  OnnxNodeContext(OnnxImporter* importer, const onnx::NodeProto& node, int since_version,
                  std::string base_name);

  const onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  // A name for nodes emitted for this ONNX node (unique in the GraphDef; derived from the
  // ONNX node's name or first output).
  const std::string& base_name() const { return base_name_; }
  int since_version() const { return since_version_; }

  int num_inputs() const { return node_.input_size(); }
  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  // The Sluice tensor ("node:k") holding ONNX input i.
  const std::string& input(int i) const;
  DataType input_dtype(int i) const;
  // From ONNX shape inference; unknown when it could not tell.
  PartialShape input_shape(int i) const;
  // The value of input i when it is an initializer or a constant; null otherwise.
  const Tensor* constant_input(int i) const;
  // The ONNX type of input i when it is a sequence or optional (dtype DT_VARIANT); null for
  // tensors and when unknown.
  const onnx::TypeProto* input_value_type(int i) const;

  int num_outputs() const { return node_.output_size(); }
  bool has_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }

  const onnx::AttributeProto* attr(absl::string_view name) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name, std::optional<int64_t> fallback = {}) const;
  absl::StatusOr<float> GetFloat(absl::string_view name, std::optional<float> fallback = {}) const;
  absl::StatusOr<std::string> GetString(absl::string_view name,
                                        std::optional<std::string> fallback = {}) const;
  absl::StatusOr<std::vector<int64_t>> GetInts(absl::string_view name,
                                               std::optional<std::vector<int64_t>> fallback = {}) const;
  absl::StatusOr<std::vector<float>> GetFloats(absl::string_view name,
                                               std::optional<std::vector<float>> fallback = {}) const;
  absl::StatusOr<Tensor> GetTensor(absl::string_view name) const;

  // Adds a Sluice node; `args` are its inputs grouped per OpDef input arg (a list arg takes
  // any number, others exactly one). Type attrs are inferred from the inputs, defaults filled,
  // the node validated. Returns the node's output tensor names.
  absl::StatusOr<std::vector<std::string>> AddNode(absl::string_view op,
                                                   std::vector<std::vector<std::string>> args,
                                                   AttrMap attrs, absl::string_view suffix = "");
  // A Const node; returns its tensor name.
  std::string AddConst(const Tensor& value, absl::string_view suffix);
  // Maps ONNX output i to a Sluice tensor.
  absl::Status SetOutput(int i, const std::string& tensor);
  // Maps every requested ONNX output to the corresponding tensor of `tensors`.
  absl::Status SetOutputs(const std::vector<std::string>& tensors);
  // Records the ONNX type of output i, a sequence or optional, after SetOutput(s).
  void SetOutputValueType(int i, const onnx::TypeProto& type);

  // The node as the Sluice op `op` (default: the ONNX op type): ONNX attributes copied by
  // name (ints into int, bool and type attrs), inputs grouped per the OpDef's args (see
  // above), outputs mapped in order. `extra` attrs are added or override; ONNX attributes
  // named in `ignored` are dropped (ones a version had that no longer mean anything).
  absl::Status EmitGeneric(absl::string_view op = "", AttrMap extra = {},
                           const std::vector<std::string>& ignored = {});

  OnnxImporter* importer() const { return importer_; }

  // INVALID_ARGUMENT / UNIMPLEMENTED naming the node, its op and version.
  absl::Status Error(absl::string_view message) const;
  absl::Status Unimplemented(absl::string_view message) const;

 private:
  OnnxImporter* importer_;
  const onnx::NodeProto& node_;
  int since_version_;
  std::string base_name_;
  bool used_base_ = false;  // The first node emitted takes base_name() itself.
};

using OnnxConverterFn = absl::Status (*)(OnnxNodeContext* ctx);

// EmitGeneric as a converter.
absl::Status EmitGeneric(OnnxNodeContext* ctx);

// An AttrValue of anything SetAttrValue takes (framework/node_attr.h), for AddNode's attrs.
template <typename T>
AttrValue MakeAttr(const T& value) {
  AttrValue a;
  SetAttrValue(value, &a);
  return a;
}

// A 1-D int64 tensor of `v`, for attributes that later versions take as inputs.
Tensor Int64Vector(const std::vector<int64_t>& v);

// A scalar of `dt` holding `value`, for values older versions gave as a float attribute `attr`
// (pad values, Clip bounds). For an integer `dt` the value must be a whole number in its range
// (casting 3.4e38 to int32 is undefined behaviour); other types without a number form fail.
absl::StatusOr<Tensor> ScalarFromFloatAttr(DataType dt, double value, absl::string_view attr);

struct OnnxConverterEntry {
  std::string domain;  // "" for ai.onnx.
  std::string op;
  int first_version;
  int last_version;
  OnnxConverterFn fn;
};

// All registered converters; lookups pick the entry whose range holds the schema version.
class OnnxConverterRegistry {
 public:
  static OnnxConverterRegistry* Global();
  void Register(OnnxConverterEntry entry);
  const OnnxConverterEntry* Find(absl::string_view domain, absl::string_view op, int version) const;
  const std::vector<OnnxConverterEntry>& entries() const { return entries_; }

 private:
  std::vector<OnnxConverterEntry> entries_;
};

namespace onnx_converter {
struct Registrar {
  Registrar(const char* domain, const char* op, int first, int last, OnnxConverterFn fn) {
    OnnxConverterRegistry::Global()->Register({domain, op, first, last, fn});
  }
};
}  // namespace onnx_converter

#define SL_ONNX_CONVERTER_UNIQ_(ctr, domain, op, first, last, fn) \
  static ::sluice::onnx_converter::Registrar sl_onnx_converter_##ctr(domain, op, first, last, fn)
#define SL_ONNX_CONVERTER_(ctr, domain, op, first, last, fn) \
  SL_ONNX_CONVERTER_UNIQ_(ctr, domain, op, first, last, fn)
#define REGISTER_ONNX_CONVERTER(domain, op, first, last, fn) \
  SL_ONNX_CONVERTER_(__COUNTER__, domain, op, first, last, fn)

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_CONVERTER_H_
