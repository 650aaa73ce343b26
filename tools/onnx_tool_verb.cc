// `sluice onnx SUBVERB`: ONNX model utilities (check, convert-version, extract, set-dims,
// externalize, internalize) over frontend/onnx/model_tools.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/status.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/model_tools.h"
#include "tools/json.h"
#include "tools/verbs.h"

namespace sluice {
namespace {

constexpr char kHelp[] = R"(usage: sluice onnx SUBVERB [args]    (sluice onnx SUBVERB --help for its options)

Utilities for ONNX model files, the everyday ones of Python's onnx package without Python.
External data is read through Sluice's loader: locations must stay inside the model's folder.

Every subverb takes --json: one JSON object on stdout instead of its line (errors still go to
stderr). check prints {"model", "ok", "message"}; convert-version, extract, set-dims and
internalize print
{"file", "nodes", "initializers", "inputs": [{"name", "dims"}], "outputs": [...]} (dims: a
number, a name, or null per dim; null for an unknown rank); externalize prints
{"file", "tensors", "bytes", "files": [...]}.

subverbs:
  check        run the ONNX checker (with --full, strict shape inference too)
  convert-version  convert the model to another ai.onnx opset (ONNX's version converter)
  extract      write the sub-model between given input and output tensors
  set-dims     set the dims of graph inputs and outputs and infer shapes again
  externalize  move large tensors to external data files next to the model
  internalize  load all external data back into one self-contained model file
)";

constexpr char kCheckHelp[] = R"(usage: sluice onnx check MODEL.onnx [--full]

Runs the ONNX checker on the model (external data loaded first). Prints "OK" and exits 0, or
prints the checker's message and exits 1.

options:
  --full   also strict shape inference with type checks (as onnx.checker.check_model(model,
           full_check=True))
  --json   print {"model": MODEL, "ok": true|false, "message": the checker's message}
  --help   this text
)";

constexpr char kConvertVersionHelp[] = R"(usage: sluice onnx convert-version MODEL.onnx OUT.onnx --opset N

Converts the model to ai.onnx opset N with ONNX 1.17's version converter (as
onnx.version_converter.convert_version): each node is rewritten by the converter's adapters,
opset by opset, up or down. The model must pass the ONNX checker first. N is 1 to 22;
ir_version stays as it was. A node the converter has no adapter for is an error naming it.

options:
  --opset N   the ai.onnx opset to convert to (required)
  --json      print {"file", "opset", "nodes", "initializers", "inputs", "outputs"}
  --help      this text
)";

constexpr char kExtractHelp[] = R"(usage: sluice onnx extract MODEL.onnx -i NAMES -o NAMES OUT.onnx

Writes the sub-model that computes the output tensors from the input tensors, like
onnx.utils.extract_model: the nodes on the way (in the model's order), the initializers they
read, and value_info from shape inference. Any tensor of the main graph may be named,
intermediate ones included. An output that needs a tensor which is neither computed from the
inputs nor an initializer is an error naming that tensor.

options:
  -i NAMES   the sub-model's inputs, comma-separated (repeatable; -i '' for none)
  -o NAMES   its outputs, comma-separated (repeatable)
  --help     this text
)";

constexpr char kSetDimsHelp[] = R"(usage: sluice onnx set-dims MODEL.onnx OUT.onnx --input NAME=DIMS ... --output NAME=DIMS ...

Sets the dims of graph inputs and outputs, like onnx.tools.update_model_dims, then runs shape
inference again (stale value_info is dropped; outputs not named get the inferred shapes).
DIMS is comma-separated: an integer for a fixed dim, a name for a symbolic one (N,3,H,W), -1 or
? for an unknown dim (it gets the fresh name NAME_AXIS); empty DIMS is a scalar. The rank must
be the model's. New dims that contradict the model (as shape inference sees it) are an error.

options:
  --input NAME=DIMS    dims of the graph input NAME (repeatable)
  --output NAME=DIMS   dims of the graph output NAME (repeatable)
  --help               this text
)";

