// A textual dump of IR for tests and debugging: one line per statement, nested bodies indented two
// spaces, each line the statement's kind, the variables it defines and its expressions with their
// ops. Unlike the printer's C++ it shows what the IR holds (a call's form, an Opaque's tape op
// and the locals it reads), so a test can say which construct the lowering or a pass made.
// Deterministic: it prints nothing but the IR (no addresses, no source locations).
#pragma once

#include <string>

#include "ir/ir.h"

namespace funcgen::ir {

// `function name(param: type, ...) -> type`, then the body's statements, one a line, each its kind
// and what it holds: `decl y: tensor = e`, `assign y += e`, `eval e`, `if e` (`else`), `for cond;
// step e` (its init statements as `init ...`), `while e`, `switch e`, `case 0` / `default`,
// `block label` (a case and its statement), `return e`, `opaque 'text' reads(a) writes(b)`.
std::string dump(const Function& fn);
// The statements alone, at `indent` levels.
std::string dump(const Function& fn, const std::vector<StmtPtr>& body, int indent = 0);
// One expression of `fn`:
//   x                      a variable (VarRef)
//   '1.0'                  Opaque C++ text, with ` reads(a, b)` / ` writes(i)` where it has any;
//                          a tape op (ir/build.h) is `opaque<list_push>(v, x)` (its operands)
//   add(x, y)              a call: Free ops as their name, others with their form:
//                          method:sum(x), operator:mul(x, y), user:helper(x), external:f(x),
//                          vmapped:label(x); a lambda's call user:lambda[name](captures..., args...)
//   (a < b), (!a)          Binary, Unary;   (c ? a : b)  Conditional
//   {a, b}                 List;   tuple(a, b)  Tuple;   get<1>(t)  Get;   cast<double>(e)  Cast
//   lambda[&]{ s1; s2 }    Lambda (`()` after it where invoked);   member(e).value  Member
std::string dump(const Function& fn, const Expr& e);

}  // namespace funcgen::ir
