// The JSON that `sluice VERB --json` prints: one document per invocation, built in order.
//
//   JsonObject out;
//   out.AddString("model", path).AddInt("iters", 20).AddDouble("median_ms", 1.25);
//   out.AddRaw("outputs", JsonArray(outputs));   // values already encoded
//   std::printf("%s\n", out.ToString().c_str());
#ifndef SLUICE_TOOLS_JSON_H_
#define SLUICE_TOOLS_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice {

// `s` as a quoted JSON string (control characters escaped; bytes >= 0x80 kept as they are).
std::string JsonString(absl::string_view s);
// A number; NaN and infinities, which JSON lacks, become null. `digits` significant digits
// (17 keeps every bit of a double, 9 of a float).
std::string JsonNumber(double v, int digits = 17);
// [a, b, ...] from values already encoded.
std::string JsonArray(const std::vector<std::string>& encoded);
std::string JsonStringArray(const std::vector<std::string>& strings);

class JsonObject {
 public:
  JsonObject& AddString(absl::string_view key, absl::string_view value);
  JsonObject& AddInt(absl::string_view key, int64_t value);
  JsonObject& AddDouble(absl::string_view key, double value, int digits = 17);
  JsonObject& AddBool(absl::string_view key, bool value);
  JsonObject& AddRaw(absl::string_view key, absl::string_view encoded);  // already JSON
  bool empty() const { return members_.empty(); }
  std::string ToString() const;  // {"key": value, ...} on one line

 private:
  std::vector<std::string> members_;
};

}  // namespace sluice

#endif  // SLUICE_TOOLS_JSON_H_
