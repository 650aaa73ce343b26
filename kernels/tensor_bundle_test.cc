// TensorFlow checkpoints: a table laid out by hand the way LevelDB's builder may lay it out
// (restart interval 1, a shortened index key, a separate block per entry) read back; round trips
// through BundleWriter; damage of every kind refused with DATA_LOSS; the ops on top.
#include "kernels/tensor_bundle.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "framework/crc32c.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Varint(uint64_t v) {
  std::string s;
  do {
    s.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    v >>= 7;
  } while (v != 0);
  return s;
}
std::string Fixed32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }  // x86: LE.

// One block, its entries with the given shared-prefix lengths against the previous key, a
// restart at each offset in `restarts`.
std::string Block(const std::vector<std::tuple<size_t, std::string, std::string>>& entries,
                  const std::vector<uint32_t>& restarts) {
  std::string b;
  for (const auto& [shared, delta, value] : entries) {
    b += Varint(shared) + Varint(delta.size()) + Varint(value.size()) + delta + value;
  }
  for (uint32_t r : restarts) b += Fixed32(r);
  return b + Fixed32(static_cast<uint32_t>(restarts.size()));
}

// Appends a block with its trailer; returns its handle.
std::string Put(const std::string& block, std::string* file) {
  std::string handle = Varint(file->size()) + Varint(block.size());
  *file += block;
  std::string typed = block + std::string(1, '\0');
  *file += std::string(1, '\0') + Fixed32(MaskCrc32c(Crc32c(typed)));
  return handle;
}

std::string Footer(const std::string& metaindex, const std::string& index) {
  std::string f = metaindex + index;
  f.resize(40, '\0');
  return f + Fixed32(0x8b80fb57u) + Fixed32(0xdb477524u);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void Spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string TempPrefix(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/bundle_" + name;
  mkdir(dir.c_str(), 0777);
  return dir + "/ckpt";
}

Tensor Strings(std::vector<std::string> v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<tstring>()[i] = v[i];
  return t;
}
Tensor Str(const std::string& s) {
  Tensor t(DT_STRING, TensorShape({}));
  t.flat<tstring>()[0] = s;
  return t;
}

TEST(TensorBundleTest, ReadsATableLaidOutByHand) {
  const std::string prefix = TempPrefix("by_hand");
  // Data: "kernel" = float [2] {1.5, -2}, "kernel_bias" = int64 scalar 7 (offset 8).
  const float k[2] = {1.5f, -2.0f};
  const int64_t bias = 7;
  const std::string data = std::string(reinterpret_cast<const char*>(k), 8) +
                           std::string(reinterpret_cast<const char*>(&bias), 8);
  Spit(prefix + ".data-00000-of-00001", data);
  BundleHeaderProto header;
  header.set_num_shards(1);
  BundleEntryProto ek, eb;
  ek.set_dtype(DT_FLOAT);
  ek.mutable_shape()->add_dim()->set_size(2);
  ek.set_size(8);
  ek.set_crc32c(MaskCrc32c(Crc32c(data.substr(0, 8))));
  eb.set_dtype(DT_INT64);
  eb.set_offset(8);
  eb.set_size(8);
  eb.set_crc32c(MaskCrc32c(Crc32c(data.substr(8))));
  std::string file;
  // Block 1: the header and "kernel", a restart at each entry. Block 2: "kernel_bias" sharing
  // nothing (a block starts afresh). The index's key for block 1 is a shortened separator
  // ("kernel" < "kernelA" <= "kernel_bias"), as LevelDB writes it, not the last key.
  const std::string b1 = Put(Block({{0, "", header.SerializeAsString()}, {0, "kernel", ek.SerializeAsString()}},
                                   {0, static_cast<uint32_t>(3 + header.ByteSizeLong())}),
                             &file);
  const std::string b2 = Put(Block({{0, "kernel_bias", eb.SerializeAsString()}}, {0}), &file);
  const std::string meta = Put(Block({}, {0}), &file);
  // The index itself prefix-compresses its second key against the first.
  const std::string index = Put(Block({{0, "kernelA", b1}, {6, "_bias", b2}}, {0}), &file);
  Spit(prefix + ".index", file + Footer(meta, index));

  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
  EXPECT_THAT(r->Names(), ElementsAre("kernel", "kernel_bias"));
  SL_ASSERT_OK_AND_ASSIGN(Tensor kt, r->Lookup("kernel"));
  EXPECT_EQ(kt.shape(), TensorShape({2}));
  EXPECT_EQ(kt.flat<float>()[1], -2.0f);
  SL_ASSERT_OK_AND_ASSIGN(Tensor bt, r->Lookup("kernel_bias"));
  EXPECT_EQ(bt.dims(), 0);
  EXPECT_EQ(bt.flat<int64_t>()[0], 7);
  absl::Status missing = r->Lookup("nope").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("Key nope not found in checkpoint"));
}

