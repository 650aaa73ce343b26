// Small helpers shared by the `sluice` verbs: argument scanning and file loading.
//
//   Args args(argc, argv);                   // after the verb
//   std::vector<std::string> inputs = args.TakeAll("--input");
//   std::string out = args.Take("--output-dir", "out");
//   SL_RETURN_IF_ERROR(args.CheckNoneLeft(1));  // one positional argument allowed
#ifndef SLUICE_TOOLS_CLI_H_
#define SLUICE_TOOLS_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace sluice {

class Args {
 public:
  Args(int argc, char** argv);
  bool Has(const std::string& flag);            // Consumes a boolean flag.
  std::string Take(const std::string& flag, const std::string& default_value = "");
  std::vector<std::string> TakeAll(const std::string& flag);  // Repeated "--flag V" / "--flag=V".
  std::string TakeSubverb();  // The first argument if it is not a flag ("" otherwise), consumed.
  // Positional arguments left; errors on unknown flags or more than `max_positional`.
  absl::StatusOr<std::vector<std::string>> Positional(size_t max_positional);

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

// Binary GraphDef, or text format for .pbtxt/.txt files.
absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path);

// "1048576", "512K", "64M", "2G", "1T" (also "2GiB", "2GB": powers of 1024) as bytes, > 0;
// INVALID_ARGUMENT naming `flag` otherwise.
absl::StatusOr<int64_t> ParseByteSize(const std::string& text, const std::string& flag);

}  // namespace sluice

#endif  // SLUICE_TOOLS_CLI_H_
