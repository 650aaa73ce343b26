// Text ops with ONNX semantics: StringNormalizer, TfIdfVectorizer and opset 20's StringConcat,
// StringSplit and RegexFullMatch.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("Onnx>StringNormalizer")
    .Input("x: string")
    .Output("y: string")
    .Attr("case_change_action: {'NONE', 'LOWER', 'UPPER'} = 'NONE'")
    .Attr("is_case_sensitive: int = 0")
    .Attr("locale: string = ''")
    .Attr("stopwords: list(string) = []")
    .Doc("Drops stopwords from a [C] or [1, C] string tensor, then changes case. When every "
         "string is dropped the output is one empty string ([1] or [1, 1]).");

REGISTER_OP("Onnx>StringConcat")
    .Input("x: string")
    .Input("y: string")
    .Output("z: string")
    .Doc("x + y element-wise, broadcasting as numpy does.");

REGISTER_OP("Onnx>StringSplit")
    .Input("x: string")
    .Output("y: string")
    .Output("z: int64")
    .Attr("delimiter: string = ''")
    .Attr("maxsplit: int = -1")
    .Doc("Splits each string as Python's str.split does: at each delimiter, or (empty delimiter) "
         "at runs of whitespace, ignoring it at the ends; at most maxsplit splits (negative: no "
         "limit). y is x's shape plus one dim, the most pieces of any string, padded with empty "
         "strings; z holds each string's count of pieces.");

REGISTER_OP("Onnx>RegexFullMatch")
    .Input("x: string")
    .Output("y: bool")
    .Attr("pattern: string = ''")
    .Doc("Whether each whole string matches pattern (RE2 syntax).");

REGISTER_OP("Onnx>TfIdfVectorizer")
    .Input("x: T")
    .Output("y: float")
    .Attr("T: {string, int32, int64}")
    .Attr("max_gram_length: int")
    .Attr("max_skip_count: int")
    .Attr("min_gram_length: int")
    .Attr("mode: {'TF', 'IDF', 'TFIDF'}")
    .Attr("ngram_counts: list(int)")
    .Attr("ngram_indexes: list(int)")
    .Attr("pool_int64s: list(int) = []")
    .Attr("pool_strings: list(string) = []")
    .Attr("weights: list(float) = []")
    .Doc("Counts the pool's n-grams (with up to max_skip_count skipped tokens between items) in "
         "each row of a [C] or [N, C] input; output column ngram_indexes[k] holds n-gram k.");

}  // namespace sluice
