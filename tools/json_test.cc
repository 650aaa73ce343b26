#include "tools/json.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(JsonTest, EscapesStringsForJson) {
  EXPECT_EQ(JsonString("a\"b\\c\nd\te\x01"), R"("a\"b\\c\nd\te\u0001")");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through.
}

TEST(JsonTest, NumbersKeepTheirDigitsAndNonFiniteOnesBecomeNull) {
  EXPECT_EQ(JsonNumber(0.1), "0.10000000000000001");
  EXPECT_EQ(JsonNumber(0.1f, 9), "0.100000001");
  EXPECT_EQ(JsonNumber(20.5), "20.5");
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonTest, ObjectsKeepTheOrderMembersWereAdded) {
  JsonObject o;
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(o.ToString(), "{}");
  o.AddString("model", "m.onnx").AddInt("iters", -3).AddBool("ok", true).AddDouble("ms", 1.5);
  o.AddRaw("files", JsonStringArray({"a", "b"})).AddRaw("none", JsonArray({}));
  EXPECT_EQ(o.ToString(),
            R"({"model": "m.onnx", "iters": -3, "ok": true, "ms": 1.5, "files": ["a", "b"], "none": []})");
}

}  // namespace
}  // namespace sluice
