// Summary writers end to end: handles, the device's resources, and the event file read back
// record by record (framing and CRCs checked here, Events parsed with protobuf).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "framework/crc32c.h"
#include "framework/device.h"
#include "framework/node_def_util.h"
#include "framework/resource_mgr.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/event_file_writer.h"
#include "kernels/node_evaluator.h"
#include "ops/op_registry.h"
#include "proto/summary.pb.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

uint64_t LittleEndian(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Every Event in the file; a framing or CRC error fails the test.
std::vector<Event> ReadEvents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  std::vector<Event> events;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_LE(at + 12, bytes.size()) << "truncated header at " << at;
    if (at + 12 > bytes.size()) break;
    const uint64_t length = LittleEndian(bytes, at, 8);
    EXPECT_EQ(UnmaskCrc32c(LittleEndian(bytes, at + 8, 4)), Crc32c(bytes.substr(at, 8))) << "length CRC at " << at;
    EXPECT_LE(at + 12 + length + 4, bytes.size()) << "truncated record at " << at;
    if (at + 12 + length + 4 > bytes.size()) break;
    const std::string data = bytes.substr(at + 12, length);
    EXPECT_EQ(UnmaskCrc32c(LittleEndian(bytes, at + 12 + length, 4)), Crc32c(data)) << "data CRC at " << at;
    Event e;
    EXPECT_TRUE(e.ParseFromString(data)) << "record at " << at;
    events.push_back(e);
    at += 12 + length + 4;
  }
  return events;
}

Tensor Str(const std::string& s) {
  Tensor t(DT_STRING, TensorShape({}));
  t.flat<tstring>()[0] = s;
  return t;
}
template <typename T>
Tensor Scalar(T v) {
  return Tensor::FromVector<T>({v}, TensorShape({}));
}

class SummaryOpsTest : public ::testing::Test {
 protected:
  SummaryOpsTest() : device_(Attrs(), nullptr) {
    logdir_ = ::testing::TempDir() + "/summary_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  ~SummaryOpsTest() override { ReleaseResourceMgr(&device_); }

  static DeviceAttributes Attrs() {
    DeviceAttributes a;
    a.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
    a.set_device_type("CPU");
    return a;
  }

  absl::StatusOr<std::vector<Tensor>> Run(const std::string& op, std::vector<Tensor> inputs,
                                          std::vector<std::pair<std::string, AttrValue>> attrs = {}) {
    NodeDef node;
    node.set_name(absl::StrCat(op, "_node"));
    node.set_op(op);
    for (auto& [k, v] : attrs) (*node.mutable_attr())[k] = v;
    SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(op));
    AddDefaultsToNodeDef(reg->op_def, &node);
    return RunKernelOnce(&device_, node, reg->op_def, inputs);
  }

  Tensor Writer(const std::string& shared_name) {
    AttrValue name;
    name.set_s(shared_name);
    auto out = Run("SummaryWriter", {}, {{"shared_name", name}});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  }

  absl::Status Create(const Tensor& w, const std::string& logdir, int max_queue = 10, int flush_millis = 120000,
                      const std::string& suffix = ".v2") {
    return Run("CreateSummaryFileWriter", {w, Str(logdir), Scalar<int32_t>(max_queue), Scalar<int32_t>(flush_millis),
                                           Str(suffix)})
        .status();
  }

  absl::Status WriteScalar(const Tensor& w, int64_t step, const std::string& tag, float v) {
    AttrValue t;
    t.set_type(DT_FLOAT);
    return Run("WriteScalarSummary", {w, Scalar<int64_t>(step), Str(tag), Scalar<float>(v)}, {{"T", t}}).status();
  }

  absl::Status Flush(const Tensor& w) { return Run("FlushSummaryWriter", {w}).status(); }

  std::string OnlyFile(const std::string& dir) {
    std::vector<std::string> files = ListDir(dir);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : dir + "/" + files[0];
  }

  Device device_;
  std::string logdir_;
};

