// Ops of ONNX's ai.onnx.ml domain: ArrayFeatureExtractor, Binarizer, LabelEncoder and
// TreeEnsemble. Attributes ONNX gives as tensors stay tensors; the converters
// (frontend/onnx/converters/ml.cc) fold the older list spellings into them.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("Onnx>ArrayFeatureExtractor")
    .Input("x: T")
    .Input("y: int64")
    .Output("z: T")
    .Attr("T: {float, double, int64, int32, string}")
    .Doc("z = x[..., y] with y's elements as the last dim; a 1-D x gives a [1, len(y)] z "
         "(as ONNX Runtime).");

REGISTER_OP("Onnx>Binarizer")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double, int64, int32}")
    .Attr("threshold: float = 0")
    .Doc("1 where x > threshold, else 0.");

REGISTER_OP("Onnx>LabelEncoder")
    .Input("x: TK")
    .Output("y: TV")
    .Attr("TK: {string, int64, int32, int16, float, double}")
    .Attr("TV: {string, int64, int32, int16, float, double}")
    .Attr("keys: tensor")
    .Attr("values: tensor")
    .Attr("default_value: tensor")
    .Doc("Maps each element of x found in `keys` (1-D, of TK) to the value at the same place "
         "of `values` (1-D, of TV); others to `default_value` (one element of TV). Float keys "
         "match numerically (-0 equals 0, NaN equals NaN).");

REGISTER_OP("Onnx>TreeEnsemble")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float, double}")
    .Attr("aggregate_function: int = 1")
    .Attr("leaf_targetids: list(int)")
    .Attr("leaf_weights: tensor")
    .Attr("membership_values: tensor")
    .Attr("n_targets: int")
    .Attr("nodes_falseleafs: list(int)")
    .Attr("nodes_falsenodeids: list(int)")
    .Attr("nodes_featureids: list(int)")
    .Attr("nodes_missing_value_tracks_true: list(int) = []")
    .Attr("nodes_modes: list(int)")
    .Attr("nodes_splits: tensor")
    .Attr("nodes_trueleafs: list(int)")
    .Attr("nodes_truenodeids: list(int)")
    .Attr("post_transform: int = 0")
    .Attr("tree_roots: list(int)")
    .Doc("ONNX TreeEnsemble-5 over x [N, F]: each tree walks from its root to one leaf, whose "
         "weight goes to its target; trees combine by aggregate_function (0 average, 1 sum, "
         "2 min, 3 max), then post_transform (0 none, 1 softmax, 2 logistic, 3 softmax_zero, "
         "4 probit) gives y [N, n_targets]. Node modes: 0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=, "
         "6 member of the node's NaN-terminated run of membership_values. leaf_weights, "
         "nodes_splits and membership_values are 1-D tensors of T (the last may be empty).");

}  // namespace sluice
