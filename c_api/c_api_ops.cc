// Registering ops from C (tensorflow/c/ops.h): a TF_OpDefinitionBuilder collects the specs
// and becomes an OpDefBuilder registered in Sluice's OpRegistry, checked at once so a library
// learns of a bad spec while it loads. A C shape function runs inside Sluice's own with
// TF_ShapeInferenceContext as the C view of the InferenceContext; shape and dimension handles
// are values (a PartialShape, a dim).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "c_api/include/tensorflow/c/ops.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "framework/tensor_shape.h"
#include "ops/op_def_builder.h"
#include "ops/op_registry.h"
#include "ops/shape_inference.h"

struct TF_OpDefinitionBuilder {
  std::string name;
  std::vector<std::string> attrs, inputs, outputs;
  bool commutative = false, aggregate = false, stateful = false, allows_uninitialized = false;
  void (*shape_fn)(TF_ShapeInferenceContext*, TF_Status*) = nullptr;
};

struct TF_ShapeHandle {
  sluice::PartialShape shape;  // Unknown rank by default.
};

struct TF_DimensionHandle {
  int64_t value = -1;  // -1: unknown.
};

namespace sluice {
namespace {

// TensorFlow's largest rank; bounds the unknown dims WithRank makes.
constexpr int64_t kMaxShapeRank = 254;

// Copied rather than a fresh PartialShape() moved in: GCC flags moving a temporary's unused
// inline storage as maybe uninitialized.
const PartialShape& UnknownShape() {
  static const PartialShape* unknown = new PartialShape();
  return *unknown;
}

InferenceContext* Ctx(TF_ShapeInferenceContext* ctx) {
  return reinterpret_cast<InferenceContext*>(ctx);
}

absl::Status RegisterOp(const TF_OpDefinitionBuilder& b) {
  constexpr char kFn[] = "TF_RegisterOpDefinition";
  if (OpRegistry::Global()->LookUp(b.name).ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat(kFn, ": op '", b.name, "' is already registered"));
  }
  OpDefBuilder builder(b.name);
  for (const std::string& spec : b.attrs) builder.Attr(spec);
  for (const std::string& spec : b.inputs) builder.Input(spec);
  for (const std::string& spec : b.outputs) builder.Output(spec);
  if (b.commutative) builder.SetIsCommutative();
  if (b.aggregate) builder.SetIsAggregate();
  if (b.stateful) builder.SetIsStateful();
  if (b.allows_uninitialized) builder.SetAllowsUninitializedInput();
  if (auto* fn = b.shape_fn) {
    builder.SetShapeFn([fn](InferenceContext* c) -> absl::Status {
      TF_Status status;
      fn(reinterpret_cast<TF_ShapeInferenceContext*>(c), &status);
      if (status.status.ok()) return absl::OkStatus();
      return c->Error(absl::StrCat("the library's shape function: ", status.status.message()));
    });
  }
  // The registry parses lazily; parse now so a bad spec fails this call, naming the spec.
  OpRegistrationData data;
  SL_RETURN_IF_ERROR(builder.Finalize(&data), kFn);
  OpRegistry::Global()->Register(builder);
  return OpRegistry::Global()->LookUp(b.name).status();
}

absl::Status CheckHandles(const char* fn, TF_ShapeInferenceContext* ctx,
                          std::initializer_list<const void*> handles) {
  if (ctx == nullptr) return NullArgument(fn, "ctx");
  for (const void* h : handles) {
    if (h == nullptr) return NullArgument(fn, "shape handle");
  }
  return absl::OkStatus();
}

// *result = handle's shape with rank checked by `fits` (an unknown rank becomes `rank`
// unknown dims when `exact`).
void WithRank(const char* fn, TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle, int64_t rank,
              TF_ShapeHandle* result, TF_Status* status, const char* relation,
              bool (*fits)(int64_t have, int64_t want), bool exact) {
  absl::Status s = CheckHandles(fn, ctx, {handle, result});
  if (s.ok() && (rank < 0 || rank > kMaxShapeRank)) {
    s = absl::InvalidArgumentError(absl::StrCat(fn, ": rank ", rank, " is out of range"));
  }
  if (s.ok()) {
    const PartialShape& in = handle->shape;
    if (in.unknown_rank()) {
      result->shape = exact ? PartialShape(std::vector<int64_t>(rank, -1)) : in;
    } else if (!fits(in.rank(), rank)) {
      s = Ctx(ctx)->Error(absl::StrCat("shape ", in.DebugString(), " must have rank ", relation,
                                       rank));
    } else {
      result->shape = in;
    }
  }
  SetStatus(status, s);
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(const char* op_name) {
  auto* b = new TF_OpDefinitionBuilder;
  b->name = op_name != nullptr ? op_name : "";
  return b;
}

void TF_RegisterOpDefinition(TF_OpDefinitionBuilder* builder, TF_Status* status) {
  if (builder == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_RegisterOpDefinition", "builder"));
    return;
  }
  absl::Status s = sluice::RegisterOp(*builder);
  sluice::NoteRegistrationFailure(s);
  SetStatus(status, s);
  delete builder;
}

void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder* builder) { delete builder; }

void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder* builder, const char* attr_spec) {
  if (builder != nullptr) builder->attrs.push_back(attr_spec != nullptr ? attr_spec : "");
}