TEST(TensorBundleTest, WriterRoundTripsEveryKindAcrossBlocks) {
  const std::string prefix = TempPrefix("round_trip");
  BundleWriter w(prefix);
  // 300 entries with long shared prefixes: several 4 KiB blocks, restart points within them.
  for (int i = 0; i < 300; ++i) {
    ASSERT_OK(w.Add(absl::StrCat("model/layer_", i / 10, "/weight_", i % 10, "/.ATTRIBUTES/VARIABLE_VALUE"),
                    Tensor::FromVector<float>({static_cast<float>(i), -1.0f * i}, TensorShape({2}))));
  }
  ASSERT_OK(w.Add("strings", Strings({"", "a string longer than one varint byte? no, but 200 bytes next",
                                      std::string(200, 'x')})));
  ASSERT_OK(w.Add("flag", Tensor::FromVector<bool>({true, false, true}, TensorShape({3}))));
  ASSERT_OK(w.Add("empty", Tensor(DT_DOUBLE, TensorShape({0, 4}))));
  EXPECT_EQ(w.Add("flag", Str("again")).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(w.Finish());
  EXPECT_GT(Slurp(prefix + ".index").size(), 3 * 4096u);

  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
  EXPECT_EQ(r->Names().size(), 303u);
  for (int i : {0, 15, 16, 17, 150, 299}) {
    SL_ASSERT_OK_AND_ASSIGN(
        Tensor t, r->Lookup(absl::StrCat("model/layer_", i / 10, "/weight_", i % 10, "/.ATTRIBUTES/VARIABLE_VALUE")));
    EXPECT_EQ(t.flat<float>()[0], i);
    EXPECT_EQ(t.flat<float>()[1], -1.0f * i);
  }
  SL_ASSERT_OK_AND_ASSIGN(Tensor s, r->Lookup("strings"));
  ASSERT_EQ(s.NumElements(), 3);
  EXPECT_EQ(std::string(s.flat<tstring>()[0]), "");
  EXPECT_EQ(std::string(s.flat<tstring>()[2]), std::string(200, 'x'));
  SL_ASSERT_OK_AND_ASSIGN(Tensor b, r->Lookup("flag"));
  EXPECT_EQ(b.flat<bool>()[2], true);
  SL_ASSERT_OK_AND_ASSIGN(Tensor e, r->Lookup("empty"));
  EXPECT_EQ(e.shape(), TensorShape({0, 4}));
}

TEST(TensorBundleTest, DamageIsDataLossNeverACrash) {
  const std::string prefix = TempPrefix("damage");
  BundleWriter w(prefix);
  ASSERT_OK(w.Add("w", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))));
  ASSERT_OK(w.Add("s", Strings({"ab", "cde"})));
  ASSERT_OK(w.Finish());
  const std::string index = Slurp(prefix + ".index");
  const std::string data = Slurp(prefix + ".data-00000-of-00001");

  // A flipped data byte fails the tensor's checksum.
  std::string bad = data;
  bad[1] ^= 0x40;
  Spit(prefix + ".data-00000-of-00001", bad);
  {
    SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
    absl::Status s = r->Lookup("w").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(s.message(), HasSubstr("tensor 'w'"));
  }
  // A truncated shard.
  Spit(prefix + ".data-00000-of-00001", data.substr(0, 5));
  {
    SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
    EXPECT_EQ(r->Lookup("s").status().code(), absl::StatusCode::kDataLoss);
  }
  Spit(prefix + ".data-00000-of-00001", data);

  // Every single-byte change and every truncation of the index: an error or (where the byte
  // is padding) success, but never a crash or a hang.
  for (size_t i = 0; i < index.size(); ++i) {
    std::string flipped = index;
    flipped[i] ^= 0xff;
    Spit(prefix + ".index", flipped);
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
    if (r.ok()) (void)(*r)->Lookup("w");
    Spit(prefix + ".index", index.substr(0, i));
    EXPECT_FALSE(BundleReader::Open(prefix).ok()) << "truncated to " << i;
  }
  // A compressed block is named as such.
  std::string snappy = index;
  snappy[index.size() - 48 - 5] = 1;  // The index block's type byte (its CRC now also fails).
  Spit(prefix + ".index", snappy);
  EXPECT_FALSE(BundleReader::Open(prefix).ok());
  Spit(prefix + ".index", index);
  EXPECT_EQ(BundleReader::Open(prefix + "_absent").status().code(), absl::StatusCode::kNotFound);
}

