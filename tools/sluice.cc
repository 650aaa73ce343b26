// The `sluice` command line: `sluice VERB [args]`, `sluice VERB --help`.
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "build_defs/version.h"
#include "tools/verbs.h"

namespace {

struct Verb {
  const char* summary;
  std::function<int(sluice::Args&)> run;
};

const std::map<std::string, Verb>& Verbs() {
  static const auto* verbs = new std::map<std::string, Verb>{
      {"run", {"run an ONNX model or a GraphDef; tensors are ONNX TensorProto files", sluice::RunVerb}},
      {"test-onnx", {"run ONNX backend test cases and compare with their outputs", sluice::TestOnnxVerb}},
      {"convert", {"convert an ONNX model to a GraphDef (.pb/.pbtxt) or a Graphviz view of its partitions", sluice::ConvertVerb}},
      {"bench", {"time runs of an ONNX model; ends with one JSON line", sluice::BenchVerb}},
      {"train", {"train an ONNX model through its TrainingInfoProto", sluice::TrainVerb}},
      {"serve", {"run one task of a cluster (worker and master over gRPC) until SIGTERM", sluice::ServeVerb}},
      {"onnx", {"ONNX model utilities: check, extract, set-dims, externalize, internalize", sluice::OnnxToolVerb}},
  };
  return *verbs;
}

void PrintHelp(FILE* out) {
  std::fprintf(out,
               "usage: sluice VERB [args]    (sluice VERB --help for a verb's options)\n"
               "       sluice --version\n\nverbs:\n");
  for (const auto& [name, verb] : Verbs()) std::fprintf(out, "  %-10s %s\n", name.c_str(), verb.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help") ||
      !std::strcmp(argv[1], "-h")) {
    PrintHelp(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::printf("sluice %s\n", SLUICE_VERSION);
    return 0;
  }
  auto it = Verbs().find(argv[1]);
  if (it == Verbs().end()) {
    std::fprintf(stderr, "sluice: unknown verb '%s'\n", argv[1]);
    PrintHelp(stderr);
    return 2;
  }
  sluice::Args args(argc - 2, argv + 2);
  return it->second.run(args);
}
