// The one printer of generated code: any function of funcgen's IR (the user's own, what AD makes,
// the batched IR that vmap makes) as C++ text, one statement per line. The output is formatted
// by clang-format afterwards (emitter/output.h), so the printer cares about meaning, not layout.
#pragma once

#include <string>

#include "ir/ir.h"
#include "ir/program.h"

namespace funcgen::emitter {

// The statements of `fn`'s body, indented one level.
std::string print_body(const ir::Function& fn);

// `// comment`, then `[static] signature { body }`.
std::string print_function(const ir::ProgramFunction& f);

// The struct's definition, for the header, and its operator()'s, for the .cpp.
std::string print_record(const ir::Record& r);
std::string print_record_call(const ir::Record& r);

// One spec's functions: the helpers, the entry's definition and its declaration.
ir::GeneratedFunction print_program(const ir::Program& program);

}  // namespace funcgen::emitter
