// A shared library opened at its first use instead of linked: the CUDA backend opens cuBLAS so,
// because mapping and relocating libcublas and libcublasLt (600 MB) cost every process 64 ms at
// start, whether or not it ever runs a product on a GPU. Plain C++ (dlopen), tested on any machine.
#pragma once

#include <string>
#include <vector>

namespace fg::cuda::detail {

class SharedLibrary {
 public:
  // The first of `candidates` (sonames, searched as the dynamic loader does, or paths) that opens;
  // otherwise an fg::Error from `op` saying that `what` could not be loaded and what was tried.
  SharedLibrary(const char* op, std::string what, const std::vector<std::string>& candidates);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The function `name` as type F; an fg::Error from the constructor's op if the library lacks it.
  template <typename F>
  F function(const char* name) const {
    return reinterpret_cast<F>(symbol(name));
  }
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }  // the candidate that opened

 private:
  const char* op_;
  std::string what_, path_;
  void* handle_ = nullptr;
};

}  // namespace fg::cuda::detail
