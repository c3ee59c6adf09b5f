#include "cuda/shared_library.h"

#include <dlfcn.h>

#include "funcgen/runtime/error.h"

namespace fg::cuda::detail {

SharedLibrary::SharedLibrary(const char* op, std::string what, const std::vector<std::string>& candidates)
    : op_(op), what_(std::move(what)) {
  std::string tried;
  for (const std::string& c : candidates) {
    // RTLD_LOCAL: the library's symbols stay out of the process's namespace (only ours call it).
    handle_ = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = c;
      return;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : c + ": not found");
  }
  fg::detail::fail(op_, what_, " could not be loaded (", tried.empty() ? "no candidate" : tried,
                   "); put its directory on LD_LIBRARY_PATH");
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const {
  (void)dlerror();
  void* s = dlsym(handle_, name);
  if (s == nullptr)
    fg::detail::fail(op_, what_, " (", path_, ") has no function ", name,
                     ": another version than the one built against?");
  return s;
}

}  // namespace fg::cuda::detail
