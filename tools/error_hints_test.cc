#include "tools/error_hints.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ErrorHintsTest, MissingFeedNamesTheFlag) {
  absl::Status s = absl::InvalidArgumentError(
      "node 'x' (op 'Placeholder'): You must feed a value for placeholder tensor 'x' with dtype float");
  EXPECT_THAT(ErrorHints(s, {}), ElementsAre("pass it with --input x=FILE.pb"));
  ErrorHintContext train;
  train.input_flag = "--feed";
  EXPECT_THAT(ErrorHints(absl::InvalidArgumentError("step 1: no value for input 't'"), train),
              ElementsAre("pass it with --feed t=FILE.pb"));
}

TEST(ErrorHintsTest, UnknownInputListsTheModelsInputs) {
  ErrorHintContext context;
  context.input_names = {"x", "mask"};
  EXPECT_THAT(ErrorHints(absl::InvalidArgumentError("the model has no input named 'foo'"), context),
              ElementsAre("the model's inputs are: x, mask"));
  EXPECT_THAT(ErrorHints(absl::InvalidArgumentError(
                             "feed 'foo:0' names node 'foo', which is not in the graph"),
                         context),
              ElementsAre("the model's inputs are: x, mask"));
  EXPECT_THAT(ErrorHints(absl::InvalidArgumentError("the model has no input named 'foo'"), {}), IsEmpty());
}

TEST(ErrorHintsTest, UnreachableTargetOnlyWithATarget) {
  absl::Status s = absl::UnavailableError("master at grpc://h:1: failed to connect");
  EXPECT_THAT(ErrorHints(s, {}), IsEmpty());
  ErrorHintContext context;
  context.target = "grpc://h:1";
  ASSERT_EQ(ErrorHints(s, context).size(), 1u);
  EXPECT_THAT(ErrorHints(s, context)[0], HasSubstr("`sluice serve` is running"));
}

TEST(ErrorHintsTest, OtherErrorsHaveNone) {
  EXPECT_THAT(ErrorHints(absl::InternalError("boom"), {}), IsEmpty());
}

}  // namespace
}  // namespace sluice