void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder* builder, const char* input_spec) {
  if (builder != nullptr) builder->inputs.push_back(input_spec != nullptr ? input_spec : "");
}

void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder* builder, const char* output_spec) {
  if (builder != nullptr) builder->outputs.push_back(output_spec != nullptr ? output_spec : "");
}

void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder* builder, bool is_commutative) {
  if (builder != nullptr) builder->commutative = is_commutative;
}

void TF_OpDefinitionBuilderSetIsAggregate(TF_OpDefinitionBuilder* builder, bool is_aggregate) {
  if (builder != nullptr) builder->aggregate = is_aggregate;
}

void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder* builder, bool is_stateful) {
  if (builder != nullptr) builder->stateful = is_stateful;
}

void TF_OpDefinitionBuilderSetAllowsUninitializedInput(TF_OpDefinitionBuilder* builder,
                                                       bool allows_uninitialized_input) {
  if (builder != nullptr) builder->allows_uninitialized = allows_uninitialized_input;
}

void TF_OpDefinitionBuilderDeprecated(TF_OpDefinitionBuilder* builder, int version,
                                      const char* explanation) {}

void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext* ctx, TF_Status* status)) {
  if (builder != nullptr) builder->shape_fn = shape_inference_func;
}

int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext* ctx) {
  return ctx == nullptr ? 0 : sluice::Ctx(ctx)->num_inputs();
}

TF_ShapeHandle* TF_NewShapeHandle(void) { return new TF_ShapeHandle; }

void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext* ctx, int i,
                                      TF_ShapeHandle* handle, TF_Status* status) {
  constexpr char kFn[] = "TF_ShapeInferenceContextGetInput";
  absl::Status s = sluice::CheckHandles(kFn, ctx, {handle});
  if (s.ok() && (i < 0 || i >= sluice::Ctx(ctx)->num_inputs())) {
    s = absl::OutOfRangeError(absl::StrCat(kFn, ": input ", i, " is out of range (",
                                           sluice::Ctx(ctx)->num_inputs(), " inputs)"));
  }
  if (s.ok()) handle->shape = sluice::Ctx(ctx)->input(i);
  SetStatus(status, s);
}

void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext* ctx, int i,
                                       TF_ShapeHandle* handle, TF_Status* status) {
  constexpr char kFn[] = "TF_ShapeInferenceContextSetOutput";
  absl::Status s = sluice::CheckHandles(kFn, ctx, {handle});
  if (s.ok() && (i < 0 || i >= sluice::Ctx(ctx)->num_outputs())) {
    s = absl::OutOfRangeError(absl::StrCat(kFn, ": output ", i, " is out of range (",
                                           sluice::Ctx(ctx)->num_outputs(), " outputs)"));
  }
  if (s.ok()) sluice::Ctx(ctx)->set_output(i, handle->shape);
  SetStatus(status, s);
}

TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(TF_ShapeInferenceContext* ctx,
                                                       size_t size) {
  auto* h = new TF_ShapeHandle;
  const int64_t dims[] = {size > static_cast<size_t>(INT64_MAX) ? -1
                                                                 : static_cast<int64_t>(size)};
  h->shape = sluice::PartialShape(dims);
  return h;
}

TF_DimensionHandle* TF_NewDimensionHandle(void) { return new TF_DimensionHandle; }

void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext* ctx, const char* attr_name,
                                          TF_DataType* val, TF_Status* status) {
  if (ctx == nullptr || attr_name == nullptr || val == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ShapeInferenceContext_GetAttrType",
                                           "ctx, attr_name or val"));
    return;
  }
  sluice::DataType dt;
  absl::Status s = sluice::GetNodeAttr(sluice::Ctx(ctx)->attrs(), attr_name, &dt);
  if (s.ok()) *val = static_cast<TF_DataType>(dt);
  SetStatus(status, s);
}

