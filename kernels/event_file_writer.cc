#include "kernels/event_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/crc32c.h"
#include "framework/status.h"

namespace sluice {
namespace {

absl::Status OsError(absl::string_view what, const std::string& path, int err) {
  const std::string text = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(text);
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(text);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::InternalError(text);
  }
}

// mkdir -p: each missing component made in turn; an existing non-directory is an error.
absl::Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) return OsError("cannot make directory", prefix, errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return OsError("cannot make directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat("'", dir, "' is not a directory"));
  return absl::OkStatus();
}

void AppendLittleEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string EventFileWriter::Frame(const std::string& data) {
  std::string header;
  AppendLittleEndian(data.size(), 8, &header);
  std::string record = header;
  AppendLittleEndian(MaskCrc32c(Crc32c(header)), 4, &record);
  record += data;
  AppendLittleEndian(MaskCrc32c(Crc32c(data)), 4, &record);
  return record;
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Open(const std::string& logdir,
                                                                      const std::string& suffix, int max_queue,
                                                                      int flush_millis) {
  if (logdir.empty()) return absl::InvalidArgumentError("the summary writer's logdir is an empty string");
  if (suffix.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("filename_suffix '", suffix, "' must not contain '/'"));
  }
  SL_RETURN_IF_ERROR(MakeDirs(logdir));
  static std::atomic<int64_t> opened{0};
  char host[256] = "localhost";
  if (::gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "localhost");
  host[sizeof(host) - 1] = '\0';
  const std::string path =
      absl::StrFormat("%s/events.out.tfevents.%010d.%s.%d.%d%s", logdir, absl::ToUnixSeconds(absl::Now()), host,
                      static_cast<int>(::getpid()), opened.fetch_add(1), suffix);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return OsError("cannot create event file", path, errno);
  std::unique_ptr<EventFileWriter> writer(
      new EventFileWriter(path, fd, std::max(max_queue, 0), absl::Milliseconds(std::max(flush_millis, 0))));
  Event version;
  version.set_wall_time(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  version.set_file_version("brain.Event:2");
  SL_RETURN_IF_ERROR(writer->Write(std::move(version)));
  SL_RETURN_IF_ERROR(writer->Flush());
  return writer;
}

EventFileWriter::~EventFileWriter() {
  {
    absl::MutexLock lock(&mu_);
    (void)FlushLocked();
  }
  ::close(fd_);
}

absl::Status EventFileWriter::Write(Event event) {
  if (event.wall_time() == 0) event.set_wall_time(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  std::string bytes;
  if (!event.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("a summary event is too large to serialize (over 2 GiB)");
  }
  absl::MutexLock lock(&mu_);
  queue_.push_back(Frame(bytes));
  if (static_cast<int>(queue_.size()) > max_queue_ || absl::Now() - last_flush_ >= flush_every_) return FlushLocked();
  return absl::OkStatus();
}

absl::Status EventFileWriter::Flush() {
  absl::MutexLock lock(&mu_);
  return FlushLocked();
}

absl::Status EventFileWriter::FlushLocked() {
  last_flush_ = absl::Now();
  for (size_t i = 0; i < queue_.size(); ++i) {
    const std::string& record = queue_[i];
    size_t done = 0;
    while (done < record.size()) {
      const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        queue_.erase(queue_.begin(), queue_.begin() + i);  // What was written stays written.
        return OsError("cannot write event file", path_, err);
      }
      done += static_cast<size_t>(n);
    }
  }
  queue_.clear();
  return absl::OkStatus();
}

}  // namespace sluice
