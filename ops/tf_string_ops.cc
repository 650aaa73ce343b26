// TensorFlow's string and summary ops that its language bindings' tests use, with TensorFlow's
// signatures (written for Sluice from TensorFlow's documentation).
#include "absl/strings/str_cat.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("StringToHashBucketStrong")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Attr("key: list(int)")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("SipHash-2-4 of each string under the 128-bit key (key[0], key[1]), modulo num_buckets.");

REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("FarmHash's Fingerprint64 of each string, modulo num_buckets (TensorFlow's buckets).");

REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .SetShapeFn(shape_fn::Unchanged);

// Defined so that graphs which log tensors load and round-trip; Sluice has no summary writer,
// so running one is an error (no kernel).
REGISTER_OP("TensorSummary")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("T: type")
    .Attr("description: string = ''")
    .Attr("labels: list(string) = []")
    .Attr("display_name: string = ''")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    });

// Joins its inputs element-wise with `separator` between them; scalars broadcast against the
// others, which must all have one shape.
REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int >= 0")
    .Attr("separator: string = ''")
    .SetShapeFn([](InferenceContext* c) {
      int shaped = -1;  // An input that is not a scalar.
      for (int i = 0; i < c->num_inputs(); ++i) {
        const PartialShape& in = c->input(i);
        if (in.unknown_rank()) return shape_fn::Unknown(c);
        if (in.rank() == 0) continue;
        if (shaped >= 0 && c->input(shaped).rank() != in.rank()) {
          return c->Error(absl::StrCat("StringJoin: input ", i, " has shape ", in.DebugString(),
                                       ", which differs from ", c->input(shaped).DebugString()));
        }
        shaped = i;
      }
      if (shaped >= 0) {
        c->set_output(0, c->input(shaped));
      } else {
        c->set_output(0, PartialShape::Scalar());
      }
      return absl::OkStatus();
    });

// Each string with the matches of the RE2 `pattern` (every one, or the first unless
// replace_global) replaced by `rewrite`, in which \0 to \9 stand for the match and its groups.
REGISTER_OP("StaticRegexReplace")
    .Input("input: string")
    .Output("output: string")
    .Attr("pattern: string")
    .Attr("rewrite: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(shape_fn::Unchanged);

// StaticRegexReplace with the pattern and the rewrite as scalar string inputs.
REGISTER_OP("RegexReplace")
    .Input("input: string")
    .Input("pattern: string")
    .Input("rewrite: string")
    .Output("output: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(shape_fn::Unchanged);

// Whether each string matches the RE2 `pattern` whole (TensorFlow 2's checkpoint save function
// asks it of the prefix).
REGISTER_OP("StaticRegexFullMatch")
    .Input("input: string")
    .Output("output: bool")
    .Attr("pattern: string")
    .SetShapeFn(shape_fn::Unchanged);

// StaticRegexFullMatch with the pattern as a scalar string input.
REGISTER_OP("RegexFullMatch")
    .Input("input: string")
    .Input("pattern: string")
    .Output("output: bool")
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