constexpr char kExternalizeHelp[] = R"(usage: sluice onnx externalize MODEL.onnx OUT.onnx [--threshold BYTES] [--one-file NAME | --file-per-tensor]

Writes OUT.onnx with every initializer and tensor attribute (Constant values, subgraphs
included) of at least BYTES bytes moved to external data files next to it, like
onnx.external_data_helper.convert_model_to_external_data. Locations are recorded relative to
OUT's folder, with offset and length.

options:
  --threshold BYTES   smallest tensor to move, in bytes of data (default 1024)
  --one-file NAME     the one data file's name, relative to OUT's folder (default
                      OUT.onnx.data); each tensor starts at a 4096-aligned offset
  --file-per-tensor   one file per tensor, named after the tensor
  --help              this text
)";

constexpr char kInternalizeHelp[] = R"(usage: sluice onnx internalize MODEL.onnx OUT.onnx

Loads all of the model's external data and writes one self-contained OUT.onnx. Locations that
are absolute, climb out of the model's folder ('..') or pass through a symbolic link are
refused. Models past protobuf's 2 GiB limit cannot be one file.

options:
  --help   this text
)";

int Usage(const char* sub, const std::string& why, const char* help) {
  std::fprintf(stderr, "sluice onnx %s: %s\n%s", sub, why.c_str(), help);
  return 2;
}

int Fail(const char* sub, const absl::Status& s) {
  std::fprintf(stderr, "sluice onnx %s: %s\n", sub, StatusToString(s).c_str());
  return 1;
}

// Exactly `n` positional arguments, or the reason why not.
absl::StatusOr<std::vector<std::string>> Positionals(Args& args, size_t n, const char* what) {
  SL_ASSIGN_OR_RETURN(std::vector<std::string> p, args.Positional(n));
  if (p.size() != n) return absl::InvalidArgumentError(absl::StrCat("expected ", what));
  return p;
}

std::string Describe(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type()) return vi.name();
  const auto& tt = vi.type().tensor_type();
  if (!tt.has_shape()) return absl::StrCat(vi.name(), " [unknown rank]");
  std::vector<std::string> dims;
  for (const auto& d : tt.shape().dim()) {
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  }
  return absl::StrCat(vi.name(), " [", absl::StrJoin(dims, ","), "]");
}

// {"name", "dims": [3, "N", null]}; dims null for an unknown rank or a non-tensor.
std::string DescribeJson(const onnx::ValueInfoProto& vi) {
  JsonObject o;
  o.AddString("name", vi.name());
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return o.AddRaw("dims", "null").ToString();
  std::vector<std::string> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? JsonString(d.dim_param()) : "null");
  }
  return o.AddRaw("dims", JsonArray(dims)).ToString();
}

// `opset`: the ai.onnx opset the model was converted to, reported when > 0.
void PrintWritten(const std::string& path, const onnx::ModelProto& m, bool json, int opset = 0) {
  if (json) {
    std::vector<std::string> ins, outs;
    for (const auto& vi : m.graph().input()) ins.push_back(DescribeJson(vi));
    for (const auto& vi : m.graph().output()) outs.push_back(DescribeJson(vi));
    JsonObject o;
    o.AddString("file", path);
    if (opset > 0) o.AddInt("opset", opset);
    o.AddInt("nodes", m.graph().node_size())
        .AddInt("initializers", m.graph().initializer_size())
        .AddRaw("inputs", JsonArray(ins))
        .AddRaw("outputs", JsonArray(outs));
    std::printf("%s\n", o.ToString().c_str());
    return;
  }
  std::vector<std::string> ins, outs;
  for (const auto& vi : m.graph().input()) ins.push_back(Describe(vi));
  for (const auto& vi : m.graph().output()) outs.push_back(Describe(vi));
  const std::string converted = opset > 0 ? absl::StrCat("opset ", opset, ", ") : "";
  std::printf("wrote %s: %s%d nodes, %d initializers; inputs %s; outputs %s\n", path.c_str(), converted.c_str(),
              m.graph().node_size(), m.graph().initializer_size(), absl::StrJoin(ins, ", ").c_str(),
              absl::StrJoin(outs, ", ").c_str());
}

