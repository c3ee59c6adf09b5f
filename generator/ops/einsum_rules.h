// The derivative rules of einsum, derived from its equation when funcgen generates code: the
// gradient of each operand is itself an einsum (of the output's gradient with the other operands),
// so derivative code stays plain fg ops that can be vmapped and differentiated again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace funcgen::ad {

// The gradient of operand `k` of einsum(equation, operands): einsum(equation, {grad, the other
// operands in order}), then unsqueeze at each of `unsqueeze` (in order) for the operand's indices
// that appear nowhere else (the forward pass summed over them, so the gradient is the same along
// them), then expand to the operand's sizes. An operand with '...' may have been broadcast
// (`broadcast`): its gradient is summed back to its sizes; where the gradient lacks some of the
// operand's dims (its '...' dims summed away by the forward pass, an index of its own), it is
// first broadcast against the operand (`reshape`). An operand that repeats an index (a
// diagonal, 'ii->i') gets its gradient on that diagonal: each repetition is a new index tied to the
// first by an identity operand, fg::eye(size of the operand's dim p), one per p of `identities`
// (operands after the other operands).
struct EinsumGradient {
  std::string equation;
  std::vector<int64_t> unsqueeze;
  bool broadcast = false;
  bool reshape = false;
  std::vector<int64_t> identities;
};

// `literal`: the equation as C++ text (a string literal). Returns "" or why it cannot be derived.
std::string einsum_gradient(const std::string& literal, size_t k, size_t noperands, EinsumGradient& out);

// Checks the equation (as einsum_gradient does) for forward mode, whose tangent is the sum over
// the operands of einsum(equation, operands with that one replaced by its tangent).
std::string einsum_check(const std::string& literal, size_t noperands);

}  // namespace funcgen::ad
