#include "kernels/tensor_bundle.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/checked_size.h"
#include "framework/crc32c.h"
#include "framework/file_util.h"
#include "framework/status.h"

namespace sluice {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;      // Two block handles padded to 40 bytes, then the magic.
constexpr size_t kBlockTrailerSize = 5;  // Compression type, masked CRC-32C.

// A cursor over bytes read from a file; every read is bounds-checked.
class Cursor {
 public:
  explicit Cursor(absl::string_view bytes) : bytes_(bytes) {}
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (at_ >= bytes_.size()) return false;
      const uint8_t b = static_cast<uint8_t>(bytes_[at_++]);
      if (shift == 63 && b > 1) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(uint64_t n, absl::string_view* out) {
    if (n > bytes_.size() - at_) return false;
    *out = bytes_.substr(at_, n);
    at_ += n;
    return true;
  }
  size_t at() const { return at_; }
  bool done() const { return at_ == bytes_.size(); }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
};

uint32_t Fixed32(absl::string_view b) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

absl::Status Corrupt(absl::string_view what, absl::string_view why) {
  return absl::DataLossError(absl::StrCat(what, " is not a valid table: ", why));
}

struct BlockHandle {
  uint64_t offset = 0, size = 0;
};

bool ReadHandle(Cursor* c, BlockHandle* h) { return c->Varint(&h->offset) && c->Varint(&h->size); }

// The block's contents, its trailer checked.
absl::StatusOr<absl::string_view> BlockAt(absl::string_view file, const BlockHandle& h, absl::string_view what) {
  uint64_t end;
  if (!CheckedAdd(h.offset, h.size, &end) || !CheckedAdd(end, uint64_t{kBlockTrailerSize}, &end) ||
      end > file.size()) {
    return Corrupt(what, absl::StrCat("a block at ", h.offset, " of ", h.size, " bytes runs past the end"));
  }
  absl::string_view contents = file.substr(h.offset, h.size);
  const char type = file[h.offset + h.size];
  const uint32_t stored = UnmaskCrc32c(Fixed32(file.substr(h.offset + h.size + 1, 4)));
  if (Crc32cExtend(Crc32c(contents), absl::string_view(&type, 1)) != stored) {
    return Corrupt(what, absl::StrCat("the block at ", h.offset, " fails its checksum"));
  }
  if (type != 0) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": the block at ", h.offset, " is compressed (type ", static_cast<int>(type),
                     "); only uncompressed tables, as TensorFlow writes checkpoints, are read"));
  }
  return contents;
}

