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
  std::vector<std::string> header_lines;  // before the header's namespaces: includes, forward declarations
};

struct OutputFiles {
  std::string header_path, header;          // <stem>.funcgen.h
  std::string source_path, source;          // <stem>.funcgen.cpp
};

// `source` is the annotated file; the generated .cpp includes it (so that generated code may call
// its static helpers) and is compiled instead of it. It includes it by a path relative to
// `output_dir` (absolute, like `source`), so that the output does not depend on where the tree is.
// Code generated with --no-optimize says so in its first line (a reader comparing the two sees
// which is which, and GCC's #pragma once does not take one header for the other).
OutputFiles assemble(const std::string& source, const std::string& output_dir, const std::vector<OutputFunction>& functions,
                     bool optimized = true);

// clang-format with funcgen's style (LLVM, 100 columns); the input when formatting fails.
std::string format_cpp(const std::string& code, const std::string& file_name);

// Replaces files together or not at all. stage() writes each content to a temporary file beside
// its target; commit() renames them all over their targets once every one was written. A failed
// stage or commit, or a transaction dropped without commit, removes the temporaries and leaves the
// targets as they were, so a full disk never leaves a new header beside an old source. A target
// whose content is already the same is left untouched (no needless rebuilds). A target that exists
// and is not a regular file (/dev/stdout, a FIFO) is written in place at commit, before any rename.
class OutputTransaction {
 public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  ~OutputTransaction();

  // False, with `error` set ("cannot write 'path': reason"), when the content cannot be staged.
  bool stage(const std::string& path, const std::string& content, std::string& error);
  bool commit(std::string& error);

 private:
  struct Staged {
    std::string path;
    std::string temp;     // empty: written in place at commit
    std::string content;  // only for a target written in place
  };
  void discard();
  std::vector<Staged> staged_;
};

// One file through an OutputTransaction: readers never see a partial file.
bool write_atomically(const std::string& path, const std::string& content, std::string& error);

// Make-style dependency file: `target: dep dep ...` with spaces escaped.
std::string depfile_text(const std::vector<std::string>& targets, const std::vector<std::string>& deps);

}  // namespace funcgen
