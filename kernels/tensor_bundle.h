// Reading TensorFlow checkpoints ("tensor bundles"), as RestoreV2 and SavedModels need them.
//
//   SL_ASSIGN_OR_RETURN(auto reader, BundleReader::Open("/m/variables/variables"));
//   SL_ASSIGN_OR_RETURN(Tensor w, reader->Lookup("dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
//
// PREFIX.index is a LevelDB-format table (sorted keys; blocks of prefix-compressed entries with
// restart points, each block followed by a type byte and a masked CRC-32C; an index block of
// block handles; a 48-byte footer ending in the table magic). Its empty key holds a
// BundleHeaderProto, every other key a tensor's BundleEntryProto, whose bytes are at
// [offset, offset + size) of PREFIX.data-<shard>-of-<num_shards> (5 digits each) with a masked
// CRC-32C. Strings are stored as varint64 lengths, a 4-byte checksum of them, then the bytes.
//
// Every offset, length and count read from a file is checked: a damaged or hostile checkpoint
// is DATA_LOSS (or INVALID_ARGUMENT) naming the file and the tensor, never a crash.
// Unsupported: compressed blocks, sliced (partitioned) tensors, big-endian bundles
// (UNIMPLEMENTED naming what).
#ifndef SLUICE_KERNELS_TENSOR_BUNDLE_H_
#define SLUICE_KERNELS_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/tensor.h"
#include "proto/tensor_bundle.pb.h"

namespace sluice {

// Every (key, value) of a LevelDB-format table held in `file`, in file order. `what` names the
// file in errors.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(absl::string_view file,
                                                                           absl::string_view what);

class BundleReader {
 public:
  // Reads and checks PREFIX.index; NOT_FOUND when it does not exist.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  // The tensor saved under `name`, its bytes checked against their CRC. NOT_FOUND naming the
  // key and the checkpoint when absent.
  absl::StatusOr<Tensor> Lookup(const std::string& name) const;
  // Its entry (dtype, shape), or null.
  const BundleEntryProto* Entry(const std::string& name) const;
  std::vector<std::string> Names() const;
  const std::string& prefix() const { return prefix_; }

 private:
  BundleReader(std::string prefix, int num_shards, std::map<std::string, BundleEntryProto> entries)
      : prefix_(std::move(prefix)), num_shards_(num_shards), entries_(std::move(entries)) {}
  std::string ShardPath(int shard) const;
  friend absl::Status MergeBundles(const std::vector<std::string>& sources, const std::string& destination);

  const std::string prefix_;
  const int num_shards_;
  const std::map<std::string, BundleEntryProto> entries_;
};

// Writes a single-shard bundle: Add the tensors, then Finish writes PREFIX.data-00000-of-00001
// and then PREFIX.index (each through a temporary file and a rename), so a reader never sees
// an index without its data.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {}
  // INVALID_ARGUMENT for an empty or repeated name, or a type that cannot be saved.
  absl::Status Add(const std::string& name, const Tensor& t);
  absl::Status Finish();

 private:
  std::string prefix_;
  std::string data_;
  std::map<std::string, BundleEntryProto> entries_;
};

// A LevelDB-format table of `entries` (sorted by key, keys unique), as TensorFlow's
// checkpoints hold their index: uncompressed blocks, prefix-compressed keys.
std::string BuildTable(const std::map<std::string, std::string>& entries);

// Merges single- or multi-shard bundles into one at `destination`: their data shards are
// renamed into place and one index written; the sources' index files are removed.
absl::Status MergeBundles(const std::vector<std::string>& sources, const std::string& destination);

}  // namespace sluice

#endif  // SLUICE_KERNELS_TENSOR_BUNDLE_H_
