// Every difference between Clang versions that the generator depends on lives here, so that a
// new LLVM release touches one file. Built and tested against Clang 16 (Debian 12's llvm-16).
#pragma once

#include <clang/Basic/Version.h>

#if CLANG_VERSION_MAJOR < 16
#error "funcgen needs Clang 16 or newer (Debian: libclang-16-dev)"
#endif

#include <clang/AST/Attr.h>
#include <llvm/ADT/StringRef.h>

namespace funcgen::compat {

// The text of a [[clang::annotate("...")]] attribute.
inline llvm::StringRef annotation_text(const clang::AnnotateAttr& attr) { return attr.getAnnotation(); }

inline bool starts_with(llvm::StringRef s, llvm::StringRef prefix) {
#if CLANG_VERSION_MAJOR >= 18
  return s.starts_with(prefix);
#else
  return s.startswith(prefix);
#endif
}

}  // namespace funcgen::compat
