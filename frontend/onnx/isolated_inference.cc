#include "frontend/onnx/isolated_inference.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sluice {
namespace {

// The child's first byte says how `infer` ended; the rest is the model or the message.
constexpr char kInferred = 'K';
constexpr char kThrew = 'E';
constexpr char kOutOfMemory = 'M';

// The child's address space may grow by this much beyond what it shares with the parent,
// plus a few times the model's size. ONNX's inference of a real model needs a fraction of
// it; a crafted one can make the library build unbounded shapes (a ConstantOfShape whose
// shape input declares 2^31 elements gets an output of rank 2^31, about 100 GB of dims).
constexpr uint64_t kChildMemoryBase = uint64_t{1} << 30;
constexpr uint64_t kChildMemoryPerModelByte = 4;

// The process's virtual size from /proc/self/statm (its first field, in pages); 0 if unknown.
uint64_t VirtualBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const int read = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  return read == 1 ? pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

void WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void RunChild(int fd, onnx::ModelProto* model,
                           const std::function<void(onnx::ModelProto&)>& infer) {
  std::string out;
  try {
    infer(*model);
    // The parent has the initializers: only what inference may have changed goes back.
    model->mutable_graph()->clear_initializer();
    model->mutable_graph()->clear_sparse_initializer();
    out.push_back(kInferred);
    out += model->SerializeAsString();
  } catch (const std::bad_alloc&) {
    out = std::string(1, kOutOfMemory);
  } catch (const std::exception& e) {
    out = std::string(1, kThrew) + e.what();
  } catch (...) {
    out = std::string(1, kThrew) + "unknown exception";
  }
  WriteAll(fd, out);
  _exit(0);  // No atexit handlers or destructors: they belong to the parent.
}

// Copies what inference adds (value_info, the types of inputs and outputs), graph by graph,
// into `to`, in place: callers may hold pointers into the model. False when the structures
// differ (inference adds no node, input, output or attribute).
bool MergeInferred(const onnx::GraphProto& from, onnx::GraphProto* to) {
  if (from.node_size() != to->node_size() || from.output_size() != to->output_size() ||
      from.input_size() != to->input_size()) {
    return false;
  }
  *to->mutable_value_info() = from.value_info();
  for (int i = 0; i < from.input_size(); ++i) *to->mutable_input(i)->mutable_type() = from.input(i).type();
  for (int i = 0; i < from.output_size(); ++i) *to->mutable_output(i)->mutable_type() = from.output(i).type();
  for (int n = 0; n < from.node_size(); ++n) {
    const onnx::NodeProto& src = from.node(n);
    onnx::NodeProto* dst = to->mutable_node(n);
    if (src.attribute_size() != dst->attribute_size()) return false;
    for (int a = 0; a < src.attribute_size(); ++a) {
      const onnx::AttributeProto& sa = src.attribute(a);
      onnx::AttributeProto* da = dst->mutable_attribute(a);
      if (sa.has_g() != da->has_g() || sa.graphs_size() != da->graphs_size()) return false;
      if (sa.has_g() && !MergeInferred(sa.g(), da->mutable_g())) return false;
      for (int k = 0; k < sa.graphs_size(); ++k) {
        if (!MergeInferred(sa.graphs(k), da->mutable_graphs(k))) return false;
      }
    }
  }
  return true;
}

}  // namespace

}  // namespace sluice

// Sanitizer runtimes define this; elsewhere the weak reference stays null.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace sluice {

absl::Status InferShapesIsolated(onnx::ModelProto* model, absl::string_view what,
                                 const std::function<void(onnx::ModelProto&)>& infer,
                                 absl::Duration timeout) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat(what, ": no pipe for the inference process: ", std::strerror(errno)));
  }
  const uint64_t memory_budget =
      kChildMemoryBase + kChildMemoryPerModelByte * static_cast<uint64_t>(model->ByteSizeLong());
  // Read here, not in the child: the child of a threaded process should not open files.
  const uint64_t shared = VirtualBytes();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": cannot start the inference process: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    // The child dies of its own faults quietly, and the parent names the signal: no core
    // file, and none of the parent's fault handlers runs here (a fuzzer's crash reporter
    // wrote each contained crash as a finding; an interpreter's would print a traceback).
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
    // Likewise a sanitizer's report (an allocation it cannot serve, say) ends the child only.
    if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
    // Bounded memory: past the budget, allocations fail (std::bad_alloc) instead of the
    // library taking the machine's memory.
    if (shared > 0) {
      const struct rlimit as = {shared + memory_budget, shared + memory_budget};
      setrlimit(RLIMIT_AS, &as);
    }
    RunChild(fds[1], model, infer);
  }
  close(fds[1]);
  std::string bytes;
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  char buf[1 << 16];
  for (;;) {
    const int wait_ms = static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
    pollfd p = {fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or died).
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(what, ": ONNX shape inference did not finish within ", absl::FormatDuration(timeout)));
  }
  if (waited == pid && WIFSIGNALED(status)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the ONNX library crashed inferring this model's shapes (signal ", WTERMSIG(status), ", ",
        strsignal(WTERMSIG(status)), "); the model is malformed"));
  }
  if (bytes.empty()) {  // Died without a signal: a sanitizer's report, say.
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the ONNX library crashed inferring this model's shapes (exit status ",
        waited == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1, "); the model is malformed"));
  }
  if (bytes[0] == kThrew) return absl::InvalidArgumentError(absl::StrCat(what, ": ", bytes.substr(1)));
  if (bytes[0] == kOutOfMemory) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": it needed more than its ", memory_budget >> 20,
        " MiB of memory; the model declares shapes too large to infer (a shape input of huge "
        "length makes an output of that rank, say)"));
  }
  onnx::ModelProto inferred;
  if (bytes[0] != kInferred || !inferred.ParseFromArray(bytes.data() + 1, static_cast<int>(bytes.size() - 1))) {
    return absl::InternalError(absl::StrCat(what, ": the inference process's answer is garbled"));
  }
  if (!MergeInferred(inferred.graph(), model->mutable_graph())) {
    return absl::InternalError(absl::StrCat(what, ": the inferred model has another structure"));
  }
  return absl::OkStatus();
}

}  // namespace sluice