int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle) {
  return handle == nullptr ? -1 : handle->shape.rank();
}

int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle) {
  return handle != nullptr && !handle->shape.unknown_rank();
}

void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle,
                                      int64_t rank, TF_ShapeHandle* result, TF_Status* status) {
  sluice::WithRank("TF_ShapeInferenceContextWithRank", ctx, handle, rank, result, status, "",
                   [](int64_t have, int64_t want) { return have == want; }, true);
}

void TF_ShapeInferenceContextWithRankAtLeast(TF_ShapeInferenceContext* ctx,
                                             TF_ShapeHandle* handle, int64_t rank,
                                             TF_ShapeHandle* result, TF_Status* status) {
  sluice::WithRank("TF_ShapeInferenceContextWithRankAtLeast", ctx, handle, rank, result, status,
                   "at least ", [](int64_t have, int64_t want) { return have >= want; }, false);
}

void TF_ShapeInferenceContextWithRankAtMost(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle,
                                            int64_t rank, TF_ShapeHandle* result,
                                            TF_Status* status) {
  sluice::WithRank("TF_ShapeInferenceContextWithRankAtMost", ctx, handle, rank, result, status,
                   "at most ", [](int64_t have, int64_t want) { return have <= want; }, false);
}

void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* shape_handle,
                                 int64_t i, TF_DimensionHandle* result) {
  if (result == nullptr) return;
  result->value = -1;
  if (shape_handle == nullptr || shape_handle->shape.unknown_rank()) return;
  const int64_t rank = shape_handle->shape.rank();
  if (i < 0) i += rank;
  if (i >= 0 && i < rank) result->value = shape_handle->shape.dim(static_cast<int>(i));
}

void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* shape_handle,
                                      int64_t start, int64_t end, TF_ShapeHandle* result,
                                      TF_Status* status) {
  constexpr char kFn[] = "TF_ShapeInferenceContextSubshape";
  absl::Status s = sluice::CheckHandles(kFn, ctx, {shape_handle, result});
  if (s.ok()) {
    const sluice::PartialShape& in = shape_handle->shape;
    if (in.unknown_rank()) {
      result->shape = in;
    } else {
      const int64_t rank = in.rank();
      auto clamp = [rank](int64_t v) {
        if (v < 0) v += rank;
        return std::clamp<int64_t>(v, 0, rank);
      };
      const int64_t b = clamp(start), e = clamp(end);
      std::vector<int64_t> dims;
      for (int64_t d = b; d < e; ++d) dims.push_back(in.dim(static_cast<int>(d)));
      result->shape = sluice::PartialShape(dims);
    }
  }
  SetStatus(status, s);
}

void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  if (ctx == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ShapeInferenceContextSetUnknownShape", "ctx"));
    return;
  }
  for (int i = 0; i < sluice::Ctx(ctx)->num_outputs(); ++i) {
    sluice::Ctx(ctx)->set_output(i, sluice::UnknownShape());
  }
  SetStatus(status, absl::OkStatus());
}

int TF_DimensionHandleValueKnown(TF_DimensionHandle* dim_handle) {
  return dim_handle != nullptr && dim_handle->value >= 0;
}

int64_t TF_DimensionHandleValue(TF_DimensionHandle* dim_handle) {
  return dim_handle == nullptr ? -1 : dim_handle->value;
}

void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext* ctx,
                                               TF_ShapeHandle* first, TF_ShapeHandle* second,
                                               TF_ShapeHandle* result, TF_Status* status) {
  constexpr char kFn[] = "TF_ShapeInferenceContextConcatenateShapes";
  absl::Status s = sluice::CheckHandles(kFn, ctx, {first, second, result});
  if (s.ok()) {
    if (first->shape.unknown_rank() || second->shape.unknown_rank()) {
      result->shape = sluice::UnknownShape();
    } else if (first->shape.rank() + second->shape.rank() > sluice::kMaxShapeRank) {
      s = sluice::Ctx(ctx)->Error(absl::StrCat("concatenating ", first->shape.DebugString(),
                                               " and ", second->shape.DebugString(),
                                               " passes the largest rank"));
    } else {
      std::vector<int64_t> dims(first->shape.dims().begin(), first->shape.dims().end());
      dims.insert(dims.end(), second->shape.dims().begin(), second->shape.dims().end());
      result->shape = sluice::PartialShape(dims);
    }
  }
  SetStatus(status, s);
}

void TF_DeleteShapeHandle(TF_ShapeHandle* handle) { delete handle; }

void TF_DeleteDimensionHandle(TF_DimensionHandle* handle) { delete handle; }

}  // extern "C"
