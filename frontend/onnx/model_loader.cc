#include "frontend/onnx/model_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice {
namespace fs = std::filesystem;
namespace {

absl::Status ReadExternal(const fs::path& base, onnx::TensorProto* t) {
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
  if (base.empty()) return refuse("cannot be resolved: the model has no folder");
  fs::path rel(location);
  if (rel.is_absolute()) return refuse("is absolute");
  for (const auto& part : rel) {
    if (part == "..") return refuse("leaves the model's folder");
  }
  // No component may be a symbolic link: a link could point anywhere.
  fs::path walk = base;
  for (const auto& part : rel) {
    walk /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walk, ec))) return refuse("is a symbolic link");
  }
  // Regular files only: O_NONBLOCK so that opening a FIFO returns at once (it would block
  // until a writer came), then fstat on what was opened, so nothing changes in between.
  const int fd = open(walk.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return refuse(errno == ENOENT ? std::string("does not exist")
                                  : absl::StrCat("cannot be opened: ", std::strerror(errno)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) return refuse(absl::StrCat("cannot be read: ", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return refuse("is not a regular file");
  const int64_t size = st.st_size;
  if (offset < 0 || offset > size) return refuse(absl::StrCat("has offset ", offset, " past its size ", size));
  if (length < 0) length = size - offset;
  int64_t end;
  if (!CheckedAdd(offset, length, &end) || end > size) {
    return refuse(absl::StrCat("is ", size, " bytes, too short for offset ", offset, " + length ", length));
  }
  std::string data(static_cast<size_t>(length), '\0');
  for (int64_t done = 0; done < length;) {
    const ssize_t got = pread(fd, data.data() + done, static_cast<size_t>(length - done), offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return refuse(absl::StrCat("could not be read at offset ", offset + done));
    done += got;
  }
  t->set_raw_data(std::move(data));
  t->clear_external_data();
  t->clear_data_location();  // As if the data had always been inline.
  return absl::OkStatus();
}

absl::Status LoadGraphExternal(const fs::path& base, onnx::GraphProto* g) {
  for (auto& t : *g->mutable_initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) SL_RETURN_IF_ERROR(ReadExternal(base, &t));
  }
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL) {
        SL_RETURN_IF_ERROR(ReadExternal(base, a.mutable_t()));
      }
      if (a.has_g()) SL_RETURN_IF_ERROR(LoadGraphExternal(base, a.mutable_g()));
      for (auto& sub : *a.mutable_graphs()) SL_RETURN_IF_ERROR(LoadGraphExternal(base, &sub));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadExternalData(const std::string& base_dir, onnx::ModelProto* model) {
  return LoadGraphExternal(base_dir, model->mutable_graph());
}

absl::StatusOr<onnx::ModelProto> ParseOnnxModel(const std::string& bytes, const std::string& base_dir) {
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT32_MAX);  // Models over the default 64 MiB limit are normal.
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError("not a valid ONNX ModelProto (truncated or corrupt)");
  }
  if (!model.has_graph()) return absl::InvalidArgumentError("the ONNX model has no graph");
  SL_RETURN_IF_ERROR(LoadExternalData(base_dir, &model));
  return model;
}

absl::StatusOr<onnx::ModelProto> LoadOnnxModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ONNX model '", path, "'"));
  std::stringstream buf;
  buf << in.rdbuf();
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  auto model = ParseOnnxModel(buf.str(), dir.string());
  SL_RETURN_IF_ERROR(model.status(), path);
  return model;
}

}  // namespace sluice