int Check(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kCheckHelp), 0;
  const bool full = args.Has("--full");
  const bool json = args.Has("--json");
  auto p = Positionals(args, 1, "one MODEL.onnx");
  if (!p.ok()) return Usage("check", std::string(p.status().message()), kCheckHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("check", model.status());
  absl::Status s = CheckOnnxModel(*model, full);
  const std::string message(absl::StripTrailingAsciiWhitespace(s.message()));
  if (json) {
    std::printf("%s\n", JsonObject()
                            .AddString("model", (*p)[0])
                            .AddBool("ok", s.ok())
                            .AddString("message", message)
                            .ToString()
                            .c_str());
  } else {
    std::printf("%s\n", s.ok() ? "OK" : message.c_str());
  }
  return s.ok() ? 0 : 1;
}

int ConvertVersion(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kConvertVersionHelp), 0;
  const bool json = args.Has("--json");
  const std::string opset_flag = args.Take("--opset");
  int opset = 0;
  if (opset_flag.empty()) return Usage("convert-version", "no --opset N", kConvertVersionHelp);
  if (!absl::SimpleAtoi(opset_flag, &opset)) {
    return Usage("convert-version", absl::StrCat("bad --opset '", opset_flag, "'"), kConvertVersionHelp);
  }
  auto p = Positionals(args, 2, "MODEL.onnx and OUT.onnx");
  if (!p.ok()) return Usage("convert-version", std::string(p.status().message()), kConvertVersionHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("convert-version", model.status());
  auto converted = ConvertOnnxVersion(std::move(*model), opset);
  if (!converted.ok()) return Fail("convert-version", converted.status());
  absl::Status s = SaveOnnxModel(*converted, (*p)[1]);
  if (!s.ok()) return Fail("convert-version", s);
  PrintWritten((*p)[1], *converted, json, opset);
  return 0;
}

std::vector<std::string> SplitNames(const std::vector<std::string>& flags) {
  std::vector<std::string> names;
  for (const std::string& f : flags) {
    for (absl::string_view n : absl::StrSplit(f, ',', absl::SkipWhitespace())) names.emplace_back(n);
  }
  return names;
}

int Extract(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kExtractHelp), 0;
  const bool json = args.Has("--json");
  std::vector<std::string> in_flags = args.TakeAll("-i"), out_flags = args.TakeAll("-o");
  auto p = Positionals(args, 2, "MODEL.onnx and OUT.onnx");
  if (!p.ok()) return Usage("extract", std::string(p.status().message()), kExtractHelp);
  if (in_flags.empty()) return Usage("extract", "no -i NAMES (use -i '' for a sub-model without inputs)", kExtractHelp);
  std::vector<std::string> outputs = SplitNames(out_flags);
  if (outputs.empty()) return Usage("extract", "no -o NAMES", kExtractHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("extract", model.status());
  auto sub = ExtractOnnxModel(*model, SplitNames(in_flags), outputs);
  if (!sub.ok()) return Fail("extract", sub.status());
  absl::Status s = SaveOnnxModel(*sub, (*p)[1]);
  if (!s.ok()) return Fail("extract", s);
  PrintWritten((*p)[1], *sub, json);
  return 0;
}

int SetDims(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kSetDimsHelp), 0;
  const bool json = args.Has("--json");
  OnnxDimsByName specs[2];
  const char* flags[2] = {"--input", "--output"};
  for (int k = 0; k < 2; ++k) {
    for (const std::string& spec : args.TakeAll(flags[k])) {
      size_t eq = spec.rfind('=');
      if (eq == std::string::npos || eq == 0) {
        return Usage("set-dims", absl::StrCat("bad ", flags[k], " '", spec, "': want NAME=DIMS"), kSetDimsHelp);
      }
      auto dims = ParseOnnxDims(absl::string_view(spec).substr(eq + 1));
      if (!dims.ok()) return Usage("set-dims", std::string(dims.status().message()), kSetDimsHelp);
      specs[k].emplace_back(spec.substr(0, eq), std::move(*dims));
    }
  }
  auto p = Positionals(args, 2, "MODEL.onnx and OUT.onnx");
  if (!p.ok()) return Usage("set-dims", std::string(p.status().message()), kSetDimsHelp);
  if (specs[0].empty() && specs[1].empty()) return Usage("set-dims", "no --input or --output dims given", kSetDimsHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("set-dims", model.status());
  absl::Status s = SetOnnxDims(specs[0], specs[1], &*model);
  if (s.ok()) s = SaveOnnxModel(*model, (*p)[1]);
  if (!s.ok()) return Fail("set-dims", s);
  PrintWritten((*p)[1], *model, json);
  return 0;
}

