// vmap: the batched version of a lowered function, as IR. Batched values keep one batch dim per
// vmap level in front (fg/runtime/vmap.h's layout); each op becomes the call its batching rule
// (templates/batching_rules.def) makes over the whole batch. The printer (emitter/) prints it.
#pragma once

#include <string>
#include <vector>

#include "analyses/batching.h"
#include "analyses/levels.h"
#include "diag/reporter.h"
#include "ir/program.h"

namespace funcgen {

using ir::GeneratedFunction;

// The vmap of `fn` named `name`: its helpers (the batched body, batched user helpers, vmapped
// calls) and the entry that moves the arguments' batch dims in front, calls the body and moves the
// outputs' batch dims to out_dims. The analysis must be of `fn` with the levels' in_dims. `what`
// names the function in the generated comments (default: fn's name).
ir::Program emit_vmap(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
                      const BatchingAnalysis& analysis, Reporter& reporter, const std::string& what = "");

// `fn` unbatched, named `name` (the functions that transforms other than vmap make): its vmapped
// calls become batched helpers. `analysis` is of `fn` with no batched parameters.
ir::Program emit_plain(const ir::Function& fn, const std::string& name, const BatchingAnalysis& analysis,
                       Reporter& reporter);

}  // namespace funcgen
