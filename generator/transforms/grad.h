// grad and grad_and_value: source-to-source reverse-mode AD. The function's forward pass is
// emitted in A-normal form (one named value per op), then each op's derivative rule from
// templates/derivatives.def, last op first, accumulating the gradient of every value the output
// depends on. This first version differentiates straight-line code (locals, reassignment, every op
// with a rule); control flow, in-place ops and helper calls are reported as funcgen-unsupported.
#pragma once

#include <optional>

#include "checks/reporter.h"
#include "frontend/annotations.h"
#include "ir/ir.h"
#include "transforms/vmap.h"

namespace funcgen {

// A grad or grad_and_value spec applied directly to the annotated function.
bool is_grad_spec(const AnnotatedSpec& spec);

std::optional<GeneratedFunction> emit_grad(const AnnotatedSpec& spec, const ir::Function& fn, Reporter& reporter);

}  // namespace funcgen
