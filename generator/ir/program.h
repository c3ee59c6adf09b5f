// What the transforms hand to the printer: functions of IR (batched or not) with the comment that
// says where they come from, and the C++ text the printer makes of one spec.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ir {

// A function that a transform made, named fn->name, to be printed as C++.
struct ProgramFunction {
  std::unique_ptr<Function> fn;
  std::string comment;     // what it is, for readers of the generated code
  bool is_static = true;   // a helper of the generated .cpp, not declared in the header
};

// A struct that a transform defines for the user (the pullback vjp returns, linearize's jvp_fn):
// its members and its call operator, a const member function whose body reads them.
struct Record {
  std::string name;
  std::string comment;             // what it is, for readers of the generated header
  std::unique_ptr<Function> call;  // named "T::operator()"
  std::vector<int> members;        // the vars of `call` that are the struct's members, in order
};

// One spec's functions: helpers in the order they must be defined (callees first), then the
// function the spec names.
struct Program {
  std::vector<ProgramFunction> helpers;
  ProgramFunction entry;
};

// The C++ text of one spec's function.
struct GeneratedFunction {
  std::string declaration;  // for the .funcgen.h
  std::string helpers;      // static functions the definition calls (bodies, batched helpers)
  std::string definition;
};

// The C++ signature of `fn` under `name` (parameters as fn spells their types; a generated
// parameter that `body` does not use is left unnamed).
std::string signature(const Function& fn, const std::string& name, const std::string* body = nullptr);
// Its declaration for the header: the user's default arguments kept on the parameters that end it.
std::string declaration(const Function& fn, const std::string& name);

// Whether `word` occurs in `text` as a whole identifier.
bool uses_name(const std::string& text, const std::string& word);

}  // namespace funcgen::ir
