// The structure aliased_outputs_functions.cpp returns (shared with its test).
#pragma once

#include <funcgen/funcgen.h>

namespace ao {

struct Both {
  fg::Tensor first, second;
};

}  // namespace ao