TEST_F(SummaryOpsTest, ScalarsLandInOneEventFileTensorBoardCanRead) {
  const std::string dir = logdir_ + "/nested/run";  // Parents are made too.
  Tensor w = Writer("logdir:" + dir);
  ASSERT_OK(Create(w, dir));
  ASSERT_OK(WriteScalar(w, 0, "loss", 42.5f));
  ASSERT_OK(WriteScalar(w, 7, "loss", -1.25f));
  ASSERT_OK(Flush(w));
  const std::string path = OnlyFile(dir);
  EXPECT_THAT(path, HasSubstr("/events.out.tfevents."));
  EXPECT_THAT(path, ::testing::EndsWith(".v2"));
  std::vector<Event> events = ReadEvents(path);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.6e9);
  EXPECT_EQ(events[1].step(), 0);
  ASSERT_EQ(events[1].summary().value_size(), 1);
  EXPECT_EQ(events[1].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 42.5f);
  EXPECT_EQ(events[2].step(), 7);
  EXPECT_EQ(events[2].summary().value(0).simple_value(), -1.25f);
}

TEST_F(SummaryOpsTest, EventsWaitForTheQueueOrAFlushAndEqualRecordsHaveEqualSizes) {
  Tensor w = Writer("q");
  ASSERT_OK(Create(w, logdir_, /*max_queue=*/2));
  const std::string path = OnlyFile(logdir_);
  ASSERT_OK(WriteScalar(w, 1, "a", 1));
  ASSERT_OK(WriteScalar(w, 2, "a", 2));
  EXPECT_EQ(ReadEvents(path).size(), 1u);  // Only the version event so far.
  ASSERT_OK(WriteScalar(w, 3, "a", 3));    // A third queued event overflows the queue.
  EXPECT_EQ(ReadEvents(path).size(), 4u);
  struct stat before, after;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_OK(WriteScalar(w, 4, "a", 4));
  ASSERT_OK(Flush(w));
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  const off_t one = after.st_size - before.st_size;
  EXPECT_GT(one, 0);
  ASSERT_OK(WriteScalar(w, 5, "a", 5));
  ASSERT_OK(WriteScalar(w, 6, "a", 6));
  ASSERT_OK(Flush(w));
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  EXPECT_EQ(before.st_size - after.st_size, 2 * one);  // What tfjs-node's tests check.
}

