// Common subexpressions and dead code, over a function about to be vmapped or printed. Derivative
// code repeats the primal's work (forward mode over reverse computes sin(x) four times in an hvp)
// and keeps values no output needs (the primal jacobian inside a hessian's jvp); a tracing JIT
// drops both, and so does this pass. It runs after the limitation checks, on a copy.
#pragma once

#include <memory>

#include "ir/ir.h"

namespace funcgen {

// `fn` without repeated pure subexpressions (a later one reads the local that holds the first) and
// without the locals that transforms made and nothing reads; nullptr when nothing changes or fn
// is not straight-line code of pure ops (in-place ops, helpers, control flow: left as it is).
std::unique_ptr<ir::Function> simplify(const ir::Function& fn);

}  // namespace funcgen
