#include "framework/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sluice {

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 40;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

absl::StatusOr<RegularFile> RegularFile::Open(const std::string& path, absl::string_view what) {
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; then fstat
  // on what was opened, so nothing can be swapped in between the check and the read.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat(what, " '", path, "' cannot be opened: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::InvalidArgumentError(msg);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(what, " '", path, "' is not a regular file"));
  }
  return RegularFile(fd, static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_nlink),
                     static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) close(fd_);
}

absl::Status RegularFile::ReadAt(uint64_t offset, uint64_t length, char* out) const {
  for (uint64_t done = 0; done < length;) {
    const ssize_t got = pread(fd_, out + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::DataLossError(absl::StrCat("could not read at offset ", offset + done, ": ",
                                              got < 0 ? std::strerror(errno) : "the file ended"));
    }
    done += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, absl::string_view what,
                                            uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = PhysicalMemoryBytes();
  absl::StatusOr<RegularFile> file = RegularFile::Open(path, what);
  if (!file.ok()) return file.status();
  if (file->size() > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(what, " '", path, "' is ", file->size(),
                                                     " bytes, more than the ", max_bytes, " allowed"));
  }
  std::string data(file->size(), '\0');
  absl::Status s = file->ReadAt(0, data.size(), data.data());
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(what, " '", path, "': ", s.message()));
  return data;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write '", tmp, "': ", std::strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat("writing '", tmp, "': ", std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    return absl::DataLossError(absl::StrCat("flushing '", tmp, "': ", std::strerror(errno)));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("renaming '", tmp, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace sluice
