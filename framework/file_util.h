// Reading files named by users or by models without blocking on what is not a file.
//
//   SL_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path, "ONNX model"));
//
// A FIFO, a device or a directory named as a model, an input or a credential is refused at
// once: opening a FIFO for reading would wait for a writer forever.
#ifndef SLUICE_FRAMEWORK_FILE_UTIL_H_
#define SLUICE_FRAMEWORK_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

// The machine's physical memory in bytes: no single file read is allowed to be larger.
uint64_t PhysicalMemoryBytes();

// An open regular file (closed on destruction), or an error naming `what` and `path`:
// NOT_FOUND when it does not exist, INVALID_ARGUMENT when it is not a regular file.
class RegularFile {
 public:
  static absl::StatusOr<RegularFile> Open(const std::string& path, absl::string_view what);
  RegularFile(RegularFile&& other) noexcept
      : fd_(other.fd_), size_(other.size_), links_(other.links_), device_(other.device_), inode_(other.inode_) {
    other.fd_ = -1;
  }
  RegularFile& operator=(RegularFile&&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Names the file has (more than one: it is hard-linked elsewhere too).
  uint64_t links() const { return links_; }
  // Which file it is: another name with the same device and inode is a hard link to it.
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }
  // Reads [offset, offset + length) whole, retrying short reads.
  absl::Status ReadAt(uint64_t offset, uint64_t length, char* out) const;

 private:
  RegularFile(int fd, uint64_t size, uint64_t links, uint64_t device, uint64_t inode)
      : fd_(fd), size_(size), links_(links), device_(device), inode_(inode) {}
  int fd_;
  uint64_t size_;
  uint64_t links_;
  uint64_t device_;
  uint64_t inode_;
};

// The whole file. RESOURCE_EXHAUSTED when it is larger than `max_bytes` (by default the
// machine's memory).
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, absl::string_view what,
                                            uint64_t max_bytes = 0);

// Writes `bytes` to `path` whole or not at all: through `path`.tmp, flushed to disk, renamed.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_FILE_UTIL_H_
