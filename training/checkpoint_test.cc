// Checkpoints: the most recent complete one is found; a truncated, changed or missing file,
// or a broken manifest, is passed over with a message naming it, for the one before; only the
// two most recent stay.
#include "training/checkpoint.h"

#include <filesystem>
#include <fstream>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Fresh(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CheckpointTest, TheMostRecentCompleteOneIsFoundAndTwoAreKept) {
  const std::string dir = Fresh("kept");
  std::vector<std::string> skipped;
  SL_ASSERT_OK_AND_ASSIGN(auto none, FindCheckpoint(dir, &skipped));
  EXPECT_FALSE(none.has_value());
  for (int step : {10, 20, 30}) ASSERT_OK(WriteCheckpoint(dir, step, std::string(1000 + step, 'a' + step / 10)));
  SL_ASSERT_OK_AND_ASSIGN(auto last, FindCheckpoint(dir, &skipped));
  EXPECT_EQ(last.value_or(Checkpoint{}).step, 30);
  EXPECT_THAT(skipped, IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/ckpt-00000010.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/ckpt-00000010.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-00000020.onnx"));
  // A half-written file of a later step (no manifest yet) is not a checkpoint.
  std::ofstream(dir + "/ckpt-00000040.onnx.tmp") << "half";
  SL_ASSERT_OK_AND_ASSIGN(last, FindCheckpoint(dir, &skipped));
  EXPECT_EQ(last.value_or(Checkpoint{}).step, 30);
}

TEST(CheckpointTest, DamagedCheckpointsArePassedOverNamingTheirFiles) {
  for (const std::string damage : {"truncated", "corrupted", "missing", "manifest"}) {
    const std::string dir = Fresh("damaged_" + damage);
    ASSERT_OK(WriteCheckpoint(dir, 1, std::string(5000, 'x')));
    ASSERT_OK(WriteCheckpoint(dir, 2, std::string(5000, 'y')));
    const std::string model = dir + "/ckpt-00000002.onnx";
    if (damage == "truncated") std::filesystem::resize_file(model, 100);
    if (damage == "corrupted") {
      std::fstream f(model, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(2500);
      f.put('z');
    }
    if (damage == "missing") std::filesystem::remove(model);
    if (damage == "manifest") std::ofstream(dir + "/ckpt-00000002.json") << "{\"step\": 2";
    std::vector<std::string> skipped;
    SL_ASSERT_OK_AND_ASSIGN(auto found, FindCheckpoint(dir, &skipped));
    EXPECT_EQ(found.value_or(Checkpoint{}).step, 1) << damage;
    ASSERT_EQ(skipped.size(), 1u) << damage;
    EXPECT_THAT(skipped[0], HasSubstr("ckpt-00000002")) << damage;
    EXPECT_THAT(skipped[0], HasSubstr(damage == "truncated"   ? "truncated"
                                      : damage == "corrupted" ? "SHA-256"
                                      : damage == "missing"   ? "missing"
                                                              : "not a checkpoint manifest"));
  }
}

// A manifest claiming 2^62 bytes, a negative size, or a file outside the folder is passed over.
TEST(CheckpointTest, HostileManifestsArePassedOver) {
  const std::string dir = Fresh("hostile");
  ASSERT_OK(WriteCheckpoint(dir, 1, std::string(100, 'x')));
  ASSERT_OK(WriteCheckpoint(dir, 2, std::string(100, 'y')));
  const std::string sha(64, 'a');
  for (const std::string& manifest : std::vector<std::string>
       {"{\"step\": 2, \"file\": \"ckpt-00000002.onnx\", \"bytes\": 4611686018427387904, \"sha256\": \"" + sha + "\"}",
        "{\"step\": 2, \"file\": \"ckpt-00000002.onnx\", \"bytes\": -5, \"sha256\": \"" + sha + "\"}",
        "{\"step\": 2, \"file\": \"../../etc/passwd\", \"bytes\": 100, \"sha256\": \"" + sha + "\"}"}) {
    std::ofstream(dir + "/ckpt-00000002.json") << manifest;
    std::vector<std::string> skipped;
    SL_ASSERT_OK_AND_ASSIGN(auto found, FindCheckpoint(dir, &skipped));
    EXPECT_EQ(found.value_or(Checkpoint{}).step, 1) << manifest;
    EXPECT_EQ(skipped.size(), 1u) << manifest;
  }
}

}  // namespace
}  // namespace sluice
