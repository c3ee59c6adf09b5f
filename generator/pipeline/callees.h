// Fills an ir::Module with the helpers a function calls, lowered before any pass runs.
#pragma once

#include "frontend/lower.h"
#include "ir/ir.h"
#include "ir/module.h"

namespace funcgen {

// Lowers the user's helpers that `fn` calls, directly, through other helpers or inside the
// functions it vmaps, into `module` (the failed ones as nullptr: their lowering reported them).
// They are met in the order the batching analysis of `fn` meets them, which lowered them when the
// passes asked for each: the errors of a helper that cannot be lowered come where they came then.
// A helper met again up the call chain (recursion) is not looked into, as that analysis does not.
void lower_callees(const ir::Function& fn, Lowering& lowering, ir::Module& module);

}  // namespace funcgen
