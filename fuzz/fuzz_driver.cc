// A stand-in for libFuzzer's main, for the normal (gcc) build: replays every file of the
// corpus directories it is given, then runs random mutations of them for a bounded time or
// count, through the target's custom mutator where it defines one. It finds less than
// libFuzzer (no coverage feedback) but runs each target on its corpus in the ordinary test
// suite, so a regression in a fixed finding fails `bazel test //fuzz:all` on every machine.
//
//   onnx_import_fuzzer_test fuzz/corpus/onnx_import_fuzzer --seconds=10 --runs=100000
//
// A crash leaves the input that caused it in $TEST_UNDECLARED_OUTPUTS_DIR (or the working
// directory) as crash-input, and the seed of the mutations is printed first, so a run can be
// repeated with --seed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" __attribute__((weak)) size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                                                size_t max_size, unsigned seed);

namespace {

std::mt19937_64* g_rng = nullptr;

// The input being run, for the crash handler. Written before each run.
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;
char g_crash_path[4096] = "crash-input";

// Async-signal-safe: open, write and close only.
void SaveCurrentInput(int sig) {
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current_size) {
      ssize_t n = write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  static const char kMsg[] = "fuzz_driver: the input that crashed is saved as crash-input\n";
  ssize_t ignored = write(2, kMsg, sizeof(kMsg) - 1);
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}

void RunOne(const std::vector<uint8_t>& input) {
  // A copy of exactly the input's size, so that a read past its end is an overrun that a
  // sanitizer sees, as under libFuzzer.
  std::vector<uint8_t> copy(input);
  g_current = copy.data();
  g_current_size = copy.size();
  LLVMFuzzerTestOneInput(copy.data(), copy.size());
  g_current = nullptr;
  g_current_size = 0;
}

std::vector<uint8_t> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

uint64_t Rand(uint64_t n) { return n == 0 ? 0 : (*g_rng)() % n; }

}  // namespace

// libFuzzer's byte-level mutator, which custom mutators may call; a simple version here.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) {
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
  const int steps = 1 + static_cast<int>(Rand(4));
  for (int s = 0; s < steps; ++s) {
    switch (Rand(6)) {
      case 0:  // Flip a bit.
        if (size > 0) data[Rand(size)] ^= static_cast<uint8_t>(1u << Rand(8));
        break;
      case 1:  // An interesting byte.
        if (size > 0) data[Rand(size)] = kInteresting[Rand(sizeof(kInteresting))];
        break;
      case 2:  // Insert a random byte.
        if (size < max_size) {
          size_t at = Rand(size + 1);
          std::memmove(data + at + 1, data + at, size - at);
          data[at] = static_cast<uint8_t>(Rand(256));
          ++size;
        }
        break;
      case 3:  // Erase a range.
        if (size > 1) {
          size_t at = Rand(size), n = 1 + Rand(std::min<size_t>(size - at, 16));
          std::memmove(data + at, data + at + n, size - at - n);
          size -= n;
        }
        break;
      case 4:  // Copy a range over another place.
        if (size > 1) {
          size_t from = Rand(size), to = Rand(size);
          size_t n = 1 + Rand(std::min(size - from, size - to));
          std::memmove(data + to, data + from, n);
        }
        break;
      default:  // Truncate.
        if (size > 1) size = 1 + Rand(size - 1);
        break;
    }
  }
  return size;
}

int main(int argc, char** argv) {
  double seconds = 10;
  uint64_t runs = 1000000;
  uint64_t seed = std::random_device()();
  size_t max_len = 1 << 16;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--seconds=")) {
      seconds = std::atof(v);
    } else if (const char* v = value("--runs=")) {
      runs = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--seed=")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--max_len=")) {
      max_len = std::strtoull(v, nullptr, 10);
    } else if (arg.compare(0, 2, "--") == 0) {
      std::fprintf(stderr, "usage: %s [--seconds=S] [--runs=N] [--seed=K] [--max_len=B] CORPUS...\n",
                   argv[0]);
      return 2;
    } else {
      paths.push_back(arg);
    }
  }
  std::mt19937_64 rng(seed);
  g_rng = &rng;
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-input", dir);
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SaveCurrentInput);
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);

  std::vector<std::vector<uint8_t>> corpus;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) corpus.push_back(ReadFile(f));
    } else {
      corpus.push_back(ReadFile(p));
    }
  }
  std::printf("fuzz_driver: seed %llu, %zu corpus inputs\n", static_cast<unsigned long long>(seed),
              corpus.size());
  std::fflush(stdout);
  for (const auto& input : corpus) RunOne(input);
  if (corpus.empty()) corpus.emplace_back();

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  uint64_t done = 0;
  std::vector<uint8_t> buf;
  while (done < runs && std::chrono::steady_clock::now() < deadline) {
    const std::vector<uint8_t>& base = corpus[Rand(corpus.size())];
    buf.assign(base.begin(), base.end());
    const size_t cap = std::max(max_len, buf.size());
    buf.resize(cap);
    size_t size = LLVMFuzzerCustomMutator && Rand(4) != 0
                      ? LLVMFuzzerCustomMutator(buf.data(), base.size(), cap, static_cast<unsigned>(rng()))
                      : LLVMFuzzerMutate(buf.data(), base.size(), cap);
    buf.resize(std::min(size, cap));
    RunOne(buf);
    ++done;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_driver: replayed %zu inputs, then %llu mutated runs in %.1f s, no crash\n",
              paths.empty() ? size_t{0} : corpus.size(), static_cast<unsigned long long>(done), elapsed);
  return 0;
}
