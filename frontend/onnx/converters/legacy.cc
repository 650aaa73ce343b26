// Converters for old opset versions whose inputs changed meaning, normalized onto the newest
// Sluice op.
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

AttrValue TypeAttr(DataType dt) {
  AttrValue v;
  v.set_type(dt);
  return v;
}

// The single value of a constant numeric tensor.
absl::StatusOr<double> ScalarValue(const Tensor& t) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected one value, got shape ", t.shape().DebugString()));
  }
  double v = 0;
  bool numeric = false;
  VisitDataType(t.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, half> || std::is_same_v<V, bfloat16>) {
      v = static_cast<double>(t.flat<V>()[0]);
      numeric = true;
    }
  });
  if (!numeric) return absl::InvalidArgumentError("expected a numeric value");
  return v;
}

// Tile-1: `tiles` copies of the input along `axis` (both one-value tensors of the input's
// float type) are Tile with repeats 1 everywhere but at axis. Constant tiles and axis with a
// known rank give constant repeats; otherwise repeats = Where(Range(rank) == axis, tiles, 1).
absl::Status ConvertTile1(OnnxNodeContext* ctx) {
  if (!ctx->has_input(1) || !ctx->has_input(2)) return ctx->Error("Tile-1 needs tiles and axis");
  const PartialShape shape = ctx->input_shape(0);
  // Each value is read before the next lookup: constant_input's pointers do not survive it.
  std::optional<absl::StatusOr<double>> t, a;
  if (const Tensor* tiles = ctx->constant_input(1)) t = ScalarValue(*tiles);
  if (const Tensor* axis = ctx->constant_input(2)) a = ScalarValue(*axis);
  std::string repeats;
  if (t.has_value() && a.has_value() && !shape.unknown_rank()) {
    if (!t->ok()) return ctx->Error(absl::StrCat("tiles: ", t->status().message()));
    if (!a->ok()) return ctx->Error(absl::StrCat("axis: ", a->status().message()));
    const double tiles = **t, axis = **a;
    const int rank = shape.rank();
    const double ax = axis < 0 ? axis + rank : axis;
    if (!(ax >= 0 && ax < rank) || ax != std::floor(ax)) {
      return ctx->Error(absl::StrCat("axis ", axis, " is not an axis of a rank-", rank, " input"));
    }
    if (!(tiles >= 0 && tiles < 9.2e18) || tiles != std::floor(tiles)) {
      return ctx->Error(absl::StrCat("tiles must be a whole number >= 0, got ", tiles));
    }
    std::vector<int64_t> r(rank, 1);
    r[static_cast<int>(ax)] = static_cast<int64_t>(tiles);
    repeats = ctx->AddConst(Tensor::FromVector<int64_t>(r, TensorShape({rank})), "repeats");
  } else {
    AttrMap to_int64;
    to_int64["to"] = TypeAttr(DT_INT64);
    SL_ASSIGN_OR_RETURN(auto in_shape, ctx->AddNode("Shape", {{ctx->input(0)}}, {}, "shape"));
    SL_ASSIGN_OR_RETURN(auto rank, ctx->AddNode("Size", {{in_shape[0]}}, {}, "rank"));
    std::string zero = ctx->AddConst(Tensor::Scalar<int64_t>(0), "zero");
    std::string one = ctx->AddConst(Tensor::Scalar<int64_t>(1), "one");
    SL_ASSIGN_OR_RETURN(auto iota, ctx->AddNode("Range", {{zero}, {rank[0]}, {one}}, {}, "iota"));
    SL_ASSIGN_OR_RETURN(auto axis64, ctx->AddNode("Cast", {{ctx->input(2)}}, to_int64, "axis"));
    SL_ASSIGN_OR_RETURN(auto tiles64, ctx->AddNode("Cast", {{ctx->input(1)}}, to_int64, "tiles"));
    SL_ASSIGN_OR_RETURN(auto at_axis, ctx->AddNode("Equal", {{iota[0]}, {axis64[0]}}, {}, "at_axis"));
    SL_ASSIGN_OR_RETURN(auto r, ctx->AddNode("Where", {{at_axis[0]}, {tiles64[0]}, {one}}, {}, "repeats"));
    repeats = r[0];
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Tile", {{ctx->input(0)}, {repeats}}, {}));
  return ctx->SetOutputs(out);
}

// Tile-6 replaced the tiles and axis inputs with a repeats vector.
REGISTER_ONNX_CONVERTER("", "Tile", 1, 5, ConvertTile1);

}  // namespace
}  // namespace sluice
