#include "master/test_graphs.h"

#include "absl/strings/str_replace.h"
#include "google/protobuf/text_format.h"

namespace sluice {

namespace {

constexpr char kCountingLoop[] = R"(
  node { name: "m" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
  node { name: "x0" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 0 } } } }
  node { name: "loop" op: "Onnx>Loop" input: "m" input: "x0" device: "LOOP_DEVICE"
         attr { key: "Tm" value { list { type: DT_INT64 } } }
         attr { key: "Tc" value { list { } } }
         attr { key: "Tloop" value { list { type: DT_FLOAT } } }
         attr { key: "Tcap" value { list { } } }
         attr { key: "Tout" value { list { type: DT_FLOAT } } }
         attr { key: "body" value { func { name: "count" } } } }
  node { name: "out" op: "Neg" input: "loop" device: "OUT_DEVICE"
         attr { key: "T" value { type: DT_FLOAT } } }
  library { function {
    signature { name: "count"
                input_arg { name: "i" type: DT_INT64 } input_arg { name: "c" type: DT_BOOL }
                input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "rc" type: DT_BOOL } output_arg { name: "rx" type: DT_FLOAT } }
    node_def { name: "i" op: "_Arg" attr { key: "T" value { type: DT_INT64 } }
               attr { key: "index" value { i: 0 } } }
    node_def { name: "c" op: "_Arg" attr { key: "T" value { type: DT_BOOL } }
               attr { key: "index" value { i: 1 } } }
    node_def { name: "x" op: "_Arg" attr { key: "T" value { type: DT_FLOAT } }
               attr { key: "index" value { i: 2 } } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
    node_def { name: "next" op: "Add" input: "x" input: "one"
               attr { key: "T" value { type: DT_FLOAT } } }
    node_def { name: "rc" op: "_Retval" input: "c" attr { key: "T" value { type: DT_BOOL } }
               attr { key: "index" value { i: 0 } } }
    node_def { name: "rx" op: "_Retval" input: "next" attr { key: "T" value { type: DT_FLOAT } }
               attr { key: "index" value { i: 1 } } }
  } }
)";

}  // namespace

GraphDef CountingLoopGraph(const std::string& loop_device, const std::string& out_device) {
  GraphDef def;
  google::protobuf::TextFormat::ParseFromString(
      absl::StrReplaceAll(kCountingLoop, {{"LOOP_DEVICE", loop_device}, {"OUT_DEVICE", out_device}}),
      &def);
  return def;
}

}  // namespace sluice
