// Kernel choices measured on this machine: which of a few candidate algorithms ran a problem
// fastest (a convolution's shape, say), so a process measures each problem once, and with
// SLUICE_TUNING_CACHE=FILE, so later processes on the same machine do not measure again.
//
//   TuningCache& cache = TuningCache::Global();
//   if (auto known = cache.Find(key)) { use *known; }
//   else if (cache.TakeBudget()) { time the candidates; cache.Put(key, best, "direct 1.2 ms ..."); }
//
// The file holds one line per choice: the machine (CPU model, the instruction set the kernels
// use, oneDNN's version), the problem's key, the choice and what was measured. Lines of other
// machines are kept but not used; lines that do not parse are ignored. Measuring has a budget
// per process (SLUICE_TUNING_BUDGET_MS, default 3000 ms), so preparing a large model stays
// fast; past it, callers use their tables. SLUICE_TUNING=0 turns measuring off.
#ifndef SLUICE_KERNELS_TUNING_CACHE_H_
#define SLUICE_KERNELS_TUNING_CACHE_H_

#include <chrono>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

// Milliseconds from `start` to now, for timing the candidates.
inline double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

class TuningCache {
 public:
  // The process's cache: SLUICE_TUNING_CACHE's file (read on first use), or memory only.
  static TuningCache& Global();

  // `path` empty: memory only. `machine`: what choices are valid for.
  TuningCache(std::string path, std::string machine, double budget_ms, bool enabled);

  // Whether callers should measure at all (SLUICE_TUNING is not "0").
  bool enabled() const { return enabled_; }
  // The choice recorded for `key` on this machine, if any.
  std::optional<std::string> Find(const std::string& key);
  // Records `choice` for `key` (and appends it to the file); `detail` says what was measured.
  void Put(const std::string& key, const std::string& choice, const std::string& detail);
  // True while the process has measuring time left; Spend takes from it.
  bool TakeBudget();
  void Spend(double ms);
  // How many problems this process measured, and for how long in all.
  int measured() const;
  double spent_ms() const;

  // The machine key of this process: CPU model, kernel instruction set, oneDNN version.
  static std::string ThisMachine();

 private:
  void LoadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const std::string machine_;
  const double budget_ms_;
  const bool enabled_;
  mutable absl::Mutex mu_;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, std::string> choices_ ABSL_GUARDED_BY(mu_);
  double spent_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int measured_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_TUNING_CACHE_H_
