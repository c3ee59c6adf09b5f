// The structure of hygiene_functions.cpp, for its test too.
#pragma once

#include <funcgen/funcgen.h>

namespace hy {
// `_` as a field.
struct P {
  fg::Tensor _;
  fg::Tensor w_;
};
}  // namespace hy
