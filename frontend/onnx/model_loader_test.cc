#include "frontend/onnx/model_loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ModelLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("loader_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A model whose one initializer "w" (4 floats) lives in external data at `location`.
  std::string WriteModel(const std::string& location, int64_t offset = 0,
                         const std::string& length = "16") {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = w->add_external_data();
    loc->set_key("location");
    loc->set_value(location);
    auto* off = w->add_external_data();
    off->set_key("offset");
    off->set_value(std::to_string(offset));
    auto* len = w->add_external_data();
    len->set_key("length");
    len->set_value(length);
    fs::path path = dir_ / "models" / "model.onnx";
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path.string();
  }

  void WriteData(const fs::path& path, int64_t padding = 0) {
    std::ofstream out(path, std::ios::binary);
    out << std::string(padding, 'x');
    const float values[4] = {1, 2, 3, 4};
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  }

  fs::path dir_;
};

TEST_F(ModelLoaderTest, ReadsExternalDataRelativeToTheModel) {
  WriteData(dir_ / "models" / "weights.bin", 8);
  auto m = LoadOnnxModel(WriteModel("weights.bin", 8));
  ASSERT_OK(m);
  const auto& w = m->graph().initializer(0);
  EXPECT_FALSE(w.has_data_location());
  EXPECT_EQ(w.external_data_size(), 0);
  ASSERT_EQ(w.raw_data().size(), 16u);
  float third;
  memcpy(&third, w.raw_data().data() + 8, 4);
  EXPECT_EQ(third, 3.0f);
}

TEST_F(ModelLoaderTest, RefusesAbsoluteEscapingAndLinkedLocations) {
  WriteData(dir_ / "outside.bin");
  auto s = LoadOnnxModel(WriteModel((dir_ / "outside.bin").string())).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is absolute"));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w'"));

  s = LoadOnnxModel(WriteModel("../outside.bin")).status();
  EXPECT_THAT(s.message(), HasSubstr("leaves the model's folder"));

  fs::create_symlink(dir_ / "outside.bin", dir_ / "models" / "link.bin");
  s = LoadOnnxModel(WriteModel("link.bin")).status();
  EXPECT_THAT(s.message(), HasSubstr("symbolic link"));

  fs::create_directory_symlink(dir_, dir_ / "models" / "up");
  s = LoadOnnxModel(WriteModel("up/outside.bin")).status();
  EXPECT_THAT(s.message(), HasSubstr("symbolic link"));
}

TEST_F(ModelLoaderTest, RefusesMissingOrShortData) {
  auto s = LoadOnnxModel(WriteModel("nothing.bin")).status();
  EXPECT_THAT(s.message(), HasSubstr("does not exist"));
  {
    std::ofstream out(dir_ / "models" / "short.bin", std::ios::binary);
    out << "abc";
  }
  s = LoadOnnxModel(WriteModel("short.bin")).status();
  EXPECT_THAT(s.message(), HasSubstr("too short"));
}

// Each of these aborted (an uncaught length_error from a negative or wrapped size) or, for
// the FIFO, blocked forever in open.
TEST_F(ModelLoaderTest, RefusesOverflowingRangesAndFilesThatAreNotRegular) {
  WriteData(dir_ / "models" / "weights.bin");
  auto s = LoadOnnxModel(WriteModel("weights.bin", 8, std::to_string(INT64_MAX))).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("too short for offset 8"));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w'"));

  fs::create_directory(dir_ / "models" / "folder");
  s = LoadOnnxModel(WriteModel("folder")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a regular file"));

  ASSERT_EQ(mkfifo((dir_ / "models" / "fifo").c_str(), 0600), 0);
  s = LoadOnnxModel(WriteModel("fifo")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a regular file"));
}

// A hard link looks like any file; before, one to a file outside the model's folder (a
// private key, say) was read as weights.
TEST_F(ModelLoaderTest, RefusesHardLinksToFilesOutsideTheFolder) {
  WriteData(dir_ / "outside.bin");
  fs::create_hard_link(dir_ / "outside.bin", dir_ / "models" / "hard.bin");
  auto s = LoadOnnxModel(WriteModel("hard.bin")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("hard link to a file outside the model's folder"));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w'"));

  // Two names, both inside the folder: fine.
  WriteData(dir_ / "models" / "weights.bin");
  fs::create_directory(dir_ / "models" / "sub");
  fs::create_hard_link(dir_ / "models" / "weights.bin", dir_ / "models" / "sub" / "same.bin");
  EXPECT_OK(LoadOnnxModel(WriteModel("sub/same.bin")).status());
}

TEST_F(ModelLoaderTest, RefusesAModelPathThatIsNotAFile) {
  // Before, opening a FIFO named as the model waited for a writer forever.
  ASSERT_EQ(mkfifo((dir_ / "model_fifo.onnx").c_str(), 0600), 0);
  auto s = LoadOnnxModel((dir_ / "model_fifo.onnx").string()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file"));
  EXPECT_EQ(LoadOnnxModel((dir_ / "models").string()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadOnnxModel((dir_ / "none.onnx").string()).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelLoaderTest, BuffersCannotUseExternalData) {
  WriteData(dir_ / "models" / "weights.bin");
  std::ifstream in(WriteModel("weights.bin"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto s = ParseOnnxModel(bytes, "").status();
  EXPECT_THAT(s.message(), HasSubstr("the model has no folder"));
}

}  // namespace
}  // namespace sluice