// Entries that lie: sizes of 2^62, negative offsets, a shard that does not exist, 2^40
// strings in a few bytes, a shape whose element count overflows. Each is DATA_LOSS (or
// INVALID_ARGUMENT for the shape), naming the tensor, before anything is allocated.
TEST(TensorBundleTest, HostileEntriesAreRefusedBeforeAllocating) {
  const std::string prefix = TempPrefix("hostile");
  Spit(prefix + ".data-00000-of-00001", std::string(16, '\0'));
  BundleHeaderProto header;
  header.set_num_shards(1);
  std::map<std::string, std::string> table{{"", header.SerializeAsString()}};
  auto entry = [](DataType dt, std::vector<int64_t> dims, int64_t offset, int64_t size, int shard = 0) {
    BundleEntryProto e;
    e.set_dtype(dt);
    for (int64_t d : dims) e.mutable_shape()->add_dim()->set_size(d);
    e.set_offset(offset);
    e.set_size(size);
    e.set_shard_id(shard);
    return e.SerializeAsString();
  };
  const int64_t huge = int64_t{1} << 62;
  table["size_2_62"] = entry(DT_FLOAT, {int64_t{1} << 60}, 0, huge);
  table["negative_offset"] = entry(DT_FLOAT, {1}, -5, 4);
  table["past_the_end"] = entry(DT_FLOAT, {2}, huge, 8);
  table["no_such_shard"] = entry(DT_FLOAT, {1}, 0, 4, 7);
  table["many_strings"] = entry(DT_STRING, {int64_t{1} << 40}, 0, 16);
  table["overflowing_shape"] = entry(DT_FLOAT, {huge, huge}, 0, 4);
  Spit(prefix + ".index", BuildTable(table));
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
  for (const std::string name :
       {"size_2_62", "negative_offset", "past_the_end", "no_such_shard", "many_strings", "overflowing_shape"}) {
    absl::Status s = r->Lookup(name).status();
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_THAT(s.message(), HasSubstr("'" + name + "'")) << s;
  }
}

