#include "kernels/tuning_cache.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kernels/cpu_isa.h"
#include "oneapi/dnnl/dnnl.h"

namespace sluice {
namespace {

// Longer lines are not choices this code wrote (a damaged or hostile file): ignored.
constexpr size_t kMaxLineBytes = 4096;
// A file past this is not read (nor appended to): its choices are measured again.
constexpr std::streamoff kMaxFileBytes = 16 << 20;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "unknown CPU";
}

}  // namespace

std::string TuningCache::ThisMachine() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat(CpuModel(), "|", CpuIsaName(MaxCpuIsa()), "|onednn ", v->major, ".", v->minor, ".", v->patch);
}

TuningCache& TuningCache::Global() {
  static TuningCache* cache = [] {
    const char* path = std::getenv("SLUICE_TUNING_CACHE");
    const char* budget = std::getenv("SLUICE_TUNING_BUDGET_MS");
    const char* enabled = std::getenv("SLUICE_TUNING");
    double budget_ms = 3000;
    if (budget != nullptr && (!absl::SimpleAtod(budget, &budget_ms) || budget_ms < 0)) {
      std::fprintf(stderr, "sluice: SLUICE_TUNING_BUDGET_MS='%s' is not a number of milliseconds; using 3000\n",
                   budget);
      budget_ms = 3000;
    }
    return new TuningCache(path == nullptr ? "" : path, ThisMachine(), budget_ms,
                           enabled == nullptr || std::string(enabled) != "0");
  }();
  return *cache;
}

TuningCache::TuningCache(std::string path, std::string machine, double budget_ms, bool enabled)
    : path_(std::move(path)), machine_(std::move(machine)), budget_ms_(budget_ms), enabled_(enabled) {}

void TuningCache::LoadLocked() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() > kMaxFileBytes) return;  // Missing (made by the first Put) or too large.
  in.seekg(0);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > kMaxLineBytes) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() < 3 || fields[0] != machine_ || fields[1].empty() || fields[2].empty()) continue;
    choices_[fields[1]] = fields[2];  // A later line for the same key wins.
  }
}

std::optional<std::string> TuningCache::Find(const std::string& key) {
  absl::MutexLock lock(&mu_);
  LoadLocked();
  auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void TuningCache::Put(const std::string& key, const std::string& choice, const std::string& detail) {
  absl::MutexLock lock(&mu_);
  LoadLocked();
  choices_[key] = choice;
  ++measured_;
  if (path_.empty() || key.find_first_of("\t\n") != std::string::npos ||
      choice.find_first_of("\t\n") != std::string::npos) {
    return;
  }
  std::ifstream existing(path_, std::ios::binary | std::ios::ate);
  if (existing && existing.tellg() > kMaxFileBytes) return;
  // One write per line, appended: processes that tune at once interleave whole lines.
  const std::string line = absl::StrCat(machine_, "\t", key, "\t", choice, "\t", detail, "\n");
  if (line.size() > kMaxLineBytes) return;
  if (FILE* f = std::fopen(path_.c_str(), "a")) {
    std::setvbuf(f, nullptr, _IOFBF, kMaxLineBytes * 2);
    std::fputs(line.c_str(), f);
    std::fclose(f);
  }
}

bool TuningCache::TakeBudget() {
  absl::MutexLock lock(&mu_);
  return enabled_ && spent_ms_ < budget_ms_;
}

void TuningCache::Spend(double ms) {
  absl::MutexLock lock(&mu_);
  spent_ms_ += ms;
}

int TuningCache::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

double TuningCache::spent_ms() const {
  absl::MutexLock lock(&mu_);
  return spent_ms_;
}

}  // namespace sluice
