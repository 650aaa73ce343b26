// A TensorBoard event file: TFRecord framing of serialized Event protos, as TensorFlow's
// EventsWriter writes them, so TensorBoard reads what Sluice writes.
//
//   SL_ASSIGN_OR_RETURN(auto w, EventFileWriter::Open("/tmp/run", ".v2", 10, 120000));
//   Event e;  e.set_step(3);  ... w->Write(std::move(e));
//   w->Flush();
//
// The file is logdir/events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix> (n counts the
// writers this process opened, so two writers never share a file); its first record is the
// file_version event "brain.Event:2". A record is: length (uint64 LE), masked CRC-32C of the
// length, the bytes, masked CRC-32C of the bytes. Thread-safe.
#ifndef SLUICE_KERNELS_EVENT_FILE_WRITER_H_
#define SLUICE_KERNELS_EVENT_FILE_WRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/summary.pb.h"

namespace sluice {

class EventFileWriter {
 public:
  // Creates `logdir` with its parents and a new event file in it. `max_queue` events wait in
  // memory before a write flushes them (0: every write flushes), as do events older than
  // `flush_millis`. INVALID_ARGUMENT for an empty logdir or a suffix with '/', and the OS's
  // error naming the path when the directory or file cannot be made.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Open(const std::string& logdir,
                                                               const std::string& suffix, int max_queue,
                                                               int flush_millis);
  // Flushes and closes; errors then are lost (call Flush first to see them).
  ~EventFileWriter();

  // Queues `event` (wall_time set to now when 0) and flushes when the queue is full or old.
  absl::Status Write(Event event);
  // Writes the queued events and flushes the file to the OS.
  absl::Status Flush();
  const std::string& path() const { return path_; }

  // One TFRecord holding `data`.
  static std::string Frame(const std::string& data);

 private:
  EventFileWriter(std::string path, int fd, int max_queue, absl::Duration flush_every)
      : path_(std::move(path)), fd_(fd), max_queue_(max_queue), flush_every_(flush_every) {}
  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const int fd_;
  const int max_queue_;
  const absl::Duration flush_every_;
  absl::Mutex mu_;
  std::vector<std::string> queue_ ABSL_GUARDED_BY(mu_);  // Framed records.
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_) = absl::Now();
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_EVENT_FILE_WRITER_H_
