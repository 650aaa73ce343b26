#include "frontend/onnx/model_loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice {
namespace fs = std::filesystem;
namespace {

// Folder entries looked at to find a file's other hard links before giving up.
constexpr uint64_t kMaxLinkScanEntries = 100000;

// Reads a model's external tensors; one per model, so that checks of a data file shared by
// many tensors run once and the total read stays within the machine's memory.
class ExternalDataReader {
 public:
  explicit ExternalDataReader(fs::path base) : base_(std::move(base)) {}

  absl::Status Read(onnx::TensorProto* t) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t->external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" && !absl::SimpleAtoi(kv.value(), &offset)) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", t->name(), "': bad offset"));
      } else if (kv.key() == "length" && !absl::SimpleAtoi(kv.value(), &length)) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", t->name(), "': bad length"));
      }
    }
    auto refuse = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", t->name(), "': external data location '",
                                                     location, "' ", why));
    };
    if (location.empty()) return refuse("is empty");
    if (base_.empty()) return refuse("cannot be resolved: the model has no folder");
    fs::path rel(location);
    if (rel.is_absolute()) return refuse("is absolute");
    for (const auto& part : rel) {
      if (part == "..") return refuse("leaves the model's folder");
    }
    // No component may be a symbolic link: a link could point anywhere.
    fs::path walk = base_;
    for (const auto& part : rel) {
      walk /= part;
      std::error_code ec;
      if (fs::is_symlink(fs::symlink_status(walk, ec))) return refuse("is a symbolic link");
    }
    // Regular files only, opened without blocking (a FIFO would wait for a writer forever).
    absl::StatusOr<RegularFile> file = RegularFile::Open(walk.string(), "file");
    if (!file.ok()) {
      return refuse(absl::IsNotFound(file.status()) ? "does not exist"
                    : absl::StrContains(file.status().message(), "not a regular file")
                        ? "is not a regular file"
                        : file.status().message());
    }
    if (file->links() > 1) SL_RETURN_IF_ERROR(CheckLinksInside(*file, refuse));
    const int64_t size = static_cast<int64_t>(file->size());
    if (offset < 0 || offset > size) return refuse(absl::StrCat("has offset ", offset, " past its size ", size));
    if (length < 0) length = size - offset;
    int64_t end;
    if (!CheckedAdd(offset, length, &end) || end > size) {
      return refuse(absl::StrCat("is ", size, " bytes, too short for offset ", offset, " + length ", length));
    }
    // A sparse file can claim terabytes at no cost; what is read must fit in memory.
    uint64_t total = 0;
    if (!CheckedAdd(total_read_, static_cast<uint64_t>(length), &total) || total > PhysicalMemoryBytes()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tensor '", t->name(), "': the model's external data needs ", total_read_, " + ", length,
          " bytes, more than this machine's memory (", PhysicalMemoryBytes(), " bytes)"));
    }
    total_read_ = total;
    std::string data(static_cast<size_t>(length), '\0');
    absl::Status read = file->ReadAt(static_cast<uint64_t>(offset), data.size(), data.data());
    if (!read.ok()) return refuse(read.message());
    t->set_raw_data(std::move(data));
    t->clear_external_data();
    t->clear_data_location();  // As if the data had always been inline.
    return absl::OkStatus();
  }

  absl::Status ReadGraph(onnx::GraphProto* g) {
    for (auto& t : *g->mutable_initializer()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL) SL_RETURN_IF_ERROR(Read(&t));
    }
    for (auto& n : *g->mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL) {
          SL_RETURN_IF_ERROR(Read(a.mutable_t()));
        }
        if (a.has_g()) SL_RETURN_IF_ERROR(ReadGraph(a.mutable_g()));
        for (auto& sub : *a.mutable_graphs()) SL_RETURN_IF_ERROR(ReadGraph(&sub));
      }
    }
    return absl::OkStatus();
  }

 private:
  // A file with several names may be one from outside the model's folder that someone linked
  // in (a hard link, unlike a symbolic one, looks like any file): every one of its names must
  // be found inside the folder.
  template <typename Refuse>
  absl::Status CheckLinksInside(const RegularFile& file, Refuse& refuse) {
    const std::pair<uint64_t, uint64_t> id(file.device(), file.inode());
    if (linked_inside_.contains(id)) return absl::OkStatus();
    uint64_t names = 0, seen = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(base_, fs::directory_options::skip_permission_denied, ec), done;
         !ec && it != done; it.increment(ec)) {
      if (++seen > kMaxLinkScanEntries) {
        return refuse(absl::StrCat("has ", file.links(), " hard links that could not all be found in the model's folder"));
      }
      struct stat st;
      if (lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          static_cast<uint64_t>(st.st_dev) == id.first && static_cast<uint64_t>(st.st_ino) == id.second) {
        ++names;
      }
    }
    if (names < file.links()) {
      return refuse(absl::StrCat("is a hard link to a file outside the model's folder (", file.links(),
                                 " names, ", names, " inside)"));
    }
    linked_inside_.insert(id);
    return absl::OkStatus();
  }

  fs::path base_;
  uint64_t total_read_ = 0;
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> linked_inside_;
};

}  // namespace

absl::Status LoadExternalData(const std::string& base_dir, onnx::ModelProto* model) {
  ExternalDataReader reader{fs::path(base_dir)};
  return reader.ReadGraph(model->mutable_graph());
}

namespace {

absl::StatusOr<onnx::ModelProto> ParseOnnxModelFrom(google::protobuf::io::ZeroCopyInputStream* raw,
                                                    const std::string& base_dir) {
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream coded(raw);
  coded.SetTotalBytesLimit(INT32_MAX);  // Models over the default 64 MiB limit are normal.
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError("not a valid ONNX ModelProto (truncated or corrupt)");
  }
  if (!model.has_graph()) return absl::InvalidArgumentError("the ONNX model has no graph");
  SL_RETURN_IF_ERROR(LoadExternalData(base_dir, &model));
  return model;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseOnnxModel(const std::string& bytes, const std::string& base_dir) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  return ParseOnnxModelFrom(&raw, base_dir);
}

absl::StatusOr<onnx::ModelProto> LoadOnnxModel(const std::string& path) {
  // Parsed as it is read: holding the file's bytes beside the parsed model doubled a large
  // model's peak memory (ViT-B/16: 346 MB twice).
  SL_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path, "ONNX model"));
  if (file.size() > static_cast<uint64_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ONNX model '", path, "' is ", file.size(),
        " bytes; a protobuf holds at most 2 GiB, so larger models keep their weights as external data"));
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  google::protobuf::io::FileInputStream raw(file.fd());
  auto model = ParseOnnxModelFrom(&raw, dir.string());
  if (raw.GetErrno() != 0) {
    return absl::DataLossError(absl::StrCat("ONNX model '", path, "': read failed: ", std::strerror(raw.GetErrno())));
  }
  SL_RETURN_IF_ERROR(model.status(), path);
  return model;
}

}  // namespace sluice