int Externalize(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kExternalizeHelp), 0;
  const bool json = args.Has("--json");
  ExternalizeOptions options;
  std::string threshold = args.Take("--threshold");
  if (!threshold.empty() && (!absl::SimpleAtoi(threshold, &options.threshold) || options.threshold < 0)) {
    return Usage("externalize", absl::StrCat("bad --threshold '", threshold, "'"), kExternalizeHelp);
  }
  options.location = args.Take("--one-file");
  options.file_per_tensor = args.Has("--file-per-tensor");
  if (options.file_per_tensor && !options.location.empty()) {
    return Usage("externalize", "--one-file and --file-per-tensor exclude each other", kExternalizeHelp);
  }
  auto p = Positionals(args, 2, "MODEL.onnx and OUT.onnx");
  if (!p.ok()) return Usage("externalize", std::string(p.status().message()), kExternalizeHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("externalize", model.status());
  auto summary = SaveOnnxModelExternal(std::move(*model), (*p)[1], options);
  if (!summary.ok()) return Fail("externalize", summary.status());
  if (json) {
    std::printf("%s\n", JsonObject()
                            .AddString("file", (*p)[1])
                            .AddInt("tensors", summary->tensors)
                            .AddInt("bytes", summary->bytes)
                            .AddRaw("files", JsonStringArray(summary->files))
                            .ToString()
                            .c_str());
    return 0;
  }
  std::printf("wrote %s: %d tensor%s (%lld bytes) in %zu external file%s%s%s\n", (*p)[1].c_str(), summary->tensors,
              summary->tensors == 1 ? "" : "s", static_cast<long long>(summary->bytes), summary->files.size(), summary->files.size() == 1 ? "" : "s",
              summary->files.empty() || summary->files.size() > 3 ? "" : ": ",
              summary->files.size() > 3 ? "" : absl::StrJoin(summary->files, ", ").c_str());
  return 0;
}

int Internalize(Args& args) {
  if (args.Has("--help")) return std::printf("%s", kInternalizeHelp), 0;
  const bool json = args.Has("--json");
  auto p = Positionals(args, 2, "MODEL.onnx and OUT.onnx");
  if (!p.ok()) return Usage("internalize", std::string(p.status().message()), kInternalizeHelp);
  auto model = LoadOnnxModel((*p)[0]);
  if (!model.ok()) return Fail("internalize", model.status());
  absl::Status s = SaveOnnxModel(*model, (*p)[1]);
  if (!s.ok()) return Fail("internalize", s);
  PrintWritten((*p)[1], *model, json);
  return 0;
}

}  // namespace

int OnnxToolVerb(Args& args) {
  static const auto* subverbs = new std::map<std::string, int (*)(Args&)>{
      {"check", Check}, {"convert-version", ConvertVersion}, {"extract", Extract}, {"set-dims", SetDims},
      {"externalize", Externalize}, {"internalize", Internalize},
  };
  std::string sub = args.TakeSubverb();
  if (sub.empty() || sub == "help") {
    if (sub == "help" || args.Has("--help") || args.Has("-h")) return std::printf("%s", kHelp), 0;
    std::fprintf(stderr, "sluice onnx: expected a subverb\n%s", kHelp);
    return 2;
  }
  auto it = subverbs->find(sub);
  if (it == subverbs->end()) {
    std::fprintf(stderr, "sluice onnx: unknown subverb '%s'\n%s", sub.c_str(), kHelp);
    return 2;
  }
  return it->second(args);
}

}  // namespace sluice
