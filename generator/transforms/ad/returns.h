// Early returns made into one return at the end, the form the normalizer differentiates:
// `if (c) return a; ...; return b;` becomes `if (c) { r = a; } else { ...; r = b; } return r;`.
// The statements after an `if` whose branches may return move into the branches that fall
// through (copied when both do), and each `return e` assigns the result variables.
#pragma once

#include <memory>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ad {

// `fn` rewritten, or null when it has no early return or one this cannot move (inside a loop, a
// switch or a nested block: the normalizer reports those where they are).
std::unique_ptr<ir::Function> single_return(const ir::Function& fn);

// A `?:` that chooses between tensors made into an if that assigns one, the form the normalizer
// differentiates: `fg::Tensor y = c ? a : b;` becomes `fg::Tensor y; if (c) y = a; else y = b;`,
// and one inside a larger expression is chosen into `chosen__` first. Only the chosen side runs,
// as in C++ (a loop's condition or step that computes tensors is a statement of its body by then:
// structured_loops); one behind `&&`/`||` is chosen inside `if (both__) both__ = b;`. One written
// to stays (the normalizer reports it). Null when there is nothing to rewrite.
std::unique_ptr<ir::Function> choices_as_ifs(const ir::Function& fn);

// Switches made into chains of ifs, the form the passes below and the normalizer take:
// `switch (k) { case 0: case 1: a; break; case 2: b; default: c; }` becomes
// `const auto selected__ = k; if (selected__ == 0 || selected__ == 1) { a } else if (selected__ == 2)
// { b c } else { c }`: a case that falls through runs the statements of the cases it falls into,
// and its return or continue is one of an if, which structured_loops and single_return move.
// A switch with a `break` inside a case's if stays (the normalizer reports it). Null when there
// is nothing to rewrite.
std::unique_ptr<ir::Function> switch_chains(const ir::Function& fn);

// Loops left early made into loops that run until their condition says so, the form the normalizer
// carries tensors through: `break` sets a flag the condition reads, `continue` a flag that skips the
// rest of the trip, and `return e` inside a loop assigns the result, sets both and is returned
// after the loop (`if (returned__) return loop_result__;`, which single_return then moves). The
// statements after a jump are guarded by `if (!broke__ && !skipped__)`; a for loop's step moves to
// the end of its body, behind the same guard, so a loop that breaks does not step. Only loops that
// compute tensors are rewritten. Null when there is nothing to rewrite.
std::unique_ptr<ir::Function> structured_loops(const ir::Function& fn);

// `fn` through the passes above, in order (choices, switches, loops, returns): what the normalizer
// differentiates. `owned` keeps the copies they rewrote.
const ir::Function& structured_control_flow(const ir::Function& fn, std::vector<std::unique_ptr<ir::Function>>& owned);

// Whether `s` or a statement in it computes or assigns tensors (rather than scalar bookkeeping).
bool computes_tensors(const ir::Stmt& s, const ir::Function& fn);

}  // namespace funcgen::ad
