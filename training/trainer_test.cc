#include "training/trainer.h"

#include <fstream>
#include <sstream>

#include "frontend/onnx/model_loader.h"
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

// Renames value `from` to `to` in every graph of `model` and in its bindings.
void Rename(const std::string& from, const std::string& to, onnx::ModelProto* model) {
  auto graph = [&](onnx::GraphProto* g) {
    for (auto& init : *g->mutable_initializer()) {
      if (init.name() == from) init.set_name(to);
    }
    for (auto* values : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()}) {
      for (auto& v : *values) {
        if (v.name() == from) v.set_name(to);
      }
    }
    for (auto& node : *g->mutable_node()) {
      for (auto* names : {node.mutable_input(), node.mutable_output()}) {
        for (auto& n : *names) {
          if (n == from) n = to;
        }
      }
      for (auto& attr : *node.mutable_attribute()) {
        for (auto& s : *attr.mutable_strings()) {
          if (s == from) s = to;  // Gradient's xs and y.
        }
      }
    }
  };
  graph(model->mutable_graph());
  for (auto& info : *model->mutable_training_info()) {
    graph(info.mutable_algorithm());
    graph(info.mutable_initialization());
    for (auto* bindings : {info.mutable_update_binding(), info.mutable_initialization_binding()}) {
      for (auto& b : *bindings) {
        if (b.key() == from) b.set_key(to);
        if (b.value() == from) b.set_value(to);
      }
    }
  }
}

// Initializer names that are not TensorFlow node names (torch's "onnx::Conv_193" of eval-mode
// exports, ":0" and "^" and "/" in odd places, two that escape alike) train, read and save as
// the plain names do.
TEST(OnnxTrainerTest, AnyInitializerNameTrains) {
  const std::string path = std::string(kDir) + "train_linear.onnx";
  auto model = LoadOnnxModel(path);
  ASSERT_OK(model);
  Rename("W", "onnx::Gemm_193", &*model);
  Rename("b", "onnx__Gemm_193", &*model);  // Escapes like the name above.
  Rename("T", "^/layer1/T:0 ", &*model);
  const std::string renamed = ::testing::TempDir() + "/train_linear_odd_names.onnx";
  {
    std::ofstream out(renamed, std::ios::binary);
    ASSERT_TRUE(model->SerializeToOstream(&out));
  }
  auto plain = OnnxTrainer::Load(path, {});
  auto odd = OnnxTrainer::Load(renamed, {});
  ASSERT_OK(plain);
  ASSERT_OK(odd);
  ASSERT_OK((*plain)->Initialize());
  ASSERT_OK((*odd)->Initialize());
  auto x = ReadOnnxTensorFile(std::string(kDir) + "train_linear_x.pb");
  auto t = ReadOnnxTensorFile(std::string(kDir) + "train_linear_t.pb");
  ASSERT_TRUE(x.ok() && t.ok());
  for (int step = 0; step < 3; ++step) {
    auto a = (*plain)->Step({{"x", *x}, {"t", *t}});
    auto b = (*odd)->Step({{"x", *x}, {"t", *t}});
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_EQ((*a)[0].second.flat<float>()[0], (*b)[0].second.flat<float>()[0]) << "step " << step;
  }
  auto state = (*odd)->Initializers();
  ASSERT_OK(state);
  auto expected = (*plain)->Initializers();
  ASSERT_OK(expected);
  EXPECT_EQ(state->at("onnx::Gemm_193").flat<float>()[1], expected->at("W").flat<float>()[1]);
  EXPECT_EQ(state->at("onnx__Gemm_193").flat<float>()[0], expected->at("b").flat<float>()[0]);
  EXPECT_EQ(state->at("^/layer1/T:0 ").flat<int64_t>()[0], 3);
  // Saved, loaded again, the trained values are there under their names.
  const std::string saved = ::testing::TempDir() + "/trained_odd_names.onnx";
  ASSERT_OK((*odd)->Save(saved));
  auto reloaded = OnnxTrainer::Load(saved, {});
  ASSERT_OK(reloaded);
  auto reread = (*reloaded)->Initializers();
  ASSERT_OK(reread);
  EXPECT_EQ(reread->at("onnx::Gemm_193").flat<float>()[1], expected->at("W").flat<float>()[1]);
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
