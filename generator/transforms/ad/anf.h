// The form that AD works on: a function in A-normal form, one tensor op per statement, each tensor
// value defined once (reassignments and functionalized in-place ops make new versions), user
// helpers inlined, and one return at the end. The result reads like the input (values keep the
// names of the locals they came from) and is an ordinary IR function: it can be printed, vmapped
// or differentiated.
#pragma once

#include <memory>

#include "diag/reporter.h"
#include "ir/module.h"
#include "ir/ir.h"
#include "ops/derivative_rules.h"

namespace funcgen::ad {

// nullptr when `fn` has a construct AD cannot handle (reported as funcgen-unsupported at it).
// `what`: the transform asking, for messages ("grad").
// Calls of functions with a custom rule (`resolver`) stay calls, for AD to apply the rule.
std::unique_ptr<ir::Function> normalize(const ir::Function& fn, const ir::Module& module, Reporter& reporter,
                                        const std::string& what, const OpResolver& resolver);

// The returned atoms of a normalized function (one VarRef per tensor it returns, in order).
std::vector<const ir::Expr*> returned(const ir::Function& fn);

}  // namespace funcgen::ad
