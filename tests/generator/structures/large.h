// The structure of large_functions.cpp, for its test too.
#pragma once

#include <funcgen/funcgen.h>

#include <array>

namespace large {
using Weights = std::array<fg::Tensor, 1000>;
}  // namespace large
