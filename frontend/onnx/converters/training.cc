// Optimizers of ai.onnx.preview.training.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/gradients/gradients.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/importer.h"

namespace sluice {
namespace {

constexpr char kTraining[] = "ai.onnx.preview.training";

absl::Status ConvertOptimizer(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["M"].set_i(ctx->num_outputs());
  return ctx->EmitGeneric("", extra);
}

// Backward nodes go into the importer's graph, named under the Gradient node.
class ImporterGradientBuilder : public GradientBuilder {
 public:
  explicit ImporterGradientBuilder(OnnxNodeContext* ctx) : ctx_(ctx) {}
  absl::StatusOr<std::vector<std::string>> Add(absl::string_view op, std::vector<std::vector<std::string>> args,
                                               AttrMap attrs) override {
    return ctx_->AddNode(op, std::move(args), std::move(attrs), absl::StrCat(op, "_", counter_++));
  }
  DataType Dtype(const std::string& tensor) const override { return ctx_->importer()->DtypeOf(tensor); }

 private:
  OnnxNodeContext* ctx_;
  int counter_ = 0;
};

// Gradient(inputs = values of xs then zs; attrs xs, zs, y): d sum(y) / d x for each x, through
// the forward graph already imported, recomputed from the node's inputs where they differ.
absl::Status ConvertGradient(OnnxNodeContext* ctx) {
  const onnx::AttributeProto* xs_attr = ctx->attr("xs");
  if (xs_attr == nullptr || xs_attr->strings_size() == 0) return ctx->Error("Gradient needs xs");
  SL_ASSIGN_OR_RETURN(std::string y, ctx->GetString("y"));
  std::vector<std::string> xs, zs;
  absl::flat_hash_map<std::string, std::string> substitutions;
  OnnxImporter* imp = ctx->importer();
  auto resolve = [&](const std::string& name) -> absl::StatusOr<std::string> {
    const OnnxImporter::TensorInfo* info = imp->Find(name);
    if (info == nullptr) return ctx->Error(absl::StrCat("Gradient names '", name, "', which is not in the graph"));
    return info->tensor;
  };
  int input = 0;
  for (const auto& x : xs_attr->strings()) {
    SL_ASSIGN_OR_RETURN(std::string t, resolve(x));
    xs.push_back(t);
    if (ctx->has_input(input)) substitutions[t] = ctx->input(input);
    ++input;
  }
  if (const onnx::AttributeProto* zs_attr = ctx->attr("zs")) {
    for (const auto& z : zs_attr->strings()) {
      SL_ASSIGN_OR_RETURN(std::string t, resolve(z));
      zs.push_back(t);
      if (ctx->has_input(input)) substitutions[t] = ctx->input(input);
      ++input;
    }
  }
  SL_ASSIGN_OR_RETURN(std::string y_tensor, resolve(y));
  ImporterGradientBuilder builder(ctx);
  SL_ASSIGN_OR_RETURN(std::vector<std::string> grads,
                      SymbolicGradients(&builder, *imp->graph(), y_tensor, xs, zs, substitutions));
  return ctx->SetOutputs(grads);
}

// Version 1 is the only one.
REGISTER_ONNX_CONVERTER(kTraining, "Gradient", 1, 1, ConvertGradient);
REGISTER_ONNX_CONVERTER(kTraining, "Adagrad", 1, 1, ConvertOptimizer);
REGISTER_ONNX_CONVERTER(kTraining, "Momentum", 1, 1, ConvertOptimizer);
REGISTER_ONNX_CONVERTER(kTraining, "Adam", 1, 1, ConvertOptimizer);

}  // namespace
}  // namespace sluice
