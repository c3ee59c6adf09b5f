// Puts the generated functions of one source file together into its two output files, formats
// them with clang-format's library, and writes them atomically.
#pragma once

#include <string>
#include <vector>

namespace funcgen {

// Generated code for one namespace-qualified function.
struct OutputFunction {
  std::vector<std::string> namespaces;  // enclosing namespaces, outermost first ("" = anonymous)
  std::string declaration;
  std::string helpers;
  std::string definition;
};

struct OutputFiles {
  std::string header_path, header;          // <stem>.funcgen.h
  std::string source_path, source;          // <stem>.funcgen.cpp
};

// `source` is the annotated file; the generated .cpp includes it (so that generated code may call
// its static helpers) and is compiled instead of it.
OutputFiles assemble(const std::string& source, const std::string& output_dir, const std::vector<OutputFunction>& functions);

// clang-format with funcgen's style (LLVM, 100 columns); the input when formatting fails.
std::string format_cpp(const std::string& code, const std::string& file_name);

// Writes through a temporary file in the same directory and a rename, so that readers never see a
// partial file; leaves the file untouched when the content is the same (no needless rebuilds).
bool write_atomically(const std::string& path, const std::string& content, std::string& error);

// Make-style dependency file: `target: dep dep ...` with spaces escaped.
std::string depfile_text(const std::vector<std::string>& targets, const std::vector<std::string>& deps);

}  // namespace funcgen
