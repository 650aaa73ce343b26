#include "tools/json.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace sluice {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v, int digits) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.*g", digits, v);
}

std::string JsonArray(const std::vector<std::string>& encoded) {
  return absl::StrCat("[", absl::StrJoin(encoded, ", "), "]");
}

std::string JsonStringArray(const std::vector<std::string>& strings) {
  std::vector<std::string> encoded;
  for (const std::string& s : strings) encoded.push_back(JsonString(s));
  return JsonArray(encoded);
}

JsonObject& JsonObject::AddString(absl::string_view key, absl::string_view value) {
  return AddRaw(key, JsonString(value));
}

JsonObject& JsonObject::AddInt(absl::string_view key, int64_t value) {
  return AddRaw(key, absl::StrCat(value));
}

JsonObject& JsonObject::AddDouble(absl::string_view key, double value, int digits) {
  return AddRaw(key, JsonNumber(value, digits));
}

JsonObject& JsonObject::AddBool(absl::string_view key, bool value) {
  return AddRaw(key, value ? "true" : "false");
}

JsonObject& JsonObject::AddRaw(absl::string_view key, absl::string_view encoded) {
  members_.push_back(absl::StrCat(JsonString(key), ": ", encoded));
  return *this;
}

std::string JsonObject::ToString() const { return absl::StrCat("{", absl::StrJoin(members_, ", "), "}"); }

}  // namespace sluice
