#include "training/checkpoint.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "framework/file_util.h"

namespace sluice {
namespace {

constexpr int kKept = 2;

std::string Sha256(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string Base(const std::string& dir, int64_t step) {
  return absl::StrFormat("%s/ckpt-%08d", dir, step);
}

// The manifests in `dir`, by step (most recent first).
std::map<int64_t, std::string, std::greater<int64_t>> Manifests(const std::string& dir) {
  std::map<int64_t, std::string, std::greater<int64_t>> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    absl::string_view n = name;
    int64_t step;
    if (absl::ConsumePrefix(&n, "ckpt-") && absl::ConsumeSuffix(&n, ".json") && absl::SimpleAtoi(n, &step)) {
      out[step] = entry.path().string();
    }
  }
  return out;
}

// `"key": value` of a one-line JSON object written by WriteCheckpoint.
std::string Field(const std::string& json, const std::string& key) {
  const std::string quoted = absl::StrCat("\"", key, "\": ");
  const size_t at = json.find(quoted);
  if (at == std::string::npos) return "";
  size_t start = at + quoted.size();
  size_t end = json.find_first_of(",}", start);
  std::string value = json.substr(start, end == std::string::npos ? std::string::npos : end - start);
  absl::string_view v = absl::StripAsciiWhitespace(value);
  absl::ConsumePrefix(&v, "\"");
  absl::ConsumeSuffix(&v, "\"");
  return std::string(v);
}

std::string ReadAll(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return s.str();
}

}  // namespace

absl::Status WriteCheckpoint(const std::string& dir, int64_t step, const std::string& model_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create '", dir, "': ", ec.message()));
  const std::string base = Base(dir, step);
  const std::string model = base + ".onnx";
  if (absl::Status s = WriteFileAtomically(model, model_bytes); !s.ok()) return s;
  const std::string manifest = absl::StrFormat(
      "{\"step\": %d, \"file\": \"%s\", \"bytes\": %d, \"sha256\": \"%s\"}\n", step,
      std::filesystem::path(model).filename().string(), model_bytes.size(), Sha256(model_bytes));
  if (absl::Status s = WriteFileAtomically(base + ".json", manifest); !s.ok()) return s;
  int kept = 0;
  for (const auto& [old_step, path] : Manifests(dir)) {
    if (++kept <= kKept) continue;
    std::filesystem::remove(path, ec);  // The manifest first: the checkpoint is then gone whole.
    std::filesystem::remove(Base(dir, old_step) + ".onnx", ec);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Checkpoint>> FindCheckpoint(const std::string& dir,
                                                        std::vector<std::string>* skipped) {
  for (const auto& [step, manifest_path] : Manifests(dir)) {
    bool ok = false;
    const std::string manifest = ReadAll(manifest_path, &ok);
    const std::string model = absl::StrCat(dir, "/", Field(manifest, "file"));
    int64_t bytes = -1, stated_step = -1;
    if (!ok || !absl::SimpleAtoi(Field(manifest, "bytes"), &bytes) ||
        !absl::SimpleAtoi(Field(manifest, "step"), &stated_step) || stated_step != step ||
        Field(manifest, "sha256").size() != 64 || Field(manifest, "file").find('/') != std::string::npos) {
      skipped->push_back(absl::StrCat("'", manifest_path, "' is not a checkpoint manifest"));
      continue;
    }
    const std::string content = ReadAll(model, &ok);
    if (!ok || !std::filesystem::exists(model)) {
      skipped->push_back(absl::StrCat("'", model, "' (step ", step, ") is missing"));
      continue;
    }
    if (static_cast<int64_t>(content.size()) != bytes) {
      skipped->push_back(absl::StrCat("'", model, "' (step ", step, ") holds ", content.size(),
                                      " bytes where its manifest says ", bytes, ": truncated"));
      continue;
    }
    if (Sha256(content) != Field(manifest, "sha256")) {
      skipped->push_back(absl::StrCat("'", model, "' (step ", step,
                                      ") does not match its manifest's SHA-256: corrupted"));
      continue;
    }
    return Checkpoint{step, model};
  }
  return std::optional<Checkpoint>();
}

}  // namespace sluice
