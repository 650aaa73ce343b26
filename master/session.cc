// NewSession and the registry of session kinds.
#include "master/session.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace sluice {
namespace {

struct SessionKind {
  std::string example;
  SessionFactory factory;
};

struct SessionRegistry {
  absl::Mutex mu;
  std::map<std::string, SessionKind> kinds ABSL_GUARDED_BY(mu);  // By target prefix.
};

SessionRegistry& Registry() {
  static SessionRegistry* registry = new SessionRegistry;  // Never destroyed: used at exit.
  return *registry;
}

}  // namespace

bool RegisterSessionFactory(const std::string& target_prefix, const std::string& example,
                            SessionFactory factory) {
  SessionRegistry& r = Registry();
  absl::MutexLock lock(&r.mu);
  r.kinds[target_prefix] = SessionKind{example, std::move(factory)};
  return true;
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  SessionFactory factory;
  std::vector<std::string> examples;
  {
    SessionRegistry& r = Registry();
    absl::MutexLock lock(&r.mu);
    for (const auto& [prefix, kind] : r.kinds) {
      examples.push_back(kind.example);
      const bool match = prefix.empty() ? options.target.empty()
                                        : absl::StartsWith(options.target, prefix);
      if (match) factory = kind.factory;
    }
  }
  if (factory == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown session target '", options.target,
                                                   "' (use ", absl::StrJoin(examples, " or "),
                                                   ")"));
  }
  return factory(options);
}

}  // namespace sluice
