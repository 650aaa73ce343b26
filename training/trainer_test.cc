#include "training/trainer.h"

#include <fstream>
#include <sstream>

#include "frontend/onnx/onnx_tensor.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr char kDir[] = "tests/testdata/onnx/";

std::vector<double> ReadLine(std::istream& in) {
  std::string line;
  std::getline(in, line);
  std::istringstream s(line);
  std::vector<double> v;
  for (double x; s >> x;) v.push_back(x);
  return v;
}

// train_linear.onnx: linear regression trained with Gradient + Momentum in its
// TrainingInfoProto; make_models.py computed the same 5 steps with numpy.
TEST(OnnxTrainerTest, MatchesTheNumpyTrajectory) {
  auto trainer = OnnxTrainer::Load(std::string(kDir) + "train_linear.onnx", {});
  ASSERT_OK(trainer);
  ASSERT_OK((*trainer)->Initialize());
  auto x = ReadOnnxTensorFile(std::string(kDir) + "train_linear_x.pb");
  auto t = ReadOnnxTensorFile(std::string(kDir) + "train_linear_t.pb");
  ASSERT_TRUE(x.ok() && t.ok());
  std::ifstream expected(std::string(kDir) + "train_linear_expected.txt");
  std::vector<double> losses = ReadLine(expected), final_wb = ReadLine(expected);
  ASSERT_EQ(losses.size(), 5u);
  for (int step = 0; step < 5; ++step) {
    auto out = (*trainer)->Step({{"x", *x}, {"t", *t}});
    ASSERT_OK(out);
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].first, "loss");
    EXPECT_NEAR((*out)[0].second.flat<float>()[0], losses[step], 1e-4 * std::max(1.0, losses[step])) << "step " << step;
  }
  auto read = (*trainer)->Initializers();
  ASSERT_OK(read);
  const auto& state = *read;
  EXPECT_NEAR(state.at("W").flat<float>()[0], final_wb[0], 1e-4);
  EXPECT_NEAR(state.at("W").flat<float>()[1], final_wb[1], 1e-4);
  EXPECT_NEAR(state.at("b").flat<float>()[0], final_wb[2], 1e-4);
  EXPECT_EQ(state.at("T").flat<int64_t>()[0], 5);

  // The saved model carries the trained values.
  const std::string saved = ::testing::TempDir() + "/trained.onnx";
  ASSERT_OK((*trainer)->Save(saved));
  auto reloaded = OnnxTrainer::Load(saved, {});
  ASSERT_OK(reloaded);
  auto reread = (*reloaded)->Initializers();
  ASSERT_OK(reread);
  EXPECT_EQ(reread->at("W").flat<float>()[1], state.at("W").flat<float>()[1]);
}

TEST(OnnxTrainerTest, ModelsWithoutTrainingInfoAndMissingFeedsAreErrors) {
  EXPECT_THAT(OnnxTrainer::Load(std::string(kDir) + "mlp.onnx", {}).status().message(),
              ::testing::HasSubstr("no training_info"));
  auto trainer = OnnxTrainer::Load(std::string(kDir) + "train_linear.onnx", {});
  ASSERT_OK(trainer);
  auto out = (*trainer)->Step({});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), ::testing::HasSubstr("no value for input"));
}

}  // namespace
}  // namespace sluice