// Appends the block's entries: restart points are not needed to read it front to back, but
// their count bounds where the entries end.
absl::Status BlockEntries(absl::string_view block, absl::string_view what,
                          std::vector<std::pair<std::string, std::string>>* out) {
  if (block.size() < 4) return Corrupt(what, "a block is shorter than its restart count");
  const uint64_t restarts = Fixed32(block.substr(block.size() - 4));
  if (restarts > (block.size() - 4) / 4) return Corrupt(what, "a block's restart count exceeds its size");
  const size_t limit = block.size() - 4 - 4 * restarts;
  Cursor c(block.substr(0, limit));
  std::string key;
  while (!c.done()) {
    uint64_t shared, unshared, value_size;
    absl::string_view delta, value;
    if (!c.Varint(&shared) || !c.Varint(&unshared) || !c.Varint(&value_size) || shared > key.size() ||
        !c.Bytes(unshared, &delta) || !c.Bytes(value_size, &value)) {
      return Corrupt(what, absl::StrCat("a malformed entry at byte ", c.at(), " of a block"));
    }
    key.resize(shared);
    key.append(delta.data(), delta.size());
    out->emplace_back(key, std::string(value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(absl::string_view file,
                                                                           absl::string_view what) {
  if (file.size() < kFooterSize) return Corrupt(what, "shorter than a table's footer");
  absl::string_view footer = file.substr(file.size() - kFooterSize);
  const uint64_t magic = Fixed32(footer.substr(40)) | (static_cast<uint64_t>(Fixed32(footer.substr(44))) << 32);
  if (magic != kTableMagic) return Corrupt(what, "the footer lacks the table magic number");
  Cursor fc(footer.substr(0, 40));
  BlockHandle metaindex, index;
  if (!ReadHandle(&fc, &metaindex) || !ReadHandle(&fc, &index)) return Corrupt(what, "a malformed footer");
  SL_ASSIGN_OR_RETURN(absl::string_view index_block, BlockAt(file, index, what));
  std::vector<std::pair<std::string, std::string>> index_entries, entries;
  SL_RETURN_IF_ERROR(BlockEntries(index_block, what, &index_entries));
  for (const auto& [last_key, handle_bytes] : index_entries) {
    Cursor hc(handle_bytes);
    BlockHandle h;
    if (!ReadHandle(&hc, &h)) return Corrupt(what, "a malformed block handle in the index");
    SL_ASSIGN_OR_RETURN(absl::string_view block, BlockAt(file, h, what));
    SL_RETURN_IF_ERROR(BlockEntries(block, what, &entries));
  }
  return entries;
}

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string index_path = prefix + ".index";
  SL_ASSIGN_OR_RETURN(std::string index, ReadRegularFile(index_path, "checkpoint index"));
  SL_ASSIGN_OR_RETURN(auto table, ReadTable(index, index_path));
  std::map<std::string, BundleEntryProto> entries;
  bool have_header = false;
  BundleHeaderProto header;
  for (auto& [key, value] : table) {
    if (key.empty()) {
      if (!header.ParseFromString(value)) return Corrupt(index_path, "its header entry is not a BundleHeaderProto");
      have_header = true;
      continue;
    }
    BundleEntryProto entry;
    if (!entry.ParseFromString(value)) {
      return Corrupt(index_path, absl::StrCat("the entry of '", key, "' is not a BundleEntryProto"));
    }
    entries[key] = std::move(entry);
  }
  if (!have_header) return Corrupt(index_path, "it has no header entry");
  if (header.endianness() != BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(index_path, ": a big-endian checkpoint cannot be read"));
  }
  if (header.num_shards() < 1 || header.num_shards() > 99999) {
    return Corrupt(index_path, absl::StrCat("its header says ", header.num_shards(), " shards"));
  }
  return std::unique_ptr<BundleReader>(new BundleReader(prefix, header.num_shards(), std::move(entries)));
}

std::string BundleReader::ShardPath(int shard) const {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix_, shard, num_shards_);
}

const BundleEntryProto* BundleReader::Entry(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> BundleReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

absl::StatusOr<Tensor> BundleReader::Lookup(const std::string& name) const {
  const BundleEntryProto* entry = Entry(name);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("Key ", name, " not found in checkpoint ", prefix_));
  }
  const std::string where = absl::StrCat("tensor '", name, "' of checkpoint ", prefix_);
  if (entry->slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(where, " is saved in slices (a partitioned variable)"));
  }
  SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(entry->shape()), where);
  const DataType dtype = entry->dtype();
  if (entry->shard_id() < 0 || entry->shard_id() >= num_shards_ || entry->offset() < 0 || entry->size() < 0) {
    return absl::DataLossError(absl::StrCat(where, ": its entry names shard ", entry->shard_id(), " of ", num_shards_,
                                            ", offset ", entry->offset(), ", size ", entry->size()));
  }
  const bool is_string = dtype == DT_STRING;
  if (!is_string && DataTypeSize(dtype) == 0) {
    return absl::UnimplementedError(absl::StrCat(where, " has type ", DataTypeString(dtype), ", which is not read"));
  }
  if (!is_string) {
    SL_ASSIGN_OR_RETURN(uint64_t want, TensorBytes(dtype, shape.num_elements(), where));
    if (want != static_cast<uint64_t>(entry->size())) {
      return absl::DataLossError(absl::StrCat(where, ": ", entry->size(), " bytes saved for ", DataTypeString(dtype),
                                              " ", shape.DebugString(), ", which takes ", want));
    }
  } else if (static_cast<uint64_t>(entry->size()) > kMaxTensorBytes) {
    return absl::DataLossError(absl::StrCat(where, ": its size ", entry->size(), " is implausible"));
  }
  const std::string shard = ShardPath(entry->shard_id());
  SL_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(shard, "checkpoint shard"));
  uint64_t end;
  if (!CheckedAdd(static_cast<uint64_t>(entry->offset()), static_cast<uint64_t>(entry->size()), &end) ||
      end > file.size()) {
    return absl::DataLossError(absl::StrCat(where, ": bytes [", entry->offset(), ", +", entry->size(),
                                            ") lie past the end of ", shard, " (", file.size(), " bytes)"));
  }
  std::string bytes(entry->size(), '\0');
  SL_RETURN_IF_ERROR(file.ReadAt(entry->offset(), entry->size(), bytes.data()), where);
  if (Crc32c(bytes) != UnmaskCrc32c(entry->crc32c())) {
    return absl::DataLossError(absl::StrCat(where, ": its bytes in ", shard, " fail their checksum"));
  }
  if (!is_string) {
    SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape), where);
    if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
    return t;
  }
  if (static_cast<uint64_t>(shape.num_elements()) > bytes.size()) {  // Each needs a length byte.
    return absl::DataLossError(absl::StrCat(where, ": ", shape.num_elements(), " strings in ", bytes.size(), " bytes"));
  }
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_STRING, shape), where);
  auto out = t.flat<tstring>();
  Cursor c(bytes);
  std::vector<uint64_t> lengths(out.size());
  for (uint64_t& len : lengths) {
    if (!c.Varint(&len)) return absl::DataLossError(absl::StrCat(where, ": its string lengths are malformed"));
  }
  absl::string_view checksum, s;
  if (!c.Bytes(4, &checksum)) return absl::DataLossError(absl::StrCat(where, ": its strings are truncated"));
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (!c.Bytes(lengths[i], &s)) return absl::DataLossError(absl::StrCat(where, ": string ", i, " is truncated"));
    out[i] = std::string(s);
  }
  return t;
}

}  // namespace sluice

