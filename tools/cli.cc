#include "tools/cli.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "google/protobuf/text_format.h"

namespace sluice {

Args::Args(int argc, char** argv) : args_(argv, argv + argc), used_(argc, false) {}

bool Args::Has(const std::string& flag) {
  bool found = false;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i] && args_[i] == flag) used_[i] = found = true;
  }
  return found;
}

std::vector<std::string> Args::TakeAll(const std::string& flag) {
  std::vector<std::string> values;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i] == flag && i + 1 < args_.size()) {
      used_[i] = used_[i + 1] = true;
      values.push_back(args_[i + 1]);
      ++i;
    } else if (absl::StartsWith(args_[i], flag + "=")) {
      used_[i] = true;
      values.push_back(args_[i].substr(flag.size() + 1));
    }
  }
  return values;
}

std::string Args::Take(const std::string& flag, const std::string& default_value) {
  std::vector<std::string> all = TakeAll(flag);
  return all.empty() ? default_value : all.back();
}

std::string Args::TakeSubverb() {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (absl::StartsWith(args_[i], "-")) return "";
    used_[i] = true;
    return args_[i];
  }
  return "";
}

absl::StatusOr<std::vector<std::string>> Args::Positional(size_t max_positional) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (absl::StartsWith(args_[i], "-")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown or incomplete flag '", args_[i], "'"));
    }
    out.push_back(args_[i]);
  }
  if (out.size() > max_positional) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", out[max_positional], "'"));
  }
  return out;
}

absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path) {
  SL_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path, "graph"));
  GraphDef def;
  if (absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt")) {
    if (!google::protobuf::TextFormat::ParseFromString(bytes, &def)) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a text-format GraphDef"));
    }
  } else if (!def.ParseFromString(bytes) ||
             !def.GetReflection()->GetUnknownFields(def).empty()) {
    // Fields a GraphDef does not have mean this is some other message (protobuf would
    // otherwise accept it as an empty graph).
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a binary GraphDef"));
  }
  if (def.node_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("GraphDef '", path, "' has no nodes"));
  }
  return def;
}

absl::StatusOr<int64_t> ParseByteSize(const std::string& text, const std::string& flag) {
  absl::string_view digits = text;
  absl::ConsumeSuffix(&digits, "iB") || absl::ConsumeSuffix(&digits, "B");
  int shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: break;
    }
    if (shift > 0) digits.remove_suffix(1);
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value <= 0 || value > (INT64_MAX >> shift)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", text, "': expected a size in bytes such as 1048576, 512M or 2G"));
  }
  return value << shift;
}

}  // namespace sluice