TEST_F(SummaryOpsTest, WriteSummaryKeepsTheTensorAndMetadata) {
  Tensor w = Writer("t");
  ASSERT_OK(Create(w, logdir_));
  SummaryMetadata md;
  md.mutable_plugin_data()->set_plugin_name("histograms");
  md.set_summary_description("a *test*");
  Tensor buckets = Tensor::FromVector<double>({0, 1, 2, 1, 2, 3}, TensorShape({2, 3}));
  AttrValue t;
  t.set_type(DT_DOUBLE);
  ASSERT_OK(Run("WriteSummary", {w, Scalar<int64_t>(3), buckets, Str("h"), Str(md.SerializeAsString())}, {{"T", t}})
                .status());
  ASSERT_OK(Flush(w));
  std::vector<Event> events = ReadEvents(OnlyFile(logdir_));
  ASSERT_EQ(events.size(), 2u);
  const Summary::Value& v = events[1].summary().value(0);
  EXPECT_EQ(v.tag(), "h");
  EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "histograms");
  EXPECT_EQ(v.metadata().summary_description(), "a *test*");
  SL_ASSERT_OK_AND_ASSIGN(Tensor back, Tensor::FromProto(v.tensor()));
  EXPECT_EQ(back.shape(), TensorShape({2, 3}));
  EXPECT_EQ(back.flat<double>()[5], 3.0);
  // Metadata that is not a SummaryMetadata is refused, naming the tag.
  absl::Status s =
      Run("WriteSummary", {w, Scalar<int64_t>(4), buckets, Str("h2"), Str("\xff\xff\xff")}, {{"T", t}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'h2'"));
}

TEST_F(SummaryOpsTest, RawProtoSummariesMergeIntoOneEvent) {
  Tensor w = Writer("raw");
  ASSERT_OK(Create(w, logdir_));
  Summary a, b;
  a.add_value()->set_tag("x");
  a.mutable_value(0)->set_simple_value(1);
  b.add_value()->set_tag("y");
  b.mutable_value(0)->set_simple_value(2);
  Tensor protos(DT_STRING, TensorShape({2}));
  protos.flat<tstring>()[0] = a.SerializeAsString();
  protos.flat<tstring>()[1] = b.SerializeAsString();
  ASSERT_OK(Run("WriteRawProtoSummary", {w, Scalar<int64_t>(9), protos}).status());
  ASSERT_OK(Flush(w));
  std::vector<Event> events = ReadEvents(OnlyFile(logdir_));
  ASSERT_EQ(events.size(), 2u);
  ASSERT_EQ(events[1].summary().value_size(), 2);
  EXPECT_EQ(events[1].summary().value(1).tag(), "y");
}

TEST_F(SummaryOpsTest, TwoWritersDoNotMixAndCreateTwiceReuses) {
  Tensor w1 = Writer("logdir:" + logdir_ + "/1");
  Tensor w2 = Writer("logdir:" + logdir_ + "/2");
  ASSERT_OK(Create(w1, logdir_ + "/1"));
  ASSERT_OK(Create(w1, logdir_ + "/1"));  // Exists: nothing new is opened.
  ASSERT_OK(Create(w2, logdir_ + "/2"));
  ASSERT_OK(WriteScalar(w1, 0, "foo", 42));
  ASSERT_OK(WriteScalar(w2, 0, "foo", 1.337f));
  ASSERT_OK(WriteScalar(w2, 1, "foo", 2));
  ASSERT_OK(Flush(w1));
  ASSERT_OK(Flush(w2));
  EXPECT_EQ(ReadEvents(OnlyFile(logdir_ + "/1")).size(), 2u);
  std::vector<Event> e2 = ReadEvents(OnlyFile(logdir_ + "/2"));
  ASSERT_EQ(e2.size(), 3u);
  EXPECT_EQ(e2[1].summary().value(0).simple_value(), 1.337f);
}

TEST_F(SummaryOpsTest, CloseForgetsTheWriterAndReleaseFlushes) {
  Tensor w = Writer("c");
  ASSERT_OK(Create(w, logdir_));
  ASSERT_OK(WriteScalar(w, 1, "a", 1));
  ASSERT_OK(Run("CloseSummaryWriter", {w}).status());
  EXPECT_EQ(ReadEvents(OnlyFile(logdir_)).size(), 2u);
  absl::Status s = WriteScalar(w, 2, "a", 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("CreateSummaryFileWriter"));
  // Creating it again opens a second file; the device's end flushes what is queued.
  ASSERT_OK(Create(w, logdir_));
  ASSERT_OK(WriteScalar(w, 3, "a", 3));
  ASSERT_EQ(ListDir(logdir_).size(), 2u);
  ReleaseResourceMgr(&device_);
  size_t total = 0;
  for (const std::string& f : ListDir(logdir_)) total += ReadEvents(logdir_ + "/" + f).size();
  EXPECT_EQ(total, 4u);
}

TEST_F(SummaryOpsTest, MisuseIsAnErrorNamingTheOp) {
  Tensor w = Writer("m");
  // Before CreateSummaryFileWriter.
  absl::Status s = Flush(w);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("FlushSummaryWriter"));
  EXPECT_THAT(s.message(), HasSubstr("SummaryWriter 'm'"));
  // An empty logdir, a logdir under a regular file, a suffix with a slash.
  s = Create(w, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("empty string"));
  ASSERT_EQ(mkdir(logdir_.c_str(), 0777), 0);
  std::ofstream(logdir_ + "/file") << "x";
  s = Create(w, logdir_ + "/file/sub");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(logdir_ + "/file"));
  EXPECT_EQ(Create(w, logdir_, 10, 1000, "a/b").code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(Create(w, logdir_));
  // A non-scalar step, and a handle that is not a resource handle.
  AttrValue t;
  t.set_type(DT_FLOAT);
  s = Run("WriteScalarSummary", {w, Tensor::FromVector<int64_t>({1, 2}, TensorShape({2})), Str("a"), Scalar<float>(1)},
          {{"T", t}})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("step must be a scalar"));
  s = Run("FlushSummaryWriter", {Tensor(DT_RESOURCE, TensorShape({}))}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("FlushSummaryWriter"));
}

TEST(EventFileWriterTest, FrameMatchesTheTfRecordLayout) {
  const std::string r = EventFileWriter::Frame("abc");
  ASSERT_EQ(r.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(LittleEndian(r, 0, 8), 3u);
  EXPECT_EQ(LittleEndian(r, 8, 4), MaskCrc32c(Crc32c(r.substr(0, 8))));
  EXPECT_EQ(r.substr(12, 3), "abc");
  EXPECT_EQ(LittleEndian(r, 15, 4), MaskCrc32c(Crc32c("abc")));
}

}  // namespace
}  // namespace sluice