namespace sluice {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Builds one block: entries prefix-compressed against the previous key, a restart point (a
// full key) every kRestartInterval entries.
class BlockBuilder {
 public:
  static constexpr int kRestartInterval = 16;
  void Add(absl::string_view key, absl::string_view value) {
    size_t shared = 0;
    if (count_ % kRestartInterval == 0) {
      restarts_.push_back(static_cast<uint32_t>(bytes_.size()));
    } else {
      while (shared < last_.size() && shared < key.size() && last_[shared] == key[shared]) ++shared;
    }
    PutVarint(shared, &bytes_);
    PutVarint(key.size() - shared, &bytes_);
    PutVarint(value.size(), &bytes_);
    bytes_.append(key.data() + shared, key.size() - shared);
    bytes_.append(value.data(), value.size());
    last_.assign(key.data(), key.size());
    ++count_;
  }
  std::string Finish() {
    if (restarts_.empty()) restarts_.push_back(0);
    std::string out = std::move(bytes_);
    for (uint32_t r : restarts_) PutFixed32(r, &out);
    PutFixed32(static_cast<uint32_t>(restarts_.size()), &out);
    *this = BlockBuilder();
    return out;
  }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return count_ == 0; }

 private:
  std::string bytes_, last_;
  std::vector<uint32_t> restarts_;
  int count_ = 0;
};

// Appends a block and its trailer to `file`; returns its handle's encoding.
std::string AppendBlock(const std::string& block, std::string* file) {
  std::string handle;
  PutVarint(file->size(), &handle);
  PutVarint(block.size(), &handle);
  file->append(block);
  const char type = 0;
  file->push_back(type);
  PutFixed32(MaskCrc32c(Crc32cExtend(Crc32c(block), absl::string_view(&type, 1))), file);
  return handle;
}

}  // namespace

