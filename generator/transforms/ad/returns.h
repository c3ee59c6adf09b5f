// Early returns made into one return at the end, the form the normalizer differentiates:
// `if (c) return a; ...; return b;` becomes `if (c) { r = a; } else { ...; r = b; } return r;`.
// The statements after an `if` whose branches may return move into the branches that fall
// through (copied when both do), and each `return e` assigns the result variables.
#pragma once

#include <memory>

#include "ir/ir.h"

namespace funcgen::ad {

// `fn` rewritten, or null when it has no early return or one this cannot move (inside a loop, a
// switch or a nested block: the normalizer reports those where they are).
std::unique_ptr<ir::Function> single_return(const ir::Function& fn);

}  // namespace funcgen::ad