TEST(TensorBundleOpsTest, SaveRestoreMergeAsTensorFlowsSaverDoes) {
  const std::string dir = TempPrefix("ops");
  const std::string part0 = dir + "_temp/part-00000-of-00002", part1 = dir + "_temp/part-00001-of-00002";
  mkdir((dir + "_temp").c_str(), 0777);
  {
    KernelTester save("SaveV2");
    save.Attr("dtypes", std::vector<DataType>{DT_FLOAT, DT_INT32})
        .Input(Str(part0))
        .Input(Strings({"a", "b"}))
        .Input(Strings({"", ""}))
        .Input(Tensor::FromVector<float>({1, 2}, TensorShape({2})))
        .Input(Tensor::FromVector<int32_t>({5}, TensorShape({})))
        .ArgSizes({1, 1, 1, 2});
    ASSERT_OK(save.Run());
    KernelTester save1("SaveV2");
    save1.Attr("dtypes", std::vector<DataType>{DT_STRING})
        .Input(Str(part1))
        .Input(Strings({"c"}))
        .Input(Strings({""}))
        .Input(Str("hello"))
        .ArgSizes({1, 1, 1, 1});
    ASSERT_OK(save1.Run());
  }
  KernelTester merge("MergeV2Checkpoints");
  merge.Input(Strings({part0, part1})).Input(Str(dir));
  ASSERT_OK(merge.Run());
  struct stat st;
  EXPECT_NE(stat((dir + "_temp").c_str(), &st), 0) << "the emptied temp dir is removed";
  EXPECT_EQ(stat((dir + ".data-00001-of-00002").c_str(), &st), 0);

  KernelTester restore("RestoreV2");
  restore.Attr("dtypes", std::vector<DataType>{DT_STRING, DT_FLOAT, DT_INT32})
      .Input(Str(dir))
      .Input(Strings({"c", "a", "b"}))
      .Input(Strings({"", "", ""}));
  ASSERT_OK(restore.Run());
  EXPECT_EQ(std::string(restore.output(0).flat<tstring>()[0]), "hello");
  restore.ExpectOutput<float>(1, {2}, {1, 2});
  restore.ExpectOutput<int32_t>(2, {}, {5});

  KernelTester wrong("RestoreV2");
  wrong.Attr("dtypes", std::vector<DataType>{DT_DOUBLE}).Input(Str(dir)).Input(Strings({"a"})).Input(Strings({""}));
  ExpectInvalid(wrong, "'a' is float in the checkpoint, but dtypes[0] is double");
  KernelTester missing("RestoreV2");
  missing.Attr("dtypes", std::vector<DataType>{DT_FLOAT}).Input(Str(dir)).Input(Strings({"z"})).Input(Strings({""}));
  absl::Status s = missing.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("Key z not found"));
  KernelTester sliced("RestoreV2");
  sliced.Attr("dtypes", std::vector<DataType>{DT_FLOAT}).Input(Str(dir)).Input(Strings({"a"})).Input(Strings({"2 0,1"}));
  EXPECT_EQ(sliced.Run().code(), absl::StatusCode::kUnimplemented);
  KernelTester nowhere("RestoreV2");
  nowhere.Attr("dtypes", std::vector<DataType>{DT_FLOAT})
      .Input(Str(dir + "/nowhere"))
      .Input(Strings({"a"}))
      .Input(Strings({""}));
  EXPECT_EQ(nowhere.Run().code(), absl::StatusCode::kNotFound);

  KernelTester name("ShardedFilename");
  name.Input(Str("/x/ckpt")).Input<int32_t>({}, {3}).Input<int32_t>({}, {12});
  ASSERT_OK(name.Run());
  EXPECT_EQ(std::string(name.output(0).flat<tstring>()[0]), "/x/ckpt-00003-of-00012");
  KernelTester bad_shard("ShardedFilename");
  bad_shard.Input(Str("/x/ckpt")).Input<int32_t>({}, {12}).Input<int32_t>({}, {12});
  ExpectInvalid(bad_shard, "out of range");
}

}  // namespace
}  // namespace sluice
