// Template definitions for funcgen/runtime/vmap.h; included at its end, not on its own.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

namespace fg::vmap {

// align over a plain array of operands (what both align overloads call); not for generated code.
std::vector<Tensor> align_n(const Batched* operands, size_t n);

template <size_t N>
std::array<Tensor, N> align(const Batched (&operands)[N]) {
  std::vector<Tensor> aligned = align_n(operands, N);
  std::array<Tensor, N> out;
  for (size_t i = 0; i < N; ++i) out[i] = std::move(aligned[i]);
  return out;
}

template <typename Vector, typename>
std::vector<Tensor> align(const Vector& operands) {
  return align_n(operands.data(), operands.size());
}

}  // namespace fg::vmap
