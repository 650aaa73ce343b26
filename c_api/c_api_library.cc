// The op registry through the C API: TF_GetAllOpList, and custom-op libraries loaded with
// dlopen so that their initializers run and register ops and kernels through ops.h and
// kernels.h (c_api_ops.cc, c_api_kernels.cc).
#include <dlfcn.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"
#include "proto/kernel_def.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {
namespace {

// What each file loaded so far registered, by the name it was loaded as: dlopen of a loaded
// file runs no initializers again, so a second load answers from here.
struct LoadedLibraries {
  absl::Mutex mu;  // Also keeps loads apart, so each sees only its own new ops.
  absl::flat_hash_map<std::string, std::pair<void*, std::string>> by_name ABSL_GUARDED_BY(mu);
};

LoadedLibraries& Loaded() {
  static LoadedLibraries* loaded = new LoadedLibraries;
  return *loaded;
}

// The registration failures of the library this thread is loading; null when not loading.
thread_local std::vector<absl::Status>* load_failures = nullptr;

// A library's undefined TF_* symbols bind to libraries in the global scope. Adds the library
// holding this code to it (once), so a custom-op library binds to the copy of the C API that
// loads it also when the program reached that copy through dlopen (ctypes, plugins).
void ExposeThisLibrary() {
  static const bool exposed = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&TF_LoadLibrary), &info) != 0 &&
        info.dli_fname != nullptr) {
      // The handle is kept: the library stays global for the life of the process.
      return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) != nullptr;
    }
    return false;
  }();
  (void)exposed;
}

absl::StatusOr<TF_Library*> LoadLibrary(const char* filename) {
  if (filename == nullptr) return NullArgument("TF_LoadLibrary", "library_filename");
  LoadedLibraries& loaded = Loaded();
  absl::MutexLock lock(&loaded.mu);
  auto it = loaded.by_name.find(filename);
  if (it == loaded.by_name.end()) {
    std::vector<std::string> before = OpRegistry::Global()->ListOpNames();
    ExposeThisLibrary();
    std::vector<absl::Status> failures;
    load_failures = &failures;
    dlerror();  // Clears an older message.
    void* handle = dlopen(filename, RTLD_NOW | RTLD_LOCAL);
    load_failures = nullptr;
    if (handle == nullptr) {
      const char* why = dlerror();
      return absl::NotFoundError(absl::StrCat("TF_LoadLibrary: cannot load '", filename,
                                              "': ", why != nullptr ? why : "unknown error"));
    }
    if (!failures.empty()) {
      // Its initializers ran and cannot be undone: what did register stays, as in TensorFlow.
      std::string messages;
      for (const absl::Status& f : failures) {
        absl::StrAppend(&messages, messages.empty() ? "" : "; ", f.message());
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "TF_LoadLibrary: '", filename, "' loaded, but ", failures.size(),
          failures.size() == 1 ? " registration" : " registrations", " failed: ", messages));
    }
    std::vector<std::string> after = OpRegistry::Global()->ListOpNames();  // Both sorted.
    std::vector<std::string> added;
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(added));
    OpList ops;
    for (const std::string& name : added) {
      auto op_def = OpRegistry::Global()->LookUpOpDef(name);
      if (op_def.ok()) *ops.add_op() = **op_def;
    }
    it = loaded.by_name.emplace(filename, std::make_pair(handle, ops.SerializeAsString())).first;
  }
  auto* lib = new TF_Library;
  lib->handle = it->second.first;
  lib->op_list = it->second.second;
  return lib;
}

}  // namespace

void NoteRegistrationFailure(const absl::Status& s) {
  if (load_failures != nullptr && !s.ok()) load_failures->push_back(s);
}

}  // namespace sluice

extern "C" {

TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status) {
  auto lib = sluice::LoadLibrary(library_filename);
  sluice::SetStatus(status, lib.status());
  return lib.ok() ? *lib : nullptr;
}

TF_Buffer TF_GetOpList(TF_Library* lib_handle) {
  if (lib_handle == nullptr) return TF_Buffer{nullptr, 0, nullptr};
  return TF_Buffer{lib_handle->op_list.data(), lib_handle->op_list.size(), nullptr};
}

void TF_DeleteLibraryHandle(TF_Library* lib_handle) { delete lib_handle; }

TF_Buffer* TF_GetAllOpList(void) {
  sluice::OpList ops;
  sluice::OpRegistry::Global()->Export(&ops);
  TF_Buffer* buffer = TF_NewBuffer();
  // Only running out of memory fails here; the buffer then stays empty.
  sluice::MessageToBuffer(ops, buffer).IgnoreError();
  return buffer;
}

}  // extern "C"

extern "C" {

TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status) {
  sluice::KernelList kernels;
  for (const sluice::KernelRegistration* k : sluice::KernelRegistry::Global()->All()) {
    *kernels.add_kernel() = k->def;
  }
  TF_Buffer* buffer = TF_NewBuffer();
  sluice::SetStatus(status, sluice::MessageToBuffer(kernels, buffer));
  return buffer;
}

TF_Buffer* TF_GetRegisteredKernelsForOp(const char* name, TF_Status* status) {
  TF_Buffer* buffer = TF_NewBuffer();
  if (name == nullptr) {
    sluice::SetStatus(status, sluice::NullArgument("TF_GetRegisteredKernelsForOp", "name"));
    return buffer;
  }
  sluice::KernelList kernels;
  for (const sluice::KernelRegistration* k : sluice::KernelRegistry::Global()->ForOp(name)) {
    *kernels.add_kernel() = k->def;
  }
  sluice::SetStatus(status, sluice::MessageToBuffer(kernels, buffer));
  return buffer;
}

}  // extern "C"