std::string BuildTable(const std::map<std::string, std::string>& entries) {
  constexpr size_t kBlockSize = 4096;
  std::string file;
  BlockBuilder data, index;
  std::string last_key;
  for (const auto& [key, value] : entries) {
    data.Add(key, value);
    last_key = key;
    if (data.size() >= kBlockSize) index.Add(last_key, AppendBlock(data.Finish(), &file));
  }
  if (!data.empty()) index.Add(last_key, AppendBlock(data.Finish(), &file));
  const std::string metaindex_handle = AppendBlock(BlockBuilder().Finish(), &file);
  const std::string index_handle = AppendBlock(index.Finish(), &file);
  std::string footer = metaindex_handle + index_handle;
  footer.resize(40, '\0');
  PutFixed32(static_cast<uint32_t>(kTableMagic & 0xffffffffu), &footer);
  PutFixed32(static_cast<uint32_t>(kTableMagic >> 32), &footer);
  return file + footer;
}

absl::Status BundleWriter::Add(const std::string& name, const Tensor& t) {
  if (name.empty()) return absl::InvalidArgumentError("a checkpoint's tensor names must not be empty");
  if (entries_.count(name) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is saved twice in checkpoint ", prefix_));
  }
  BundleEntryProto entry;
  entry.set_dtype(t.dtype());
  t.shape().AsProto(entry.mutable_shape());
  entry.set_shard_id(0);
  entry.set_offset(static_cast<int64_t>(data_.size()));
  std::string bytes;
  if (t.dtype() == DT_STRING) {
    const auto strings = t.flat<tstring>();
    std::string lengths;
    for (const auto& s : strings) PutVarint(s.size(), &lengths);
    bytes = lengths;
    PutFixed32(MaskCrc32c(Crc32c(lengths)), &bytes);
    for (const auto& s : strings) bytes.append(s.data(), s.size());
  } else if (DataTypeSize(t.dtype()) > 0) {
    bytes.assign(static_cast<const char*>(t.raw_data()), t.AllocatedBytes());
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "' has type ", DataTypeString(t.dtype()), ", which cannot be saved"));
  }
  entry.set_size(static_cast<int64_t>(bytes.size()));
  entry.set_crc32c(MaskCrc32c(Crc32c(bytes)));
  data_ += bytes;
  entries_[name] = std::move(entry);
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  SL_RETURN_IF_ERROR(WriteFileAtomically(prefix_ + ".data-00000-of-00001", data_));
  std::map<std::string, std::string> table;
  BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  table[""] = header.SerializeAsString();
  for (const auto& [name, entry] : entries_) table[name] = entry.SerializeAsString();
  return WriteFileAtomically(prefix_ + ".index", BuildTable(table));
}

absl::Status MergeBundles(const std::vector<std::string>& sources, const std::string& destination) {
  std::vector<std::unique_ptr<BundleReader>> readers;
  int total = 0;
  for (const std::string& src : sources) {
    SL_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> r, BundleReader::Open(src), "MergeV2Checkpoints");
    total += r->num_shards_;
    readers.push_back(std::move(r));
  }
  std::map<std::string, std::string> table;
  BundleHeaderProto header;
  header.set_num_shards(std::max(total, 1));
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  table[""] = header.SerializeAsString();
  int base = 0;
  for (const auto& r : readers) {
    for (const auto& [name, entry] : r->entries_) {
      if (table.count(name) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("MergeV2Checkpoints: tensor '", name, "' is in more than one of the checkpoints"));
      }
      BundleEntryProto moved = entry;
      moved.set_shard_id(base + entry.shard_id());
      table[name] = moved.SerializeAsString();
    }
    base += r->num_shards_;
  }
  base = 0;
  for (const auto& r : readers) {
    for (int s = 0; s < r->num_shards_; ++s) {
      const std::string from = r->ShardPath(s);
      const std::string to = absl::StrFormat("%s.data-%05d-of-%05d", destination, base + s, std::max(total, 1));
      if (std::rename(from.c_str(), to.c_str()) != 0) {
        return absl::InternalError(absl::StrCat("MergeV2Checkpoints: cannot rename ", from, " to ", to, ": ",
                                                std::strerror(errno)));
      }
    }
    base += r->num_shards_;
  }
  SL_RETURN_IF_ERROR(WriteFileAtomically(destination + ".index", BuildTable(table)), "MergeV2Checkpoints");
  for (const auto& r : readers) {
    if (r->prefix_ != destination) std::remove((r->prefix_ + ".index").c_str());
  }
  return absl::OkStatus();
}

}  // namespace sluice
