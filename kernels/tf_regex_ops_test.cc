// StaticRegexReplace and RegexReplace (tf_regex_ops.cc) on strings worked by hand.
#include <string>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

TEST(StaticRegexReplaceTest, GlobalAndFirstOnly) {
  KernelTester all("StaticRegexReplace");
  all.Attr("pattern", std::string("test")).Attr("rewrite", std::string("result"));
  all.Input<tstring>({2, 2}, {"this", "is", "a", "test test"});
  ASSERT_OK(all.Run());  // replace_global defaults to true.
  all.ExpectOutput<tstring>(0, {2, 2}, {"this", "is", "a", "result result"});

  KernelTester first("StaticRegexReplace");
  first.Attr("pattern", std::string("test")).Attr("rewrite", std::string("result")).Attr("replace_global", false);
  first.Input<tstring>({2}, {"test test", ""});
  ASSERT_OK(first.Run());
  first.ExpectOutput<tstring>(0, {2}, {"result test", ""});
}

TEST(StaticRegexReplaceTest, GroupsInTheRewrite) {
  // \2-\1 swaps the two groups; \0 is the whole match.
  KernelTester swap("StaticRegexReplace");
  swap.Attr("pattern", std::string("(\\w+)@(\\w+)")).Attr("rewrite", std::string("\\2-\\1 [\\0]"));
  swap.Input<tstring>({}, {"mail a@b and c@d"});
  ASSERT_OK(swap.Run());
  swap.ExpectOutput<tstring>(0, {}, {"mail b-a [a@b] and d-c [c@d]"});
}

TEST(StaticRegexReplaceTest, BadPatternOrRewrite) {
  KernelTester pattern("StaticRegexReplace");
  pattern.Attr("pattern", std::string("(unclosed")).Attr("rewrite", std::string("x"));
  pattern.Input<tstring>({1}, {"a"});
  ExpectInvalid(pattern, "StaticRegexReplace: invalid pattern");

  KernelTester rewrite("StaticRegexReplace");  // One group, \2 named.
  rewrite.Attr("pattern", std::string("(a)")).Attr("rewrite", std::string("\\2"));
  rewrite.Input<tstring>({1}, {"a"});
  ExpectInvalid(rewrite, "StaticRegexReplace: invalid rewrite");
}

TEST(RegexReplaceTest, PatternAndRewriteAsInputs) {
  KernelTester t("RegexReplace");
  t.Input<tstring>({3}, {"a1b22", "none", "333"}).Input<tstring>({}, {"[0-9]+"}).Input<tstring>({}, {"#"});
  ASSERT_OK(t.Run());
  t.ExpectOutput<tstring>(0, {3}, {"a#b#", "none", "#"});

  KernelTester first("RegexReplace");
  first.Attr("replace_global", false);
  first.Input<tstring>({1}, {"a1b22"}).Input<tstring>({}, {"[0-9]+"}).Input<tstring>({}, {"<\\0>"});
  ASSERT_OK(first.Run());
  first.ExpectOutput<tstring>(0, {1}, {"a<1>b22"});

  KernelTester vector_pattern("RegexReplace");
  vector_pattern.Input<tstring>({1}, {"a"}).Input<tstring>({1}, {"a"}).Input<tstring>({}, {"b"});
  ExpectInvalid(vector_pattern, "must be scalars");

  KernelTester bad("RegexReplace");
  bad.Input<tstring>({1}, {"a"}).Input<tstring>({}, {"a**"}).Input<tstring>({}, {"b"});
  ExpectInvalid(bad, "RegexReplace: invalid pattern");
}

TEST(RegexFullMatchTest, WholeStringsOnly) {
  KernelTester t("StaticRegexFullMatch");  // As TensorFlow 2's checkpoint save function asks.
  t.Attr("pattern", std::string("^s3://.*"));
  t.Input<tstring>({3}, {"s3://bucket/ckpt", "/tmp/s3://x", ""});
  ASSERT_OK(t.Run());
  t.ExpectOutput<bool>(0, {3}, {true, false, false});

  KernelTester in("RegexFullMatch");
  in.Input<tstring>({2}, {"abc", "abcd"}).Input<tstring>({}, {"a.c"});
  ASSERT_OK(in.Run());
  in.ExpectOutput<bool>(0, {2}, {true, false});

  KernelTester bad("StaticRegexFullMatch");
  bad.Attr("pattern", std::string("(")).Input<tstring>({1}, {"a"});
  ExpectInvalid(bad, "StaticRegexFullMatch: invalid pattern");
}

}  // namespace
}  // namespace sluice
